"""The calibration harness's small version (bench/calibration/): simulated learners through the app's estimators.

The full run (`make bench-calibration`, ≥ 10,000 learners of each kind) writes the figures in
docs/MEASUREMENT.md; this one keeps them from silently breaking, at sizes whose Monte Carlo
error the bounds allow for (coverage: about ±2.5 points at 150 learners, two SEs).
"""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "calibration"))

import run  # noqa: E402


@pytest.fixture(scope="module")
def results():
    return run.measure(learners_per_kind=150, population=500, forms=150, seed=11, mixed=False)


@pytest.mark.parametrize("kind", ["random", "selective", "improving", "guessing"])
def test_the_bank_is_calibrated_close_to_its_true_difficulties(results, kind):
    assert results["calibration"][kind]["correlation"] > 0.95


def test_the_drift_prior_is_learned_from_the_population(results):
    """Improving learners gain GROWTH logits a session; the others do not drift."""
    improving = results["calibration"]["improving"]
    assert improving["drift_mean"] == pytest.approx(10 * run.learners.GROWTH, abs=0.3)
    assert improving["slope_mean"] == improving["drift_mean"]
    for kind in ("random", "selective"):
        assert abs(results["calibration"][kind]["drift_mean"]) < 0.2 and results["calibration"][kind]["drift_sd"] < 0.3


@pytest.mark.parametrize("kind", ["random", "selective", "improving", "guessing"])
def test_the_next_mock_lands_in_its_range_without_a_large_bias(results, kind):
    r = results["readiness"][kind]
    assert r["with_estimate"] >= 100
    assert r["overall"]["coverage"] >= 0.85
    assert abs(r["overall"]["error"]) <= 3 * r["error_se"] + 1.0
    assert r["overall"]["next_width"] >= r["overall"]["oracle_width"]
    # A predictor told every true difficulty still estimates the ability: never narrower than the oracle.
    assert r["overall"]["oracle_width"] <= r["overall"]["ideal_width"]


def test_practising_mistakes_does_not_move_the_standing(results):
    r = results["readiness"]["selective"]
    assert r["standing_changes"] >= 50
    assert abs(r["standing_change"]) <= 3 * r["standing_change_se"] + 0.5


def test_the_balanced_draw_evens_the_forms(results):
    assert results["forms"]["balanced"] <= 0.5 * results["forms"]["plain"]
