"""Two tabs of one session answering different questions of one attempt at the same time keep both."""
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.fault import rows

pytestmark = [pytest.mark.fault, pytest.mark.postgres_only]


def test_two_tabs_answering_different_questions_keep_both(cluster, start_gunicorn, new_exam, log_in):
    code = new_exam()
    server = start_gunicorn(workers=2, threads=4)
    first_tab = log_in(server, "learner3")
    attempt_id = first_tab.start_mock(code)
    second_tab = first_tab.new_tab()
    slots = rows.slots(cluster, attempt_id)
    wanted = {position: slot.right_position() if position % 3 else slot.wrong_position() for position, slot in slots.items()}
    # The first tab walks the odd questions moving on with "next", the second saves the even ones in place.
    plans = [
        (first_tab, [(p, {"go": "next"}) for p in wanted if p % 2]),
        (second_tab, [(p, {}) for p in wanted if not p % 2]),
    ]
    # Two rounds, so the tabs overlap for certain: the second round saves the same answers again.
    start = threading.Barrier(len(plans), timeout=30)

    def answer(plan):
        tab, saves = plan
        start.wait()
        statuses = []
        for _ in range(2):
            for position, fields in saves:
                reply = tab.save(attempt_id, position, [wanted[position]], **fields)
                statuses.append((position, reply.status))
        return statuses

    with ThreadPoolExecutor(max_workers=len(plans)) as pool:
        outcomes = list(pool.map(answer, plans, timeout=120))

    refused = [(position, status) for statuses in outcomes for position, status in statuses if status != 200]
    assert not refused, f"saves not confirmed: {refused}"
    stored = rows.picks(cluster, attempt_id)
    expected = {position: [slots[position].choice_order[choice - 1]] for position, choice in wanted.items()}
    assert stored == expected, f"answers lost or mixed up between the tabs: stored {stored}, sent {expected}"
    # And each tab's review page counts all ten as answered.
    for name, tab in (("first", first_tab), ("second", second_tab)):
        page = tab.get(f"/attempts/{attempt_id}/review/")
        assert page.status == 200, f"review in the {name} tab: {page.status}"
        assert "10 questions: 0 unanswered" in page.body, f"the {name} tab's review page misses answers"
