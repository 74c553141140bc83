"""Simulated banks with planted wrong keys, scored by the app's item statistics and mis-key rule.

Each bank is a 60-item form with four choices per item; every simulated attempt takes
the whole form, so n (attempts per item) is the number of attempts. A learner of ability
θ gets item i right with the Rasch probability 1/(1 + e^−(θ − b_i)); a wrong answer goes
to a distractor by its pull, and half the items have one tempting distractor pulling four
times as hard as the others (the hard-item-with-a-lure case that fooled the old rule).
A tenth of the items are stored with a distractor as their key. Attempts are ranked by
their right count against the stored keys, as the app does, and
`exams.statistics.formulas.item_statistics` computes the statistics and the tier.
"""
import math
import random
from dataclasses import dataclass

from exams.statistics.formulas import ItemObservation, item_statistics

CHOICES = (0, 1, 2, 3)
TRUE_KEY = 0


@dataclass(frozen=True)
class Item:
    difficulty: float
    pull: tuple[float, ...]  # per distractor (choices 1–3)
    stored_key: int


def simulated_form(rng: random.Random, *, items: int = 60, miskeyed_share: float = 0.1) -> list[Item]:
    planted = set(rng.sample(range(items), round(items * miskeyed_share)))
    form = []
    for index in range(items):
        pull = [1.0, 1.0, 1.0]
        if rng.random() < 0.5:
            pull[rng.randrange(3)] = 4.0
        form.append(Item(
            difficulty=rng.gauss(0.0, 1.2), pull=tuple(pull),
            stored_key=rng.choice((1, 2, 3)) if index in planted else TRUE_KEY,
        ))
    return form


@dataclass
class FormResult:
    planted: int = 0
    found: int = 0
    found_very_likely: int = 0
    good: int = 0
    false_flags: int = 0
    false_very_likely: int = 0


def score_form(rng: random.Random, *, form: list[Item], attempts: int) -> FormResult:
    picks: list[list[int]] = []
    for _ in range(attempts):
        theta = rng.gauss(0.0, 1.0)
        row = []
        for item in form:
            if rng.random() < 1 / (1 + math.exp(-(theta - item.difficulty))):
                row.append(TRUE_KEY)
            else:
                row.append(rng.choices((1, 2, 3), weights=item.pull)[0])
        picks.append(row)
    totals = [sum(pick == item.stored_key for pick, item in zip(row, form, strict=True)) for row in picks]
    result = FormResult()
    for index, item in enumerate(form):
        observations = [
            ItemObservation(attempt_id=a, attempt_right=totals[a], right=picks[a][index] == item.stored_key,
                            selected=frozenset({picks[a][index]}))
            for a in range(attempts)
        ]
        statistics = item_statistics(observations=observations, key=frozenset({item.stored_key}), all_choices=CHOICES)
        if item.stored_key != TRUE_KEY:
            result.planted += 1
            result.found += statistics.miskey is not None
            result.found_very_likely += statistics.miskey == "very likely"
        else:
            result.good += 1
            result.false_flags += statistics.miskey is not None
            result.false_very_likely += statistics.miskey == "very likely"
    return result


def rate_with_error(parts: list[tuple[int, int]]) -> tuple[float, float]:
    """Pooled rate and its standard error with forms as clusters (items on one form share learners)."""
    hits, total = sum(h for h, _ in parts), sum(t for _, t in parts)
    rate = hits / total if total else math.nan
    k = len(parts)
    if k < 2 or not total:
        return rate, math.nan
    mean_size = total / k
    # Ratio-estimator variance over clusters.
    spread = sum((h - rate * t) ** 2 for h, t in parts) / (k - 1)
    return rate, math.sqrt(spread / k) / mean_size


def measure(*, seed: int, forms: int, attempts: int) -> dict:
    rng = random.Random(seed)
    results = [score_form(rng, form=simulated_form(rng), attempts=attempts) for _ in range(forms)]
    recall, recall_se = rate_with_error([(r.found, r.planted) for r in results])
    very, very_se = rate_with_error([(r.found_very_likely, r.planted) for r in results])
    false, false_se = rate_with_error([(r.false_flags, r.good) for r in results])
    false_very, false_very_se = rate_with_error([(r.false_very_likely, r.good) for r in results])
    return {
        "attempts_per_item": attempts, "forms": forms,
        "planted": sum(r.planted for r in results), "good": sum(r.good for r in results),
        "recall": recall, "recall_se": recall_se, "recall_very_likely": very, "recall_very_likely_se": very_se,
        "false_flags": false, "false_flags_se": false_se,
        "false_very_likely": false_very, "false_very_likely_se": false_very_se,
    }
