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

from exams.study import readiness  # noqa: E402

COUNTED_BUCKETS = ((20, 59), (60, 119), (120, 179), (180, 239), (240, 299), (300, 350))


def proportion(hits: int, n: int) -> tuple[float, float]:
    p = hits / n if n else math.nan
    return p, math.sqrt(p * (1 - p) / n) if n else math.nan


# --- 1. through the services -------------------------------------------------------------


def services_check(*, learners_count: int, sessions: int, seed: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import transaction

    from exams.models import Attempt, AttemptMode, Choice, Domain, Exam, Question, QuestionKind
    from exams.room import services
    from exams.study import progress

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
                        kind=QuestionKind.SINGLE, choose=1,
                    )
                    Choice.objects.bulk_create(
                        Choice(question=question, label=label, text=f"Choice {label}", is_correct=label == "A", order=n)
                        for n, label in enumerate("ABCD")
                    )
                    difficulty[question.pk] = rng.gauss(0.0, 1.0)
            by_db_domain = {d.pk: simulated for simulated, d in domains.items()}
            keys = dict(Choice.objects.filter(question__exam=exam, is_correct=True).values_list("question_id", "pk"))
            wrongs = dict(Choice.objects.filter(question__exam=exam, label="B").values_list("question_id", "pk"))
            bank = learners.Blueprint(
                domains=tuple((domains[d].pk, w, o) for d, w, o in learners.NCA_DOMAINS), question_count=60,
                passing_score=70, pool={}, difficulty=difficulty,
            )
            for number in range(learners_count):
                user = get_user_model().objects.create_user(username=f"calibration-{number}")
                simulated = learners.new_learner(rng=rng, bank=learners.simulated_bank(rng=rng, per_domain=1))
                simulated.offsets = {domains[d].pk: offset for d, offset in simulated.offsets.items()}
                simulated.window = {domains[d].pk: w for d, w in simulated.window.items()}
                for _ in range(sessions):
                    roll = rng.random()
                    mode = AttemptMode.MOCK if roll < 0.4 else AttemptMode.PRACTICE if roll < 0.7 else AttemptMode.DRILL
                    domain = domains[rng.choice(list(domains))] if mode == AttemptMode.DRILL else None
                    attempt = services.attempt_start(user=user, exam=exam, mode=mode, domain=domain, count=10,
                                                     seed=rng.randrange(2**32)).attempt
                    outcomes = []
                    with transaction.atomic():
                        attempt = Attempt.objects.select_for_update().get(pk=attempt.pk)
                        for response in attempt.responses.order_by("position"):
                            answered = mode != AttemptMode.MOCK or rng.random() >= simulated.skip
                            right = answered and rng.random() < simulated.chance(
                                domain_id=response.domain_id, difficulty=difficulty[response.question_id])
                            if answered:
                                choice = keys[response.question_id] if right else wrongs[response.question_id]
                                attempt.record_answer(response=response, choice_ids=[choice])
                                if mode != AttemptMode.MOCK and rng.random() < 0.5:
                                    services.attempt_check(attempt=attempt, response=response)
                            # The fast path's rule: a mock's every slot counts, elsewhere an answered one.
                            if mode == AttemptMode.MOCK or answered:
                                outcomes.append((response.domain_id, right))
                    services.attempt_submit(user=user, attempt_id=attempt.pk)
                    for domain_id, right in outcomes:
                        simulated.window[domain_id].append(right)
                    sessions_run += 1
                    standings = progress.domain_standings(user=user, exam=exam)
                    got = {s.domain_id: (s.right, s.answered) for s in standings if s.answered}
                    assert got == learners.mastery_counts(simulated), (got, learners.mastery_counts(simulated))
                    from_db = progress.readiness_estimate(standings, exam=exam)
                    fast = readiness.estimate(domains=learners.evidence(simulated, bank), passing_score=70)
                    assert from_db == fast, (from_db, fast)
                    checked += 1
            del by_db_domain
            raise Rollback
    except Rollback:
        pass
    return {"learners": learners_count, "sessions": sessions_run, "states_compared": checked}


