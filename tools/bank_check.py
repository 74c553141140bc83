#!/usr/bin/env python3
"""Print the bank's shape and test-taking cues for fixture files, as tests/test_bank.py measures them.

    python3 tools/bank_check.py fixtures/bank/02-core-ml.json   # one file, against the whole bank
    python3 tools/bank_check.py                                 # every file

Runs without Django or a database, so authors can check a file while writing it.
"""
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from exams.bank import cues as bankcues  # noqa: E402

BANK = ROOT / "fixtures" / "bank"
STOP_WORDS = ROOT / "tests" / "bank_cue_stop_words.txt"
EXHIBITS = BANK / "exhibits"
DOMAINS = {1: "Experimentation", 2: "Core ML and AI Knowledge", 3: "Multimodal Data", 4: "Software Development",
           5: "Data Analysis and Visualization", 6: "Performance Optimization", 7: "Trustworthy AI"}
IMAGE = re.compile(r"^!\[([^\]]+)\]\(exhibit:([\w.-]+)\)$")
FENCE = re.compile(r"^```[\w-]*\n(.*?)\n```$", re.DOTALL)
TABLE_ROW = re.compile(r"^\|.*\|$")


def load(paths):
    questions, choices = {}, defaultdict(list)
    for path in paths:
        for obj in json.loads(Path(path).read_text()):
            if obj["model"] == "exams.question":
                questions[obj["pk"]] = dict(obj["fields"], pk=obj["pk"], file=Path(path).name)
            elif obj["model"] == "exams.choice":
                choices[obj["fields"]["question"]].append(obj["fields"] | {"pk": obj["pk"]})
    for pk, question in questions.items():
        question["choices"] = sorted(choices[pk], key=lambda c: c["order"])
    return questions


def cue_question(q):
    return bankcues.CueQuestion(
        id=q["pk"], domain=DOMAINS[q["domain"]], stem=q["stem"],
        choices=tuple(c["text"] for c in q["choices"]),
        keys=frozenset(i for i, c in enumerate(q["choices"]) if c["is_correct"]),
        exclusion_group=q.get("exclusion_group", ""), labels=tuple(c["label"] for c in q["choices"]),
        topic=q.get("topic", ""),
    )


def stop_words():
    lines = STOP_WORDS.read_text().splitlines()
    return frozenset(w for line in lines if not line.startswith("#") for w in bankcues.distinctive_words(line))


