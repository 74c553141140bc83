#!/usr/bin/env python3
"""Blind review of a bank file: the questions without their keys, then the reader's answers against them.

    python3 tools/bank_blind.py questions fixtures/bank/07-trustworthy-ai.json > /tmp/07.md
    python3 tools/bank_blind.py compare fixtures/bank/07-trustworthy-ai.json answers.json

answers.json maps question ids to the letters the reader chose, e.g. {"701": "B", "705": "BD"}.
"""
import json
import sys
from pathlib import Path


def active_questions(path: Path) -> list[dict]:
    objects = json.loads(path.read_text())
    choices: dict[int, list[dict]] = {}
    for obj in objects:
        if obj["model"] == "exams.choice":
            choices.setdefault(obj["fields"]["question"], []).append(obj["fields"])
    questions = []
    for obj in objects:
        if obj["model"] == "exams.question" and obj["fields"].get("is_active", True):
            question = dict(obj["fields"], pk=obj["pk"])
            question["choices"] = sorted(choices.get(obj["pk"], []), key=lambda c: c["order"])
            questions.append(question)
    return questions


def print_questions(path: Path) -> None:
    for q in active_questions(path):
        print(f"## Q{q['pk']}  ({'choose ' + str(q['choose']) if q['kind'] == 'multiple' else 'one answer'})")
        if q.get("exhibit", "").strip():
            print(f"\nExhibit:\n\n{q['exhibit']}\n")
        print(f"\n{q['stem']}\n")
        for choice in q["choices"]:
            print(f"- {choice['label']}. {choice['text']}")
        print()


def compare(path: Path, answers_path: Path) -> None:
    answers = {str(k): "".join(sorted(str(v).upper().replace(",", "").replace(" ", ""))) for k, v in json.loads(answers_path.read_text()).items()}
    agreed, disagreed, missing = [], [], []
    for q in active_questions(path):
        key = "".join(sorted(c["label"] for c in q["choices"] if c["is_correct"]))
        given = answers.get(str(q["pk"]))
        if given is None:
            missing.append(q["pk"])
        elif given == key:
            agreed.append(q["pk"])
        else:
            disagreed.append((q, given, key))
    total = len(agreed) + len(disagreed)
    print(f"{path.name}: {len(agreed)} of {total} answered blind agree with the key; {len(disagreed)} disagree; {len(missing)} not answered")
    if missing:
        print("not answered: " + ", ".join(f"Q{pk}" for pk in missing))
    for q, given, key in disagreed:
        print(f"\n## Q{q['pk']}: reader chose {given}, key is {key}")
        print(f"{q['stem']}\n")
        for choice in q["choices"]:
            print(f"- {choice['label']}. {choice['text']}\n    feedback: {choice['feedback']}")
        print(f"\nExplanation: {q['explanation']}")


if __name__ == "__main__":
    command, *paths = sys.argv[1:]
    if command == "questions":
        print_questions(Path(paths[0]))
    elif command == "compare":
        compare(Path(paths[0]), Path(paths[1]))
    else:
        sys.exit(__doc__)
