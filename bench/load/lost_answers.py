"""Compare the answers the server confirmed ("Saved", HTTP 200) with what the database holds.

An answer is lost when the last confirmed save of a slot is not what the slot holds and no
later save of the slot (sent, its answer never seen: in flight when the run stopped) explains
it. Reads a saves.csv written by bench/load/locustfile.py; prints one JSON object.

Usage (environment as for manage.py): python bench/load/lost_answers.py OUT/saves.csv
"""
import csv
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def main() -> None:
    import django

    django.setup()
    from django.db import connection

    # Per slot, in send order: [(choices, confirmed), ...]
    slots: dict[tuple[int, int], list[tuple[frozenset[int], bool]]] = {}
    with open(sys.argv[1], newline="") as saves:
        for row in csv.DictReader(saves):
            picks = frozenset(int(p) for p in row["choices"].split())
            slots.setdefault((int(row["attempt"]), int(row["position"])), []).append((picks, row["confirmed"] == "1"))

    held: dict[tuple[int, int], frozenset[int]] = {}
    attempts = sorted({attempt for attempt, _ in slots})
    with connection.cursor() as cursor:
        # One query: each slot's shown order and its picks, mapped back to shown positions.
        cursor.execute(
            """
            SELECT r.attempt_id, r.position, r.choice_order::text,
                   COALESCE(array_agg(rc.choice_id) FILTER (WHERE rc.choice_id IS NOT NULL), '{}')
            FROM exams_response r LEFT JOIN exams_responsechoice rc ON rc.response_id = r.id
            WHERE r.attempt_id = ANY(%s)
            GROUP BY r.id
            """,
            [attempts],
        )
        for attempt_id, position, order_text, picked in cursor.fetchall():
            order = json.loads(order_text)
            held[(attempt_id, position)] = frozenset(order.index(choice_id) + 1 for choice_id in picked)

    confirmed = sum(ok for history in slots.values() for _, ok in history)
    lost = []
    for slot, history in slots.items():
        last = max((i for i, (_, ok) in enumerate(history) if ok), default=None)
        if last is None:
            continue
        acceptable = {picks for picks, _ in history[last:]}
        if held.get(slot) not in acceptable:
            lost.append({"attempt": slot[0], "position": slot[1], "confirmed": sorted(history[last][0]),
                         "held": sorted(held.get(slot, ()))})
    print(json.dumps({
        "confirmed_saves": confirmed,
        "slots_checked": sum(any(ok for _, ok in h) for h in slots.values()),
        "unconfirmed_saves": sum(not ok for h in slots.values() for _, ok in h),
        "lost": len(lost),
        "lost_examples": lost[:10],
    }))


if __name__ == "__main__":
    main()
