#!/usr/bin/env python3
"""Write docs/BLUEPRINT.md (active questions per domain and topic) and docs/BANK_REVIEW.md
(the per-file review logs of docs/bank-review/, with totals) from the shipped fixtures.

    python3 tools/bank_docs.py          # rewrite both
    python3 tools/bank_docs.py --check  # exit 1 if either is out of date

tests/test_bank.py holds BLUEPRINT.md equal to the bank in the database and reads each
question's level and NVIDIA mark from BANK_REVIEW.md (the review logs' columns: Q, Level,
Difficulty, NVIDIA, Topic, Change).
"""
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BANK = ROOT / "fixtures" / "bank"


def domains() -> list[dict]:
    exam = json.loads((ROOT / "fixtures" / "nca-genm.json").read_text())
    return sorted((dict(obj["fields"], pk=obj["pk"]) for obj in exam if obj["model"] == "exams.domain"), key=lambda d: d["order"])


def active_questions() -> list[dict]:
    questions = []
    for path in sorted(BANK.glob("*.json")):
        for obj in json.loads(path.read_text()):
            if obj["model"] == "exams.question" and obj["fields"].get("is_active", True):
                questions.append(dict(obj["fields"], pk=obj["pk"]))
    return questions


def blueprint() -> str:
    questions = active_questions()
    lines = [
        "# NCA-GENM blueprint: topics and questions",
        "",
        "NVIDIA publishes the seven domains of the NCA-GENM exam and their weights. The topics below",
        "break each domain down the way NVIDIA's exam guide and its recommended DLI courses do, with",
        "the subject-matter review of the first edition (`../shared/reviews/bank-audit-2026-12.md`)",
        "as the starting list of what must be covered. Each count is the number of active questions",
        "in the shipped bank with that topic; `tests/test_bank.py` keeps this page equal to the bank",
        "(regenerate it with `python3 tools/bank_docs.py`).",
        "",
        f"{len(questions)} active questions in all.",
    ]
    for domain in domains():
        counts = Counter(q["topic"] or "No topic" for q in questions if q["domain"] == domain["pk"])
        lines += [
            "",
            f"## {domain['name']} ({domain['weight']}%)",
            "",
            f"{sum(counts.values())} questions.",
            "",
            "| Topic | Questions |",
            "|---|---|",
        ]
        lines += [f"| {topic} | {n} |" for topic, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    return "\n".join(lines) + "\n"


_TABLE_ROW = re.compile(r"^\| (\d+) \| (?:recall|concept|application) \| (easy|medium|hard) \| (?:yes|no) \| [^|]* \| (.*) \|\s*$")
_BLIND = re.compile(r"Second reader answered (\d+) active questions blind before seeing the keys: (\d+) agreed, (\d+) disagreed")


def _change_kind(change: str) -> str:
    """What this edition did to a question, from its log's Change cell: a third-edition cell
    starts "3rd ed.: " (or states the third-edition change first) and may go on with the
    second edition's note."""
    change = change.strip().lower().removeprefix("3rd ed.:").strip()
    if change.startswith(("retired earlier", "retired in the second", "inactive since", "retired (second")):
        return "retired before"
    if change.startswith("retired"):
        return "retired"
    if change.startswith("new"):
        return "new"
    return "kept or rewritten"


def review() -> str:
    logs = sorted((DOCS / "bank-review").glob("*.md"))
    rows = Counter()
    difficulty = Counter()
    answered = agreed = disagreed = 0
    for path in logs:
        text = path.read_text()
        for match in _BLIND.finditer(text):
            answered, agreed, disagreed = answered + int(match[1]), agreed + int(match[2]), disagreed + int(match[3])
        for line in text.splitlines():
            if match := _TABLE_ROW.match(line):
                rows[_change_kind(match[3])] += 1
    for question in active_questions():
        difficulty[question.get("difficulty", "medium")] += 1
    lines = [
        "# Review of the NCA-GENM bank, third edition",
        "",
        "How it was made: each domain file was rewritten by one author, working to",
        "`docs/BANK_AUTHORING.md`, fixing every finding of the two blind reviews of 2026-12-03",
        "(`../shared/reviews/bank-review-2026-12-03-set1.md` and `-set2.md`) and auditing every other",
        "question for the same cues (answerable from the stem and choices alone, by elimination, or by",
        "a word the key shares with the stem) and for currency against NVIDIA's documentation as of",
        "late 2026. A second reader answered every new or changed question blind; a third pass checked",
        "facts and versions. Each file's log below says what changed and why, question by question,",
        "with its \"Third edition\" section first and the second edition's notes kept for the record.",
        "",
        "Each file's table gives, per question id, its **level** (recall / concept / application), its",
        "intended **difficulty** (easy / medium / hard), whether it needs **NVIDIA**-specific knowledge,",
        "its topic and the change. `tests/test_bank.py` reads the level and NVIDIA columns to hold the",
        "shares (at least 70% application per domain, at least 30% NVIDIA bank-wide); difficulty is",
        "held from the database field `Question.difficulty`, which the table repeats.",
        "",
        "## Totals",
        "",
        f"- Questions in the review tables: {sum(rows.values())} "
        f"({rows['new']} new, {rows['kept or rewritten']} kept, audited or rewritten in place, "
        f"{rows['retired']} retired, {rows['retired before']} retired in an earlier edition).",
        f"- Active questions by difficulty: {difficulty['easy']} easy, {difficulty['medium']} medium, {difficulty['hard']} hard.",
        f"- Answered blind by the second reader (second edition, per file's \"Blind review\"): {answered}; "
        f"agreed with the key: {agreed}; disagreed: {disagreed}.",
        "- Cue figures and topic counts: `python3 tools/bank_check.py`; blueprint: `docs/BLUEPRINT.md`.",
        "",
    ]
    for path in logs:
        lines += [path.read_text().rstrip("\n"), ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    outputs = {DOCS / "BLUEPRINT.md": blueprint(), DOCS / "BANK_REVIEW.md": review()}
    if "--check" in argv:
        stale = [path.name for path, text in outputs.items() if not path.exists() or path.read_text() != text]
        if stale:
            print(f"out of date: {', '.join(stale)} (run python3 tools/bank_docs.py)")
            return 1
        return 0
    for path, text in outputs.items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
