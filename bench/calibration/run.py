"""Calibration harness: does the readiness range hold, is P(pass) calibrated, does the mis-key flag cry wolf?

    make bench-calibration   (or: DATABASE_URL=… .venv/bin/python bench/calibration/run.py)
    .venv/bin/python bench/calibration/run.py --learners 2000 --forms 50   (a quick look)

Not part of `make test`. Three parts, all with the app's own code (bench/calibration/
learners.py and miskey.py say which):
1. Services check: a few Rasch learners take mocks, practice and drills through
   exams.room.services (attempt_start, Attempt.record_answer, attempt_check, attempt_submit)
   in the configured database, inside a transaction rolled back at the end; after every
   session the database's counts (exams.study.progress.domain_standings) and estimate
   (progress.readiness_estimate) must equal those the fast simulation computes from the
   same outcomes. That is what licenses part 2 to skip the database.
2. Readiness: --learners (10,000) simulated learners (θ ~ N(1, 1), per-domain offsets ~ N(0, 0.35),
   items b ~ N(0, 1), 150 per domain, the real exam's 60-question blueprint) follow a
   random plan of 1–14 sessions; then the estimate is read and one more mock is taken.
   Reports next-mock coverage overall and by counted responses and by mocks taken,
   the widths, P(pass) per 0.1 bin and the Brier score, each with its Monte Carlo error.
3. Mis-key: --forms simulated 60-item forms per n in 30, 50, 100, 200 attempts per item.
Writes bench/results/calibration.json and .md and puts the .md between
<!-- bench:calibration:begin --> / <!-- bench:calibration:end --> in docs/MEASUREMENT.md.
"""
import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared report helpers
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

import learners  # noqa: E402
import miskey  # noqa: E402
from report import code_version, write_results  # noqa: E402

import numpy as np  # noqa: E402

from exams.room import draw  # noqa: E402
from exams.statistics import rasch  # noqa: E402

COUNTED_BUCKETS = ((20, 59), (60, 119), (120, 179), (180, 299), (300, 499), (500, 900))


def proportion(hits: int, n: int) -> tuple[float, float]:
    p = hits / n if n else math.nan
    return p, math.sqrt(p * (1 - p) / n) if n else math.nan


# --- 1. through the services -------------------------------------------------------------


