"""Tests for seat quotas, question draws and choice shuffling."""

import math
import pickle
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exams.room.draw import (
    BALANCE_WINDOW, BankTooSmall, DomainQuota, draw, one_per_group, quotas, reference_mean, shuffle_choices,
)

NCA_GENM_WEIGHTS = [25, 20, 15, 15, 10, 10, 5]


def nca_genm_domains() -> list[DomainQuota]:
    return [
        DomainQuota(domain_id=i + 1, weight=weight, order=i + 1)
        for i, weight in enumerate(NCA_GENM_WEIGHTS)
    ]


# --- quotas: hand-computed examples -------------------------------------------------


def test_quotas_nca_genm_60_questions_divide_exactly() -> None:
    assert quotas(domains=nca_genm_domains(), total=60) == {
        1: 15, 2: 12, 3: 9, 4: 9, 5: 6, 6: 6, 7: 3,
    }


def test_quotas_nca_genm_7_questions_use_largest_remainders() -> None:
    # Shares 1.75, 1.40, 1.05, 1.05, 0.70, 0.70, 0.35 → floors sum to 4; the 3 spare
    # seats go to remainders .75 (domain 1), .70 (domain 5), .70 (domain 6).
    assert quotas(domains=nca_genm_domains(), total=7) == {
        1: 2, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 7: 0,
    }


def test_quotas_remainder_tie_goes_to_larger_weight() -> None:
    # Shares 0.5, 3.0, 1.5: domains 1 and 3 tie on remainder .5; weight 30 beats 10.
    domains = [
        DomainQuota(domain_id=1, weight=10, order=1),
        DomainQuota(domain_id=2, weight=60, order=2),
        DomainQuota(domain_id=3, weight=30, order=3),
    ]
    assert quotas(domains=domains, total=5) == {1: 0, 2: 3, 3: 2}


def test_quotas_remainder_and_weight_tie_goes_to_smaller_order() -> None:
    # Shares 2, 1.5, 1.5: domains 7 and 8 tie on remainder and weight; 8 comes first.
    domains = [
        DomainQuota(domain_id=6, weight=40, order=1),
        DomainQuota(domain_id=7, weight=30, order=3),
        DomainQuota(domain_id=8, weight=30, order=2),
    ]
    assert quotas(domains=domains, total=5) == {6: 2, 7: 1, 8: 2}


def test_quotas_do_not_depend_on_input_order() -> None:
    domains = nca_genm_domains()
    assert quotas(domains=domains[::-1], total=7) == quotas(domains=domains, total=7)


def test_quotas_of_zero_total_are_zero() -> None:
    assert quotas(domains=nca_genm_domains(), total=0) == {i: 0 for i in range(1, 8)}


def test_quotas_refuse_negative_total() -> None:
    with pytest.raises(ValueError):
        quotas(domains=nca_genm_domains(), total=-1)


def test_quotas_refuse_weights_summing_to_zero() -> None:
    with pytest.raises(ValueError):
        quotas(domains=[DomainQuota(domain_id=1, weight=0, order=1)], total=3)


def test_quotas_refuse_duplicate_domains() -> None:
    domain = DomainQuota(domain_id=1, weight=50, order=1)
    with pytest.raises(ValueError):
        quotas(domains=[domain, domain], total=3)


# --- quotas: properties -------------------------------------------------------------


@st.composite
def domain_lists(draw_: st.DrawFn) -> list[DomainQuota]:
    weights = draw_(st.lists(st.integers(min_value=0, max_value=100), min_size=1, max_size=10))
    if sum(weights) == 0:
        weights[0] = 1
    orders = draw_(st.permutations(range(len(weights))))
    return [
        DomainQuota(domain_id=100 + i, weight=weight, order=order)
        for i, (weight, order) in enumerate(zip(weights, orders, strict=True))
    ]


@settings(max_examples=200)
@given(domains=domain_lists(), total=st.integers(min_value=0, max_value=300))
def test_quotas_sum_to_total_and_round_the_exact_share(
    domains: list[DomainQuota], total: int
) -> None:
    seats = quotas(domains=domains, total=total)
    assert sum(seats.values()) == total
    weight_sum = sum(d.weight for d in domains)
    for domain in domains:
        share = Fraction(total * domain.weight, weight_sum)
        assert seats[domain.domain_id] in (math.floor(share), math.ceil(share))