def exhibit_problem(text):
    text = text.strip()
    if not text:
        return None
    if match := IMAGE.match(text):
        path = EXHIBITS / match.group(2)
        if not path.exists():
            return f"image {match.group(2)} is not in fixtures/bank/exhibits/"
        if path.stat().st_size > 500_000:
            return f"image {match.group(2)} is over 500 KB"
        head = path.read_bytes()[:12]
        if not (head.startswith(b"\x89PNG") or head.startswith(b"\xff\xd8\xff") or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")):
            return f"image {match.group(2)} is not PNG, JPEG or WebP"
        return None
    if match := FENCE.match(text):
        return None if len(match.group(1).splitlines()) >= 3 else "fenced block under 3 lines"
    lines = text.splitlines()
    if all(TABLE_ROW.match(line.strip()) for line in lines) and len(lines) >= 4:
        return None
    return "not one fenced block of 3+ lines, one table of 2+ rows, or one exhibit: image"


def structural_problems(q):
    problems = []
    n = len(q["choices"])
    keys = sum(c["is_correct"] for c in q["choices"])
    if not 4 <= n <= 5:
        problems.append(f"{n} choices")
    if [c["label"] for c in q["choices"]] != list("ABCDE"[:n]):
        problems.append("labels are not A, B, C… in order")
    if q["kind"] == "single" and (keys != 1 or q["choose"] != 1):
        problems.append("single-answer question without exactly one key")
    if q["kind"] == "multiple" and not (keys == q["choose"] >= 2):
        problems.append("choose differs from the number of keys")
    if q["kind"] == "multiple" and not re.search(r"\(Choose (two|three|four)\.\)\s*$", q["stem"]):
        problems.append('multiple-select stem does not end "(Choose two.)"')
    for name in ("title", "topic", "stem", "explanation", "sources"):
        if not str(q.get(name, "")).strip():
            problems.append(f"no {name}")
    if len(q.get("topic", "")) > 80:
        problems.append("topic over 80 characters")
    if any(not c["feedback"].strip() for c in q["choices"]):
        problems.append("a choice without feedback")
    if re.search(r"\b(all|none) of the above\b", " ".join(c["text"] for c in q["choices"]), re.I):
        problems.append("all/none of the above")
    if problem := exhibit_problem(q.get("exhibit", "")):
        problems.append(problem)
    return problems


def report(active, scope_ids, label):
    scope = [q for q in active if q["pk"] in scope_ids]
    print(f"\n== {label}: {len(scope)} active questions")
    for q in scope:
        if problems := structural_problems(q):
            print(f"  Q{q['pk']}: {'; '.join(problems)}")
    multiple = sum(q["kind"] == "multiple" for q in scope)
    print(f"  multiple-select: {multiple} ({multiple / max(len(scope), 1):.0%}; wanted 12–20% per domain)")
    exhibits = [q for q in scope if q.get("exhibit", "").strip()]
    images = [q for q in exhibits if q["exhibit"].strip().startswith("![")]
    print(f"  exhibits: {len(exhibits)} ({len(images)} images)")
    topics = Counter((DOMAINS[q["domain"]], q.get("topic", "")) for q in scope)
    for (domain, topic), n in sorted(topics.items()):
        print(f"    {domain} / {topic or 'No topic'}: {n}{'   <-- under 4' if n < 4 else ''}")
    cues = [cue_question(q) for q in scope]
    for domain, (longest, shortest, n) in bankcues.length_cue_by_domain(cues).items():
        flag = "   <-- over 30%" if max(longest, shortest) > 0.30 else ""
        print(f"  {domain}: key longest {longest:.0%}, shortest {shortest:.0%} of {n} single-answer{flag}")
    key_share, distractor_share, cued = bankcues.absolute_word_shares(cues)
    flag = "   <-- over 5 points" if abs(key_share - distractor_share) > 0.05 else ""
    print(f"  absolute words: keys {key_share:.1%}, distractors {distractor_share:.1%}{flag}")
    if cued:
        print(f"    distractor has one, key none: {', '.join(f'Q{i}' for i in cued)}")
    share, echoing = bankcues.stem_echo_share(cues)
    flag = "   <-- under 80%" if share < 0.8 else ""
    print(f"  key repeats no more stem words than a distractor: {share:.0%}{flag}")
    if echoing:
        print(f"    key out-echoes the distractors: {', '.join(f'Q{i}' for i in echoing)}")
    for domain, (share, cued) in bankcues.distinctive_echo_by_domain(cues, stop_words()).items():
        flag = "   <-- over 10%" if share > 0.10 else ""
        print(f"  {domain}: key out-shares every distractor in distinctive stem words: {share:.0%}{flag}")
        if cued:
            print(f"    {', '.join(f'Q{i}' for i in cued)}")
    levels = Counter(q.get("difficulty", "(none)") for q in scope)
    n = max(len(scope), 1)
    flag = "" if 0.2 <= levels["easy"] / n <= 0.3 and 0.2 <= levels["hard"] / n <= 0.3 else "   <-- easy and hard each 20–30%"
    print("  difficulty: " + ", ".join(f"{k} {v} ({v / n:.0%})" for k, v in sorted(levels.items())) + flag)
    positions = bankcues.key_positions(cues)
    total = sum(positions.values()) or 1
    print("  key positions: " + ", ".join(f"{k} {v} ({v / total:.0%})" for k, v in sorted(positions.items())))


def main(argv):
    paths = sorted(BANK.glob("*.json"))
    questions = load(paths)
    active = [q for q in questions.values() if q.get("is_active", True)]
    chosen = [Path(p).name for p in argv] or [p.name for p in paths]
    for name in chosen:
        report(active, {q["pk"] for q in active if q["file"] == name}, name)
    report(active, {q["pk"] for q in active}, "whole bank")
    by_domain = Counter(DOMAINS[q["domain"]] for q in active)
    print("  per domain: " + ", ".join(f"{d} {n}" for d, n in by_domain.items()))
    duplicates = bankcues.near_duplicates([cue_question(q) for q in active])
    files = {q["pk"]: q["file"] for q in active}
    relevant = [(c, a, b) for c, a, b in duplicates if files[a] in chosen or files[b] in chosen]
    print(f"\n== stem + key TF-IDF cosine >= 0.5 without a shared exclusion_group: {len(relevant)}")
    for cosine, a, b in relevant:
        print(f"  {cosine:.2f}  Q{a} ({files[a]})  Q{b} ({files[b]})")


if __name__ == "__main__":
    main(sys.argv[1:])