# --- 2. readiness ----------------------------------------------------------------------------


def readiness_run(*, count: int, seed: int) -> dict:
    rng = random.Random(seed)
    bank = learners.simulated_bank(rng=rng)
    rows = []
    for _ in range(count):
        learner = learners.new_learner(rng=rng, bank=bank)
        for _ in range(rng.randint(1, 14)):
            learners.take_step(learner, bank, rng)
        estimate = readiness.estimate(domains=learners.evidence(learner, bank), passing_score=bank.passing_score)
        if estimate is None:
            continue
        true_mean = learner.true_mock_mean(bank)
        grade = learners.take_mock(learner, bank, rng, record=False)
        rows.append({
            "counted": estimate.counted, "mocks": learner.mocks,
            "inside": estimate.next_low_right <= grade.right <= estimate.next_high_right,
            "standing_holds_mean": estimate.standing_low <= true_mean <= estimate.standing_high,
            "next_width": estimate.next_high - estimate.next_low,
            "standing_width": estimate.standing_high - estimate.standing_low,
            "pass_chance": estimate.pass_chance, "passed": grade.passed,
        })

    def summary(subset: list[dict]) -> dict:
        coverage, coverage_se = proportion(sum(r["inside"] for r in subset), len(subset))
        return {
            "learners": len(subset), "coverage": coverage, "coverage_se": coverage_se,
            "next_width": sum(r["next_width"] for r in subset) / len(subset) if subset else math.nan,
            "standing_width": sum(r["standing_width"] for r in subset) / len(subset) if subset else math.nan,
            "standing_covers_mean": sum(r["standing_holds_mean"] for r in subset) / len(subset) if subset else math.nan,
        }

    bins = []
    for b in range(10):
        subset = [r for r in rows if min(9, int(r["pass_chance"] * 10)) == b]
        observed, observed_se = proportion(sum(r["passed"] for r in subset), len(subset))
        predicted = sum(r["pass_chance"] for r in subset) / len(subset) if subset else math.nan
        bins.append({"bin": f"{b / 10:.1f}–{(b + 1) / 10:.1f}", "learners": len(subset), "predicted": predicted,
                     "observed": observed, "observed_se": observed_se})
    brier = sum((r["pass_chance"] - r["passed"]) ** 2 for r in rows) / len(rows)
    base = sum(r["passed"] for r in rows) / len(rows)
    return {
        "simulated": count, "with_estimate": len(rows), "overall": summary(rows),
        "from_60": summary([r for r in rows if r["counted"] >= 60]),
        "by_counted": [{"counted": f"{lo}–{hi}", **summary([r for r in rows if lo <= r["counted"] <= hi])}
                       for lo, hi in COUNTED_BUCKETS],
        "by_mocks": [{"mocks": label, **summary([r for r in rows if test(r["mocks"])])}
                     for label, test in (("0", lambda m: m == 0), ("1", lambda m: m == 1), ("2", lambda m: m == 2),
                                         ("3", lambda m: m == 3), ("4–5", lambda m: 4 <= m <= 5),
                                         ("6+", lambda m: m >= 6))],
        "pass_bins": bins, "brier": brier, "brier_base_rate": base * (1 - base), "pass_rate": base,
    }


# --- report ------------------------------------------------------------------------------------


def pct(value: float, se: float | None = None) -> str:
    if value != value:  # nan
        return "—"
    return f"{100 * value:.1f}%" + (f" ± {100 * se:.1f}" if se is not None and se == se else "")