@settings(max_examples=200)
@given(domains=domain_lists(), total=st.integers(min_value=0, max_value=300))
def test_quotas_spare_seats_follow_remainder_then_weight_then_order(
    domains: list[DomainQuota], total: int
) -> None:
    seats = quotas(domains=domains, total=total)
    weight_sum = sum(d.weight for d in domains)

    def claim(domain: DomainQuota) -> tuple[Fraction, int, int]:
        share = Fraction(total * domain.weight, weight_sum)
        return (share - math.floor(share), domain.weight, -domain.order)

    got_spare = [d for d in domains if seats[d.domain_id] > total * d.weight // weight_sum]
    missed = [d for d in domains if seats[d.domain_id] == total * d.weight // weight_sum]
    for winner in got_spare:
        for loser in missed:
            assert claim(winner) > claim(loser)


# --- draw: examples -----------------------------------------------------------------


def test_draw_fills_each_quota_and_prefers_unseen() -> None:
    pool = {1: [10, 11, 12, 13], 2: [20, 21, 22]}
    slots = draw(pool=pool, quotas={1: 2, 2: 3}, seen={10, 11, 20}, rng=random.Random(4))
    by_domain = {1: sorted(q for d, q in slots if d == 1), 2: sorted(q for d, q in slots if d == 2)}
    # Domain 1 has exactly two unseen questions; domain 2 must reuse its one seen question.
    assert by_domain == {1: [12, 13], 2: [20, 21, 22]}


def test_draw_uses_seen_questions_only_to_make_up_the_shortfall() -> None:
    pool = {1: [1, 2, 3, 4, 5, 6]}
    seen = {1, 2, 3, 4}
    for seed in range(20):
        chosen = {q for _, q in draw(pool=pool, quotas={1: 3}, seen=seen, rng=random.Random(seed))}
        assert {5, 6} <= chosen
        assert len(chosen & seen) == 1


def test_draw_raises_bank_too_small_for_every_short_domain() -> None:
    pool = {1: [10, 11], 2: [20, 21, 22], 3: [30]}
    with pytest.raises(BankTooSmall) as caught:
        draw(pool=pool, quotas={1: 3, 2: 3, 3: 2, 4: 1}, seen=set(), rng=random.Random(0))
    assert caught.value.shortfalls == [(1, 3, 2), (3, 2, 1), (4, 1, 0)]
    assert str(caught.value) == (
        "question bank too small: domain 1 needs 3, has 2; "
        "domain 3 needs 2, has 1; domain 4 needs 1, has 0"
    )


def test_bank_too_small_survives_pickling() -> None:
    error = pickle.loads(pickle.dumps(BankTooSmall([(1, 3, 2)])))
    assert error.shortfalls == [(1, 3, 2)]
    assert str(error) == "question bank too small: domain 1 needs 3, has 2"


def test_draw_counts_duplicate_pool_entries_once() -> None:
    with pytest.raises(BankTooSmall) as caught:
        draw(pool={1: [5, 5, 5]}, quotas={1: 2}, seen=(), rng=random.Random(0))
    assert caught.value.shortfalls == [(1, 2, 1)]


def test_draw_refuses_a_question_in_two_domains() -> None:
    with pytest.raises(ValueError):
        draw(pool={1: [5, 6], 2: [6, 7]}, quotas={1: 2, 2: 2}, seen=(), rng=random.Random(0))


def test_draw_with_zero_quota_needs_no_questions() -> None:
    assert draw(pool={}, quotas={1: 0}, seen=(), rng=random.Random(0)) == []


# --- draw: properties ---------------------------------------------------------------


@st.composite
def banks(draw_: st.DrawFn) -> tuple[dict[int, list[int]], dict[int, int], set[int]]:
    """A pool with disjoint question ids per domain, quotas, and a seen set."""
    sizes = draw_(st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=6))
    pool: dict[int, list[int]] = {}
    next_id = 1
    for domain_id, size in enumerate(sizes, start=1):
        pool[domain_id] = list(range(next_id, next_id + size))
        next_id += size
    quota_map = {
        domain_id: draw_(st.integers(min_value=0, max_value=len(ids)))
        for domain_id, ids in pool.items()
    }
    all_ids = [q for ids in pool.values() for q in ids]
    seen = set(draw_(st.lists(st.sampled_from(all_ids), unique=True))) if all_ids else set()
    return pool, quota_map, seen


@settings(max_examples=150)
@given(bank=banks(), seed=st.integers(min_value=0, max_value=2**32))
def test_draw_meets_quotas_without_repeats_and_prefers_unseen(
    bank: tuple[dict[int, list[int]], dict[int, int], set[int]], seed: int
) -> None:
    pool, quota_map, seen = bank
    slots = draw(pool=pool, quotas=quota_map, seen=seen, rng=random.Random(seed))
    question_ids = [q for _, q in slots]
    assert len(question_ids) == len(set(question_ids))
    for domain_id, quota in quota_map.items():
        drawn = [q for d, q in slots if d == domain_id]
        assert len(drawn) == quota
        assert set(drawn) <= set(pool[domain_id])
        unseen = [q for q in pool[domain_id] if q not in seen]
        if len(unseen) >= quota:
            assert not set(drawn) & seen
        else:
            assert set(unseen) <= set(drawn)


@settings(max_examples=100)
@given(
    bank=banks(),
    seed=st.integers(min_value=0, max_value=2**32),
    reorder_seed=st.integers(min_value=0, max_value=1000),
)
def test_draw_is_deterministic_per_seed_whatever_the_input_order(
    bank: tuple[dict[int, list[int]], dict[int, int], set[int]], seed: int, reorder_seed: int
) -> None:
    pool, quota_map, seen = bank
    first = draw(pool=pool, quotas=quota_map, seen=seen, rng=random.Random(seed))

    reorder = random.Random(reorder_seed)
    domain_ids = list(pool)
    reorder.shuffle(domain_ids)
    shuffled_pool = {d: reorder.sample(pool[d], len(pool[d])) for d in domain_ids}
    shuffled_quotas = {d: quota_map[d] for d in reversed(domain_ids)}
    second = draw(
        pool=shuffled_pool, quotas=shuffled_quotas, seen=sorted(seen), rng=random.Random(seed)
    )
    assert first == second


@settings(max_examples=100)
@given(
    available=st.lists(st.integers(min_value=0, max_value=6), min_size=1, max_size=6),
    extra=st.lists(st.integers(min_value=0, max_value=3), min_size=6, max_size=6),
)
def test_bank_too_small_lists_every_short_domain(available: list[int], extra: list[int]) -> None:
    pool = {}
    next_id = 1
    for domain_id, size in enumerate(available, start=1):
        pool[domain_id] = list(range(next_id, next_id + size))
        next_id += size
    quota_map = {d: len(pool[d]) + extra[d - 1] for d in pool}
    short = [(d, quota_map[d], len(pool[d])) for d in sorted(pool) if extra[d - 1] > 0]
    if short:
        with pytest.raises(BankTooSmall) as caught:
            draw(pool=pool, quotas=quota_map, seen=(), rng=random.Random(0))
        assert caught.value.shortfalls == short
    else:
        assert len(draw(pool=pool, quotas=quota_map, seen=(), rng=random.Random(0))) == sum(
            quota_map.values()
        )


# --- shuffle_choices ----------------------------------------------------------------


def test_shuffle_choices_keeps_order_when_asked() -> None:
    assert shuffle_choices(choice_ids=[4, 2, 9], keep_order=True, rng=random.Random(1)) == [4, 2, 9]


@settings(max_examples=100)
@given(
    choice_ids=st.lists(st.integers(), unique=True, max_size=8),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_shuffle_choices_is_a_deterministic_permutation(choice_ids: list[int], seed: int) -> None:
    shown = shuffle_choices(choice_ids=choice_ids, keep_order=False, rng=random.Random(seed))
    assert sorted(shown) == sorted(choice_ids)
    assert shown == shuffle_choices(choice_ids=choice_ids, keep_order=False, rng=random.Random(seed))


def test_shuffle_choices_does_shuffle() -> None:
    orders = {
        tuple(shuffle_choices(choice_ids=[1, 2, 3, 4], keep_order=False, rng=random.Random(seed)))
        for seed in range(50)
    }
    assert len(orders) > 1


# --- the balanced draw (forms of equal difficulty) -----------------------------------------


@settings(max_examples=150)
@given(
    bank=banks(), seed=st.integers(min_value=0, max_value=2**32),
    spread=st.floats(min_value=0.0, max_value=3.0), grouped=st.integers(min_value=0, max_value=4),
)
def test_the_balanced_draw_keeps_quotas_groups_and_unseen_first(bank, seed, spread, grouped) -> None:
    pool, quota_map, seen = bank
    rng = random.Random(seed)
    all_ids = [q for ids in pool.values() for q in ids]
    difficulty = {q: rng.gauss(0.0, spread) for q in all_ids}
    # Some exclusion groups, within a domain (a group across domains may make a bank undrawable).
    groups = {q: f"g{d}-{q % grouped}" for d, ids in pool.items() for q in ids if grouped and q % 3 == 0}
    try:
        slots = draw(pool=pool, quotas=quota_map, seen=seen, rng=random.Random(seed), groups=groups, difficulty=difficulty)
    except BankTooSmall:
        return
    question_ids = [q for _, q in slots]
    assert len(question_ids) == len(set(question_ids))
    taken = [groups[q] for q in question_ids if q in groups]
    assert len(taken) == len(set(taken))
    for domain_id, quota in quota_map.items():
        drawn = [q for d, q in slots if d == domain_id]
        assert len(drawn) == quota and set(drawn) <= set(pool[domain_id])
        unseen = [q for q in pool[domain_id] if q not in seen]
        usable_unseen = len(one_per_group(unseen, groups))
        if usable_unseen >= quota:
            assert not set(drawn) & seen
        else:
            # The balance swaps seen for seen and unseen for unseen: as many unseen as the plain draw.
            plain = draw(pool=pool, quotas=quota_map, seen=seen, rng=random.Random(seed), groups=groups)
            assert len([q for q in drawn if q not in seen]) == len([q for d, q in plain if d == domain_id and q not in seen])


@settings(max_examples=100)
@given(seed=st.integers(min_value=0, max_value=2**32), spread=st.floats(min_value=0.2, max_value=2.0))
def test_a_large_pool_lands_the_forms_mean_within_the_window(seed, spread) -> None:
    rng = random.Random(seed)
    pool, next_id = {}, 1
    for domain_id, size in enumerate((160, 125, 95, 95, 65, 65, 35), start=1):
        pool[domain_id] = list(range(next_id, next_id + size))
        next_id += size
    difficulty = {q: rng.gauss(0.0, spread) for ids in pool.values() for q in ids}
    quota_map = dict(zip(pool, (15, 12, 9, 9, 6, 6, 3), strict=True))
    seen = set(rng.sample(sorted(difficulty), 200))
    slots = draw(pool=pool, quotas=quota_map, seen=seen, rng=rng, difficulty=difficulty)
    mean = sum(difficulty[q] for _, q in slots) / len(slots)
    assert abs(mean - reference_mean(pool=pool, quotas=quota_map, difficulty=difficulty)) <= BALANCE_WINDOW + 1e-9


def test_an_exhausted_pool_takes_the_closest_mean_it_can() -> None:
    # Two seats from four questions, all hard but one: the closest pair to the reference mean.
    pool = {1: [1, 2, 3, 4]}
    difficulty = {1: 3.0, 2: 3.0, 3: 3.0, 4: -3.0}  # reference mean 1.5: {4, x} gives 0.0, {x, y} 3.0
    slots = draw(pool=pool, quotas={1: 2}, seen=set(), rng=random.Random(1), difficulty=difficulty)
    assert abs(sum(difficulty[q] for _, q in slots) / 2 - 1.5) == 1.5
    # Balancing never trades an unseen question for a seen one.
    slots = draw(pool=pool, quotas={1: 2}, seen={4}, rng=random.Random(1), difficulty=difficulty)
    assert 4 not in {q for _, q in slots}
