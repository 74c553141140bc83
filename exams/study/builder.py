"""The practice builder's draw: seats per chosen domain by weight, passed on when short, and the questions."""

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from exams.room.draw import DomainQuota, one_per_group, quotas


@dataclass(frozen=True)
class Candidate:
    """A question that matches the learner's choices."""

    question_id: int
    domain_id: int
    group: str = ""


def distinct(candidates: Sequence[Candidate]) -> int:
    """How many of the candidates one draw can hold: one per exclusion group, every ungrouped one."""
    return sum(1 for c in candidates if not c.group) + len({c.group for c in candidates if c.group})


def seats(*, domains: Sequence[DomainQuota], available: Mapping[int, int], total: int) -> dict[int, int]:
    """Seats per domain: the weights' largest-remainder quotas of `total`, each capped at what
    the domain has; a domain short of its quota passes the rest to the others in weight order
    (heaviest first, then domain order), each taking what it can. The seats sum to
    min(total, all available)."""
    if total < 0:
        raise ValueError(f"total must not be negative, got {total}")
    if any(available.get(d.domain_id, 0) < 0 for d in domains):
        raise ValueError("available counts must not be negative")
    if sum(d.weight for d in domains) == 0:
        # Weightless domains (an exam still being written) share in domain order.
        domains = [DomainQuota(d.domain_id, 1, d.order) for d in domains]
    share = quotas(domains=domains, total=total) if domains else {}
    given = {d.domain_id: min(share[d.domain_id], available.get(d.domain_id, 0)) for d in domains}
    rest = total - sum(given.values())
    for domain in sorted(domains, key=lambda d: (-d.weight, d.order, d.domain_id)):
        if rest <= 0:
            break
        more = min(rest, available.get(domain.domain_id, 0) - given[domain.domain_id])
        given[domain.domain_id] += more
        rest -= more
    return given


def draw(
    *,
    candidates: Sequence[Candidate],
    domains: Sequence[DomainQuota],
    total: int,
    rng: random.Random,
    seen: Collection[int] = (),
) -> list[int]:
    """Up to `total` question ids from the candidates, in shuffled order: seats per domain by
    `seats`, at most one question per exclusion group, questions not in `seen` first."""
    seen_ids = set(seen)
    chosen_domains = {d.domain_id for d in domains}
    # Sorting first makes the draw depend only on the seed and the contents.
    pool = sorted({c for c in candidates if c.domain_id in chosen_domains}, key=lambda c: c.question_id)
    rng.shuffle(pool)
    pool.sort(key=lambda c: c.question_id in seen_ids)  # stable: unseen first, shuffled within
    groups = {c.question_id: c.group for c in pool if c.group}
    # One per group over the whole pool first, so a group spanning two domains is counted once.
    kept = set(one_per_group([c.question_id for c in pool], groups))
    by_domain: dict[int, list[int]] = {domain_id: [] for domain_id in chosen_domains}
    for c in pool:
        if c.question_id in kept:
            by_domain[c.domain_id].append(c.question_id)
    given = seats(domains=domains, available={d: len(ids) for d, ids in by_domain.items()}, total=total)
    drawn = [question_id for domain_id in sorted(by_domain) for question_id in by_domain[domain_id][: given[domain_id]]]
    rng.shuffle(drawn)
    return drawn
