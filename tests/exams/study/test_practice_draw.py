"""The practice builder's draw as plain functions: seats by weight, passed on when short, the questions."""

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from exams.room.draw import DomainQuota, quotas
from exams.study.builder import Candidate, distinct, draw, seats

NCA_GENM = [DomainQuota(domain_id=i + 1, weight=w, order=i + 1) for i, w in enumerate([25, 20, 15, 15, 10, 10, 5])]


def test_two_domains_share_by_weight():
    # Experimentation 25 and Trustworthy AI 5 over 20: shares 16.67 and 3.33.
    two = [NCA_GENM[0], NCA_GENM[6]]
    assert seats(domains=two, available={1: 50, 7: 50}, total=20) == {1: 17, 7: 3}


def test_a_short_domain_passes_the_rest_on_heaviest_first():
    three = [NCA_GENM[0], NCA_GENM[1], NCA_GENM[6]]  # 25, 20, 5 over 20: 10, 8, 2
    assert seats(domains=three, available={1: 50, 2: 50, 7: 50}, total=20) == {1: 10, 2: 8, 7: 2}
    # The heaviest is short by 7: the next heaviest takes what it can (3), then the lightest.
    assert seats(domains=three, available={1: 3, 2: 11, 7: 50}, total=20) == {1: 3, 2: 11, 7: 6}


def test_the_seats_stop_at_what_matches():
    assert seats(domains=NCA_GENM[:2], available={1: 4, 2: 3}, total=20) == {1: 4, 2: 3}


def test_one_per_group_is_counted_once():
    candidates = [Candidate(1, 1, "g"), Candidate(2, 1, "g"), Candidate(3, 2, "g"), Candidate(4, 2), Candidate(5, 2)]
    assert distinct(candidates) == 3
    got = draw(candidates=candidates, domains=NCA_GENM[:2], total=10, rng=random.Random(1))
    assert len(got) == 3 and {4, 5} <= set(got)


def test_unseen_questions_come_first():
    candidates = [Candidate(q, 1) for q in range(1, 21)]
    seen = set(range(1, 16))
    got = draw(candidates=candidates, domains=NCA_GENM[:1], total=5, rng=random.Random(3), seen=seen)
    assert set(got) == {16, 17, 18, 19, 20}


@st.composite
def builds(draw_):
    count = draw_(st.integers(1, 5))
    weights = draw_(st.lists(st.integers(0, 40), min_size=count, max_size=count))
    domains = [DomainQuota(domain_id=i + 1, weight=w, order=draw_(st.integers(0, 3))) for i, w in enumerate(weights)]
    candidates = []
    next_id = 1
    for domain in domains + [DomainQuota(domain_id=99, weight=10, order=9)]:  # 99: a domain not chosen
        for _ in range(draw_(st.integers(0, 15))):
            group = draw_(st.sampled_from(["", "", "", "a", "b", "c"]))
            candidates.append(Candidate(next_id, domain.domain_id, group))
            next_id += 1
    total = draw_(st.integers(1, 100))
    seen = draw_(st.sets(st.integers(1, next_id)))
    return domains, candidates, total, seen


@settings(max_examples=150)
@given(builds(), st.integers(0, 2**32))
def test_the_draw_holds_only_matching_questions_once_each_and_one_per_group(build, seed):
    domains, candidates, total, seen = build
    got = draw(candidates=candidates, domains=domains, total=total, rng=random.Random(seed), seen=seen)
    chosen = [c for c in candidates if c.domain_id != 99]
    by_id = {c.question_id: c for c in chosen}
    assert set(got) <= set(by_id), "only questions that match, in the chosen domains"
    assert len(got) == len(set(got)), "no repeats"
    groups = [by_id[q].group for q in got if by_id[q].group]
    assert len(groups) == len(set(groups)), "at most one per exclusion group"
    assert len(got) == min(total, distinct(chosen)), "as many as asked for, or every one that matches"


@settings(max_examples=150)
@given(
    st.lists(st.tuples(st.integers(1, 40), st.integers(0, 5)), min_size=1, max_size=5),
    st.integers(1, 100),
    st.integers(0, 2**32),
)
def test_the_draw_keeps_the_weights_when_every_domain_has_enough(rows, total, seed):
    domains = [DomainQuota(domain_id=i + 1, weight=w, order=i) for i, (w, _) in enumerate(rows)]
    share = quotas(domains=domains, total=total)
    # Each domain holds its quota and a few more.
    candidates = [
        Candidate(domain.domain_id * 1000 + k, domain.domain_id)
        for domain, (_, extra) in zip(domains, rows, strict=True)
        for k in range(share[domain.domain_id] + extra)
    ]
    got = draw(candidates=candidates, domains=domains, total=total, rng=random.Random(seed))
    assert Counter(q // 1000 for q in got) == +Counter(share)


@settings(max_examples=200)
@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 30)), min_size=1, max_size=7),
    st.integers(0, 120),
)
def test_a_short_domain_passes_its_seats_on_in_weight_order(rows, total):
    domains = [DomainQuota(domain_id=i + 1, weight=w, order=i) for i, (w, _) in enumerate(rows)]
    available = {i + 1: n for i, (_, n) in enumerate(rows)}
    got = seats(domains=domains, available=available, total=total)
    assert sum(got.values()) == min(total, sum(available.values()))
    weighted = domains if sum(d.weight for d in domains) else [DomainQuota(d.domain_id, 1, d.order) for d in domains]
    share = quotas(domains=weighted, total=total)
    order = sorted(weighted, key=lambda d: (-d.weight, d.order, d.domain_id))
    for index, domain in enumerate(order):
        d = domain.domain_id
        assert min(share[d], available[d]) <= got[d] <= available[d]
        if got[d] > share[d]:
            # Passed-on seats reach a domain only once every heavier one is full.
            assert all(got[h.domain_id] == available[h.domain_id] for h in order[:index])
