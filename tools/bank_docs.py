#!/usr/bin/env python3
"""Write docs/BLUEPRINT.md (active questions per domain and topic) and docs/BANK_REVIEW.md
(the per-file review logs of docs/bank-review/, with totals) from the shipped fixtures.

    python3 tools/bank_docs.py          # rewrite both
    python3 tools/bank_docs.py --check  # exit 1 if either is out of date

tests/test_bank.py holds BLUEPRINT.md equal to the bank in the database and reads each
question's level and NVIDIA mark from BANK_REVIEW.md.
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


_TABLE_ROW = re.compile(r"^\| (\d+) \| (?:recall|concept|application) \| (?:easy|medium|hard) \| (?:yes|no) \| [^|]* \| (.*) \|\s*$")
_BLIND = re.compile(r"Second reader answered (\d+) active questions blind before seeing the keys: (\d+) agreed, (\d+) disagreed")


def review() -> str:
    logs = sorted((DOCS / "bank-review").glob("*.md"))
    rows = Counter()
    answered = agreed = disagreed = 0
    for path in logs:
        text = path.read_text()
        for match in _BLIND.finditer(text):
            answered, agreed, disagreed = answered + int(match[1]), agreed + int(match[2]), disagreed + int(match[3])
        for line in text.splitlines():
            if match := _TABLE_ROW.match(line):
                change = match[2].strip().lower()
                rows["retired" if change.startswith("retired") else "new" if change.startswith("new") else "kept or rewritten"] += 1
                rows["fact check"] += change.startswith("new (fact check")
    lines = [
        "# Review of the NCA-GENM bank, third edition",
        "",
        "The third edition (2026-12): each domain's author fixed every finding of the two blind",
        "reviews (`../shared/reviews/bank-review-2026-12-03-set1.md`, `…-set2.md`), set an intended",
        "difficulty, a review date and versioned sources on every question, moved questions on",
        "retired interfaces to the current ones, and audited the rest for cues; then a blind read of",
        "a random sample and a fix round (`bank-review/blind-read-2026-12-03.md`, included below).",
        "Each row's \"3rd ed.\" note says what changed; \"2nd ed.\" what the second edition did.",
        "",
        "How the second edition was made: each domain file was written by one author, working to",
        "`docs/BANK_AUTHORING.md` and fixing every finding of the first edition's subject-matter",
        "review (`../shared/reviews/bank-audit-2026-12.md`). A second reader then answered every",
        "active question of the file blind, from a dump without keys (`tools/bank_blind.py questions`),",
        "before comparing with the keys (`tools/bank_blind.py compare`); disagreements and anything",
        "else the second reader found were resolved in the file and are logged below.",
        "",
        "Each file's table gives, per question id, its **level** (recall / concept / application),",
        "its intended **difficulty** (easy / medium / hard, docs/BANK_AUTHORING.md)",
        "and whether it needs **NVIDIA**-specific knowledge; `tests/test_bank.py` reads them to hold",
        "the shares (at least 65% application per domain, at least 30% NVIDIA bank-wide).",
        "",
        "## Totals",
        "",
        f"- Questions in the review tables: {sum(rows.values())} "
        f"({rows['new']} new, {rows['kept or rewritten']} first-edition kept or rewritten, {rows['retired']} retired).",
        f"- Answered blind by the second reader: {answered}; agreed with the key: {agreed}; disagreed: {disagreed}.",
        f"- Fact check (a third reader, against NVIDIA's documentation and code; each file's \"Fact check\" section): "
        f"{rows['fact check']} questions replaced where a fact changed the key or made a distractor defensible; "
        "the other fixes are to wording, explanations and source titles.",
        f"- Cue figures and topic counts: `python3 tools/bank_check.py`; blueprint: `docs/BLUEPRINT.md`.",
        "",
    ]
    for path in logs:
        lines += [path.read_text().rstrip("\n").replace("\n## ", "\n### ", 0), ""]
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