def services_check(*, learners_count: int, sessions: int, seed: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import transaction

    from exams.models import Attempt, AttemptMode, Choice, Domain, Exam, Question, QuestionKind, QuestionStatus
    from exams.room import services
    from exams.study import ability, progress

    call_command("migrate", verbosity=0)
    rng = random.Random(seed)
    checked = sessions_run = 0

    class Rollback(Exception):
        pass

    try:
        with transaction.atomic():
            exam = Exam.objects.create(code="CALIB-SIM", title="Calibration", question_count=60, passing_score=70,
                                       time_limit_minutes=60, is_published=True)
            difficulty: dict[int, float] = {}
            domains = {}
            for domain_id, weight, order in learners.NCA_DOMAINS:
                domains[domain_id] = Domain.objects.create(exam=exam, name=f"Domain {domain_id}", weight=weight, order=order)
                for i in range(24):
                    question = Question.objects.create(
                        exam=exam, domain=domains[domain_id], title=f"D{domain_id} Q{i}", stem="Which one?",
                        kind=QuestionKind.SINGLE, choose=1, status=QuestionStatus.READY,
                    )
                    Choice.objects.bulk_create(
                        Choice(question=question, label=label, text=f"Choice {label}", is_correct=label == "A", order=n)
                        for n, label in enumerate("ABCD")
                    )
                    difficulty[question.pk] = rng.gauss(0.0, 1.0)
            keys = dict(Choice.objects.filter(question__exam=exam, is_correct=True).values_list("question_id", "pk"))
            wrongs = dict(Choice.objects.filter(question__exam=exam, label="B").values_list("question_id", "pk"))
            for number in range(learners_count):
                user = get_user_model().objects.create_user(username=f"calibration-{number}")
                theta, skip = rng.gauss(1.0, 1.0), rng.choice(learners.SKIPS)
                offsets = {d.pk: rng.gauss(0.0, 0.35) for d in domains.values()}
                simulated = learners.Learner(kind="random", theta=theta, offsets=offsets, skip=skip)
                for _ in range(sessions):
                    roll = rng.random()
                    mode = AttemptMode.MOCK if roll < 0.4 else AttemptMode.PRACTICE if roll < 0.7 else AttemptMode.DRILL
                    domain = domains[rng.choice(list(domains))] if mode == AttemptMode.DRILL else None
                    attempt = services.attempt_start(user=user, exam=exam, mode=mode, domain=domain, count=10,
                                                     seed=rng.randrange(2**32)).attempt
                    answers = []
                    with transaction.atomic():
                        attempt = Attempt.objects.select_for_update().get(pk=attempt.pk)
                        for response in attempt.responses.order_by("position"):
                            answered = mode != AttemptMode.MOCK or rng.random() >= skip
                            chance = 1 / (1 + math.exp(-(theta + offsets[response.domain_id] - difficulty[response.question_id])))
                            right = answered and rng.random() < chance
                            if answered:
                                choice = keys[response.question_id] if right else wrongs[response.question_id]
                                attempt.record_answer(response=response, choice_ids=[choice])
                                if mode != AttemptMode.MOCK and rng.random() < 0.5:
                                    services.attempt_check(attempt=attempt, response=response)
                            answers.append((response.question_id, response.domain_id, right, answered))
                    services.attempt_submit(user=user, attempt_id=attempt.pk)
                    simulated.sessions.append(learners.Session(
                        "mock" if mode == AttemptMode.MOCK else "practice",
                        [a for a in answers if a[3]] + [a for a in answers if not a[3]],
                    ))
                    sessions_run += 1
                    counted = learners.window(simulated)
                    standings = progress.domain_standings(user=user, exam=exam)
                    got = {s.domain_id: (s.right, s.answered) for s in standings if s.answered}
                    expected: dict[int, list[int]] = {}
                    for _, domain_id, right, _ in counted:
                        bucket = expected.setdefault(domain_id, [0, 0])
                        if bucket[1] < progress.MASTERY_WINDOW:
                            bucket[0] += right
                            bucket[1] += 1
                    assert got == {d: tuple(v) for d, v in expected.items()}, (got, expected)
                    # The ability's window holds the same counted answers (as a multiset) as the fast path's.
                    assert sorted(ability.counted_window(user=user, exam=exam)) == sorted(counted)
                    checked += 1
            raise Rollback
    except Rollback:
        pass
    return {"learners": learners_count, "sessions": sessions_run, "states_compared": checked}


# --- 2. readiness ----------------------------------------------------------------------------


def population_reference(*, bank: learners.Bank, count: int, rng: random.Random,
                         kinds: tuple[str, ...]) -> tuple[learners.Reference, dict]:
    """Calibrate the bank as the app's statistics refresh would: a population of these kinds studies,
    the refresh's estimators read their first answers (the difficulties, the ability population and
    the drift prior). Returns the reference and how far it landed from the truth."""
    prior = learners.Reference(difficulty={q: rasch.LEVEL_OFFSET[bank.level[q]] for q in bank.owner},
                               ability_mean=0.5, ability_sd=1.5)
    population = []
    for n in range(count):
        learner = learners.new_learner(rng=rng, bank=bank, kind=kinds[n % len(kinds)])
        for _ in range(rng.randint(1, 14)):
            learners.take_step(learner, bank, rng, prior)
        population.append(learner)
    reference = learners.calibrate(bank, population)
    truth = np.array([bank.true_b[q] for q in sorted(bank.owner)])
    got = np.array([reference.difficulty[q] for q in sorted(bank.owner)])
    truth = truth - truth.mean()
    drift = reference.drift
    return reference, {
        "population": count, "kinds": list(kinds), "responses": sum(learner.counted for learner in population),
        "correlation": float(np.corrcoef(truth, got)[0, 1]), "rmse": float(np.sqrt(((truth - got) ** 2).mean())),
        "drift_mean": drift.mean if drift else None, "drift_sd": drift.sd if drift else None,
        "drift_learners": drift.learners if drift else 0,
        "slope_mean": reference.slope_mean, "slope_sd": reference.slope_sd,
    }


def readiness_run(*, kind: str, count: int, rng: random.Random, bank: learners.Bank, reference: learners.Reference,
                  kinds: tuple[str, ...] | None = None) -> dict:
    """`count` learners of `kind` (or, with `kinds`, of those kinds in turn: a mixed population)."""
    rows, standing_changes = [], []
    for n in range(count):
        own = kinds[n % len(kinds)] if kinds else kind
        learner = learners.new_learner(rng=rng, bank=bank, kind=own)
        before = None
        for _ in range(rng.randint(1, 14)):
            mode = learners.take_step(learner, bank, rng, reference)
            if own == "selective" and n < count // 5:
                # The standing across a practice session, at a constant ability: should not move on average.
                after = learners.estimate(learner, bank, reference, seed=n)
                if before is not None and after is not None and mode != "mock":
                    standing_changes.append(after.standing - before.standing)
                before = after
        estimate = learners.estimate(learner, bank, reference, seed=n)
        if estimate is None:
            continue
        oracle = learners.oracle_width(learner, bank)
        ideal = learners.ideal_width(learner, bank, seed=n)
        grade, _ = learners.take_mock(learner, bank, rng, record=False, difficulty=reference.difficulty)
        centre = 100 * sum(k * p for k, p in enumerate(estimate.next_distribution)) / estimate.seats
        rows.append({
            "kind": own, "counted": learner.counted, "theta": learner.theta,
            "inside": estimate.next_low_right <= grade.right <= estimate.next_high_right,
            "error": 100 * grade.right / estimate.seats - centre,
            "next_width": estimate.next_high - estimate.next_low, "oracle_width": oracle, "ideal_width": ideal,
            "pass_chance": estimate.pass_chance, "passed": grade.passed,
        })
    result = summarise(rows, standing_changes)
    if kinds:
        result["by_kind"] = {k: summarise([r for r in rows if r["kind"] == k], [])["overall"] for k in kinds}
    return result


def summarise(rows: list[dict], standing_changes: list[float]) -> dict:
    def summary(subset: list[dict]) -> dict:
        coverage, coverage_se = proportion(sum(r["inside"] for r in subset), len(subset))
        mean = (lambda key: sum(r[key] for r in subset) / len(subset)) if subset else (lambda key: math.nan)
        return {"learners": len(subset), "coverage": coverage, "coverage_se": coverage_se, "error": mean("error"),
                "next_width": mean("next_width"), "oracle_width": mean("oracle_width"),
                "ideal_width": mean("ideal_width")}

    bins = []
    for b in range(10):
        subset = [r for r in rows if min(9, int(r["pass_chance"] * 10)) == b]
        observed, observed_se = proportion(sum(r["passed"] for r in subset), len(subset))
        predicted = sum(r["pass_chance"] for r in subset) / len(subset) if subset else math.nan
        bins.append({"bin": f"{b / 10:.1f}–{(b + 1) / 10:.1f}", "learners": len(subset), "predicted": predicted,
                     "observed": observed, "observed_se": observed_se})
    brier = sum((r["pass_chance"] - r["passed"]) ** 2 for r in rows) / len(rows)
    errors = [r["error"] for r in rows]
    return {
        "with_estimate": len(rows), "overall": summary(rows),
        "error_se": float(np.std(errors) / math.sqrt(len(errors))) if errors else math.nan,
        "from_60": summary([r for r in rows if r["counted"] >= 60]),
        "by_counted": [{"counted": f"{lo}–{hi}", **summary([r for r in rows if lo <= r["counted"] <= hi])}
                       for lo, hi in COUNTED_BUCKETS],
        "low_ability": summary([r for r in rows if r["theta"] < 0.0]),
        "pass_bins": bins, "brier": brier,
        "standing_change": float(np.mean(standing_changes)) if standing_changes else math.nan,
        "standing_change_se": float(np.std(standing_changes) / math.sqrt(len(standing_changes))) if standing_changes else math.nan,
        "standing_changes": len(standing_changes),
    }


def form_spread(*, bank: learners.Bank, forms: int, rng: random.Random, drawer) -> float:
    """The SD, form to form, of the expected raw score (percent) at a fixed ability on the true difficulties."""
    scores = []
    for _ in range(forms):
        slots = drawer(set())
        scores.append(100 * sum(1 / (1 + math.exp(-(1.0 - bank.true_b[q]))) for _, q in slots) / len(slots))
    return float(np.std(scores))


# --- report ------------------------------------------------------------------------------------


def pct(value: float, se: float | None = None) -> str:
    if value != value:  # nan
        return "—"
    return f"{100 * value:.1f}%" + (f" ± {100 * se:.1f}" if se is not None and se == se else "")


def markdown(results: dict, command: str) -> str:
    m, s, c = results["miskey"], results["services"], results["calibration"]
    lines = [
        f"Command: `{command}` (code {results['code_version']}, seed {results['seed']}, {results['seconds']:.0f} s).",
        "Errors are one Monte Carlo standard error.",
        "",
        f"**Services check**: {s['learners']} learners, {s['sessions']} sessions through `exams.room.services`; after each, "
        f"the database's mastery counts and the ability's window of counted answers equalled the fast simulation's "
        f"({s['states_compared']} states).",
        "",
        "**The bank and the drift prior, learned by the app's estimators** (the statistics refresh's "
        "`rasch.calibrate` and `rasch.drift_population`) from a population of simulated learners of the same kind "
        "as those measured (first answers only; true difficulties and slopes never shown to them). Each kind's "
        "population is its own: the difficulties, the ability population and the drift prior of each row below "
        "come from learners like those it measures; the last population mixes all four kinds in equal shares. "
        "True drift: 0 for random, selective and guessing learners, "
        f"+{10 * learners.GROWTH:.1f} logits per 10 attempts for improving ones.",
        "",
        "| population | learners | counted answers | difficulties: correlation with the truth | RMSE (logits) | "
        "drift per 10 attempts: mean | SD | from learners (≥ 3 attempts) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in c.items():
        drift = ("—", "—") if row["drift_mean"] is None else (f"{row['drift_mean']:+.2f}", f"{row['drift_sd']:.2f}")
        lines.append(f"| {name} | {row['population']:,} | {row['responses']:,} | {row['correlation']:.3f} | "
                     f"{row['rmse']:.2f} | {drift[0]} | {drift[1]} | {row['drift_learners']:,} |")
    lines += [
        "",
        "**Next mock, per kind of learner** (targets: coverage ≥ 90% overall and ≥ 88% at every history length "
        "from 60; mean signed error, next score − predicted centre, within ±1 point; P(pass) within 8 points per bin):",
        "",
        "| learners | simulated | coverage | from 60 counted | mean signed error | width | ideal width | oracle width | Brier | selective: standing change per practice session |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, r in results["readiness"].items():
        change = (f"{r['standing_change']:+.2f} ± {r['standing_change_se']:.2f} pts ({r['standing_changes']:,} sessions)"
                  if r["standing_changes"] else "—")
        lines.append(
            f"| {kind} | {r['with_estimate']:,} | {pct(r['overall']['coverage'], r['overall']['coverage_se'])} | "
            f"{pct(r['from_60']['coverage'], r['from_60']['coverage_se'])} | {r['overall']['error']:+.2f} ± {r['error_se']:.2f} pts | "
            f"{r['overall']['next_width']:.1f} pts | {r['overall']['ideal_width']:.1f} pts | {r['overall']['oracle_width']:.1f} pts | {r['brier']:.4f} | {change} |"
        )
    lines += ["", "By history length (counted answers), coverage / mean signed error / width / ideal width / oracle width:", "",
              "| counted | " + " | ".join(results["readiness"]) + " |", "|---|" + "---:|" * len(results["readiness"])]
    for index, (lo, hi) in enumerate(COUNTED_BUCKETS):
        cells = []
        for r in results["readiness"].values():
            row = r["by_counted"][index]
            cells.append("—" if not row["learners"] else
                         f"{pct(row['coverage'])} / {row['error']:+.1f} / {row['next_width']:.1f} / {row['ideal_width']:.1f} / {row['oracle_width']:.1f} (n {row['learners']:,})")
        lines.append(f"| {lo}–{hi} | " + " | ".join(cells) + " |")
    mixed = results["readiness"].get("mixed")
    if mixed and "by_kind" in mixed:
        lines += ["", "**Mixed population** (all four kinds calibrate the bank and the drift prior together; "
                      "the measured learners are of the four kinds in turn), per kind: coverage / mean signed error / width / ideal width / oracle width: "
                      + "; ".join(f"{k} {pct(v['coverage'])} / {v['error']:+.1f} / {v['next_width']:.1f} / {v['ideal_width']:.1f} / {v['oracle_width']:.1f} "
                                  f"(n {v['learners']:,})" for k, v in mixed["by_kind"].items()) + "."]
    guess = results["readiness"].get("guessing")
    if guess:
        low = guess["low_ability"]
        lines += ["", f"**1PL's blindness to guessing**: learners whose every chance has a floor of 1/4 (a 3PL truth), "
                      f"of ability below 0: coverage {pct(low['coverage'], low['coverage_se'])}, mean signed error "
                      f"{low['error']:+.2f} pts ({low['learners']:,} learners)."]
    lines += ["", "**P(pass) calibration** (observed pass rate − mean P(pass), per 0.1 bin with ≥ 100 learners):", "",
              "| bin | " + " | ".join(results["readiness"]) + " |", "|---|" + "---:|" * len(results["readiness"])]
    for index in range(10):
        cells = []
        for r in results["readiness"].values():
            row = r["pass_bins"][index]
            cells.append("—" if row["learners"] < 100 else
                         f"{100 * (row['observed'] - row['predicted']):+.1f} (n {row['learners']:,})")
        lines.append(f"| {results['readiness'][next(iter(results['readiness']))]['pass_bins'][index]['bin']} | " + " | ".join(cells) + " |")
    f = results["forms"]
    lines += ["", f"**Forms**: SD, form to form, of the expected raw score at θ = 1 on the true difficulties "
                  f"({f['forms']:,} forms each): plain draw {f['plain']:.2f} pts, balanced draw {f['balanced']:.2f} pts "
                  f"({f['balanced'] / f['plain']:.2f}×; target ≤ 0.4×)."]
    lines += [
        "",
        "**Mis-key flag** (planted wrong keys on a tenth of the items; errors treat each form as a cluster). "
        "Targets: recall ≥ 95%, false flags ≤ 1% at 200 attempts per item and ≤ 2% at 100.",
        "",
        "| attempts per item | forms | planted / good items | recall | of them very likely | false flags | false very likely |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in m:
        lines.append(
            f"| {row['attempts_per_item']} | {row['forms']} | {row['planted']:,} / {row['good']:,} | "
            f"{pct(row['recall'], row['recall_se'])} | {pct(row['recall_very_likely'], row['recall_very_likely_se'])} | "
            f"{pct(row['false_flags'], row['false_flags_se'])} | {pct(row['false_very_likely'], row['false_very_likely_se'])} |"
        )
    return "\n".join(lines) + "\n"


def balanced_drawer(bank: learners.Bank, reference: learners.Reference, rng: random.Random):
    """The mock draw as the app runs it (exams.room.draw.draw with the calibrated difficulties)."""
    def drawer(seen):
        return draw.draw(pool=bank.pool, quotas=bank.quotas, seen=seen, rng=rng, difficulty=reference.difficulty)
    return drawer


def population_run(*, name: str, population_kinds: tuple[str, ...], learners_per_kind: int, population: int,
                   seed: int) -> tuple[str, dict, dict, learners.Reference]:
    """One population: it calibrates the bank and the drift prior, then learners like it are measured.
    Seeded by its own name, so populations run alike whether one after the other or in parallel."""
    rng = random.Random(f"{seed}:{name}")
    bank = learners.simulated_bank(rng=random.Random(seed))
    reference, calibration = population_reference(bank=bank, count=population, rng=rng, kinds=population_kinds)
    readiness = readiness_run(kind=name, count=learners_per_kind, rng=rng, bank=bank, reference=reference,
                              kinds=population_kinds if name == "mixed" else None)
    print(name, {k: readiness["overall"][k] for k in ("coverage", "error", "next_width", "oracle_width")},
          "drift", calibration["drift_mean"], calibration["drift_sd"], "standing change", readiness["standing_change"],
          flush=True)
    return name, calibration, readiness, reference


def measure(*, learners_per_kind: int, population: int, forms: int, seed: int, kinds=learners.KINDS,
            mixed: bool = True, jobs: int = 1) -> dict:
    """Per kind, a population of that kind calibrates the bank and the drift prior, then learners of
    that kind are measured; with `mixed`, a population of every kind together does both. The bank is
    the same for every population (seeded by `seed`); `jobs` populations run at once."""
    runs = [(kind, (kind,)) for kind in kinds] + ([("mixed", tuple(kinds))] if mixed else [])
    arguments = [dict(name=name, population_kinds=population_kinds, learners_per_kind=learners_per_kind,
                      population=population, seed=seed) for name, population_kinds in runs]
    if jobs > 1:
        import multiprocessing

        from django.db import connections

        connections.close_all()  # the populations need no database; no connection crosses a fork
        with multiprocessing.get_context("fork").Pool(min(jobs, len(runs))) as pool:
            done = pool.map(_population_run, arguments)
    else:
        done = [population_run(**a) for a in arguments]
    results = {"calibration": {name: c for name, c, _, _ in done}, "readiness": {name: r for name, _, r, _ in done}}
    reference = done[0][3]
    rng = random.Random(f"{seed}:forms")
    bank = learners.simulated_bank(rng=random.Random(seed))
    plain = lambda seen: draw.draw(pool=bank.pool, quotas=bank.quotas, seen=seen, rng=rng)  # noqa: E731
    results["forms"] = {"forms": forms, "plain": form_spread(bank=bank, forms=forms, rng=rng, drawer=plain),
                        "balanced": form_spread(bank=bank, forms=forms, rng=rng, drawer=balanced_drawer(bank, reference, rng))}
    return results


def _population_run(arguments: dict):
    return population_run(**arguments)


def _miskey(seed: int, forms: int, attempts: int) -> dict:
    return miskey.measure(seed=seed, forms=forms, attempts=attempts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=10000, help="simulated learners of each kind")
    parser.add_argument("--population", type=int, default=3000, help="simulated learners whose answers calibrate the bank")
    parser.add_argument("--forms", type=int, default=300, help="simulated forms per n for the mis-key part, and for the form spread ×10")
    parser.add_argument("--services-learners", type=int, default=12)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--no-doc", action="store_true", help="do not touch docs/MEASUREMENT.md")
    parser.add_argument("--jobs", type=int, default=1, help="populations measured at once (processes); the figures do not depend on it")
    args = parser.parse_args()
    started = time.perf_counter()
    results = {"seed": args.seed, "code_version": code_version()}
    results["services"] = services_check(learners_count=args.services_learners, sessions=6, seed=args.seed)
    print("services check:", results["services"], flush=True)
    results |= measure(learners_per_kind=args.learners, population=args.population, forms=args.forms * 10, seed=args.seed,
                       jobs=args.jobs)
    sizes = (30, 50, 100, 200)
    if args.jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(min(args.jobs, len(sizes))) as pool:
            results["miskey"] = pool.starmap(_miskey, [(args.seed + n, args.forms, n) for n in sizes])
    else:
        results["miskey"] = [_miskey(args.seed + n, args.forms, n) for n in sizes]
    results["seconds"] = time.perf_counter() - started
    command = "DATABASE_URL=… .venv/bin/python bench/calibration/run.py" + "".join(
        f" --{name.replace('_', '-')} {getattr(args, name)}" for name in ("learners", "population", "forms", "seed", "jobs")
    )
    text = markdown(results, command)
    write_results(ROOT / "bench" / "results", ROOT / "docs" / ("MEASUREMENT.md" if not args.no_doc else "-"),
                  "calibration" if not args.no_doc else "calibration-look", results, text)


if __name__ == "__main__":
    main()