def markdown(results: dict, command: str) -> str:
    r, m = results["readiness"], results["miskey"]
    s = results["services"]
    lines = [
        f"Command: `{command}` (code {results['code_version']}, seed {results['seed']}, {results['seconds']:.0f} s).",
        "Errors are one Monte Carlo standard error.",
        "",
        f"**Services check**: {s['learners']} learners, {s['sessions']} sessions through `exams.room.services`; after each, "
        f"the database's mastery counts and estimate equalled the fast simulation's ({s['states_compared']} states).",
        "",
        f"**Next-mock coverage** ({r['with_estimate']:,} of {r['simulated']:,} simulated learners had an estimate): "
        f"overall {pct(r['overall']['coverage'], r['overall']['coverage_se'])}, from 60 counted responses "
        f"{pct(r['from_60']['coverage'], r['from_60']['coverage_se'])} (target ≥ 90% overall, ≥ 88% per history length from 60).",
        "",
        "| counted responses | learners | next mock in range | next-mock range width | standing band width | standing band holds the true mean |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in r["by_counted"]:
        lines.append(f"| {row['counted']} | {row['learners']:,} | {pct(row['coverage'], row['coverage_se'])} | "
                     f"{row['next_width']:.1f} pts | {row['standing_width']:.1f} pts | {pct(row['standing_covers_mean'])} |")
    lines += ["", "| mocks taken before | learners | next mock in range | range width |", "|---|---:|---:|---:|"]
    for row in r["by_mocks"]:
        lines.append(f"| {row['mocks']} | {row['learners']:,} | {pct(row['coverage'], row['coverage_se'])} | {row['next_width']:.1f} pts |")
    lines += [
        "",
        f"**P(pass) calibration**: Brier score {r['brier']:.4f} (always saying the base rate {pct(r['pass_rate'])} "
        f"would score {r['brier_base_rate']:.4f}). Target: every bin with ≥ 200 learners within 8 points.",
        "",
        "| P(pass) bin | learners | mean P(pass) | observed pass rate | gap |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in r["pass_bins"]:
        gap = 100 * (row["observed"] - row["predicted"]) if row["learners"] else math.nan
        lines.append(f"| {row['bin']} | {row['learners']:,} | {pct(row['predicted'])} | "
                     f"{pct(row['observed'], row['observed_se'])} | {gap:+.1f} pts |" if row["learners"] else
                     f"| {row['bin']} | 0 | — | — | — |")
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=10000)
    parser.add_argument("--forms", type=int, default=300, help="simulated forms per n for the mis-key part")
    parser.add_argument("--services-learners", type=int, default=12)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--no-doc", action="store_true", help="do not touch docs/MEASUREMENT.md")
    parser.add_argument("--skips", help="comma-separated shares of a mock left unanswered, one drawn per learner "
                                        f"(default {','.join(map(str, learners.SKIPS))}); writes calibration-skips")
    args = parser.parse_args()
    if args.skips:
        learners.SKIPS[:] = [float(share) for share in args.skips.split(",")]
        args.no_doc = True
    started = time.perf_counter()
    results = {"seed": args.seed, "code_version": code_version()}
    results["services"] = services_check(learners_count=args.services_learners, sessions=6, seed=args.seed)
    print("services check:", results["services"], flush=True)
    results["readiness"] = readiness_run(count=args.learners, seed=args.seed)
    print("readiness overall:", results["readiness"]["overall"], flush=True)
    results["miskey"] = [miskey.measure(seed=args.seed + n, forms=args.forms, attempts=n) for n in (30, 50, 100, 200)]
    results["seconds"] = time.perf_counter() - started
    command = "DATABASE_URL=… .venv/bin/python bench/calibration/run.py" + "".join(
        f" --{name.replace('_', '-')} {getattr(args, name)}" for name in ("learners", "forms", "seed", "skips")
        if getattr(args, name) is not None
    )
    text = markdown(results, command)
    # --no-doc writes the figures beside the doc's, for a look that must not replace them.
    write_results(ROOT / "bench" / "results", ROOT / "docs" / ("MEASUREMENT.md" if not args.no_doc else "-"),
                  "calibration" if not args.no_doc else "calibration-skips" if args.skips else "calibration-look",
                  results, text)


if __name__ == "__main__":
    main()
