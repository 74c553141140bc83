"""Drawing a mock exam: seats per domain by weight, questions per seat, choice order."""

import bisect
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class DomainQuota:
    domain_id: int
    weight: int
    order: int


def quotas(*, domains: Sequence[DomainQuota], total: int) -> dict[int, int]:
    """Seats per domain by the largest-remainder method; the seats sum to `total`."""
    if total < 0:
        raise ValueError(f"total must not be negative, got {total}")
    if len({domain.domain_id for domain in domains}) != len(domains):
        raise ValueError("each domain may appear only once")
    if any(domain.weight < 0 for domain in domains):
        raise ValueError("domain weights must not be negative")
    weight_sum = sum(domain.weight for domain in domains)
    if weight_sum == 0:
        if total == 0:
            return {domain.domain_id: 0 for domain in domains}
        raise ValueError("cannot share seats among domains whose weights sum to 0")

    # Every share total*weight/weight_sum has the same denominator, so comparing the
    # integer numerators of the remainders is exact; floats could mis-order a tie.
    seats = {domain.domain_id: total * domain.weight // weight_sum for domain in domains}
    remainders = {domain.domain_id: total * domain.weight % weight_sum for domain in domains}
    leftover = total - sum(seats.values())
    # domain_id last only so that equal weight and equal order still give one answer.
    by_claim = sorted(
        domains,
        key=lambda d: (-remainders[d.domain_id], -d.weight, d.order, d.domain_id),
    )
    for domain in by_claim[:leftover]:
        seats[domain.domain_id] += 1
    return seats


class BankTooSmall(Exception):
    """Some domains hold fewer questions than the exam needs from them."""

    def __init__(self, shortfalls: list[tuple[int, int, int]]) -> None:
        self.shortfalls = shortfalls
        details = "; ".join(
            f"domain {domain_id} needs {needed}, has {available}"
            for domain_id, needed, available in shortfalls
        )
        super().__init__(f"question bank too small: {details}")

    def __reduce__(self) -> tuple[type["BankTooSmall"], tuple[list[tuple[int, int, int]]]]:
        # The default would rebuild from the message; rebuild from the data instead.
        return (type(self), (self.shortfalls,))


def draw(
    *,
    pool: Mapping[int, Sequence[int]],
    quotas: Mapping[int, int],
    seen: Collection[int],
    rng: random.Random,
    groups: Mapping[int, str] | None = None,
    difficulty: Mapping[int, float] | None = None,
) -> list[tuple[int, int]]:
    """(domain_id, question_id) per slot, unseen questions first, in shuffled order, and at
    most one question of each exclusion group (`groups` maps a question to its group).

    With `difficulty` (each question's calibrated difficulty), the form is then balanced:
    swaps within a domain and within its tier (unseen for unseen, seen for seen), never
    breaking an exclusion group, bring the form's mean difficulty within BALANCE_WINDOW of
    the reference form's (each domain's seats at its pool's mean), or as close as the pool
    allows. Quotas, then exclusion groups, then unseen-first, then difficulty, in that priority.

    Raises BankTooSmall naming every short domain rather than handing out a short exam.
    """
    groups = groups or {}
    if any(quota < 0 for quota in quotas.values()):
        raise ValueError("quotas must not be negative")
    seen_ids = set(seen)
    # Sorting makes the draw depend only on the seed and the contents, not on the
    # order rows came back from the database.
    questions = {domain_id: sorted(set(pool.get(domain_id, ()))) for domain_id in sorted(quotas)}

    owner: dict[int, int] = {}
    for domain_id, question_ids in questions.items():
        for question_id in question_ids:
            if owner.setdefault(question_id, domain_id) != domain_id:
                raise ValueError(
                    f"question {question_id} is in both domain {owner[question_id]} "
                    f"and domain {domain_id}"
                )

    shortfalls = [
        (domain_id, quotas[domain_id], distinct)
        for domain_id, question_ids in questions.items()
        if (distinct := len(one_per_group(question_ids, groups))) < quotas[domain_id]
    ]
    if shortfalls:
        raise BankTooSmall(shortfalls)

    slots: list[tuple[int, int]] = []
    taken_groups: set[str] = set()
    for domain_id, question_ids in questions.items():
        quota = quotas[domain_id]
        unseen = [q for q in question_ids if q not in seen_ids]
        already_seen = [q for q in question_ids if q in seen_ids]
        rng.shuffle(unseen)
        rng.shuffle(already_seen)
        chosen = one_per_group(unseen + already_seen, groups, taken=taken_groups)[:quota]
        if len(chosen) < quota:
            # Only a group shared across domains can leave a domain short here.
            raise BankTooSmall([(domain_id, quota, len(chosen))])
        taken_groups.update(groups[q] for q in chosen if groups.get(q))
        slots.extend((domain_id, question_id) for question_id in chosen)
    if difficulty:
        slots = balance(slots=slots, pool=questions, quotas=quotas, seen=seen_ids, groups=groups, difficulty=difficulty)
    rng.shuffle(slots)
    return slots


# The form's mean difficulty should land this close (logits) to the reference form's.
BALANCE_WINDOW = 0.05
# Swaps tried at most (each moves the mean towards the target; a few usually suffice).
BALANCE_SWAPS = 60


def reference_mean(*, pool: Mapping[int, Sequence[int]], quotas: Mapping[int, int], difficulty: Mapping[int, float]) -> float:
    """The mean difficulty of the reference form: each domain's seats at its pool's mean difficulty."""
    total = sum(quotas.values())
    if not total:
        return 0.0
    return sum(
        quota * sum(difficulty.get(q, 0.0) for q in pool[d]) / len(pool[d])
        for d, quota in quotas.items() if quota and pool.get(d)
    ) / total


def balance(
    *, slots: list[tuple[int, int]], pool: Mapping[int, Sequence[int]], quotas: Mapping[int, int],
    seen: Collection[int], groups: Mapping[int, str], difficulty: Mapping[int, float],
) -> list[tuple[int, int]]:
    """Greedy swaps that bring the form's mean difficulty towards the reference form's (see `draw`)."""
    if not slots:
        return slots
    target = reference_mean(pool=pool, quotas=quotas, difficulty=difficulty)
    b = lambda q: difficulty.get(q, 0.0)  # noqa: E731
    form = list(slots)
    total = sum(b(q) for _, q in form)
    n = len(form)
    chosen = {q for _, q in form}
    # A domain whose unseen questions fill its seats swaps unseen for unseen only; one that
    # took seen questions keeps all its unseen ones and swaps seen for seen.
    # Candidates per (domain, tier), sorted by difficulty, for a binary search per slot.
    ladders: dict[tuple[int, bool], tuple[list[float], list[int]]] = {}
    for domain_id in {d for d, _ in form}:
        for tier in (False, True):
            ranked = sorted((b(q), q) for q in pool[domain_id] if (q in seen) == tier)
            ladders[(domain_id, tier)] = ([value for value, _ in ranked], [q for _, q in ranked])
    for _ in range(BALANCE_SWAPS):
        gap = target * n - total  # the change in the sum that would land on the target
        if abs(gap) <= BALANCE_WINDOW * n:
            break
        taken = {groups[q] for _, q in form if groups.get(q)}
        best = None
        for index, (domain_id, out) in enumerate(form):
            values, ids = ladders[(domain_id, out in seen)]
            own_group = groups.get(out)
            ideal = b(out) + gap
            at = bisect.bisect_left(values, ideal)
            # Walk outwards from the ideal difficulty to the nearest usable candidate on each side.
            for step in (-1, 1):
                k = at if step == 1 else at - 1
                while 0 <= k < len(ids):
                    candidate = ids[k]
                    group = groups.get(candidate)
                    if candidate not in chosen and not (group and group in taken and group != own_group):
                        miss = abs(ideal - values[k])
                        if best is None or miss < best[0]:
                            best = (miss, index, candidate, values[k] - b(out))
                        break
                    k += step
        if best is None or best[0] >= abs(gap):
            break  # no swap brings it closer: as close as the pool allows
        _, index, candidate, change = best
        domain_id, out = form[index]
        chosen.discard(out)
        chosen.add(candidate)
        form[index] = (domain_id, candidate)
        total += change
    return form


def one_per_group(question_ids: Sequence[int], groups: Mapping[int, str], *, taken: Collection[str] = ()) -> list[int]:
    """The questions in their order, skipping any whose exclusion group came earlier or is taken."""
    used = set(taken)
    kept = []
    for question_id in question_ids:
        group = groups.get(question_id)
        if group:
            if group in used:
                continue
            used.add(group)
        kept.append(question_id)
    return kept


def shuffle_choices(
    *, choice_ids: Sequence[int], keep_order: bool, rng: random.Random
) -> list[int]:
    """The order an attempt shows a question's choices in."""
    shown = list(choice_ids)
    # keep_order exists for choices like "All of the above" whose meaning depends on place.
    if not keep_order:
        rng.shuffle(shown)
    return shown
