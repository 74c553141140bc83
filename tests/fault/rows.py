"""Reads of the app's tables that the fault tests assert on, in plain SQL over psycopg."""
from dataclasses import dataclass

from tests.fault.cluster import ThrowawayCluster


@dataclass(frozen=True)
class Slot:
    position: int
    response_id: int
    question_id: int
    choice_order: list[int]
    key: frozenset[int]
    labels: dict[int, str]

    def position_of(self, choice_id: int) -> int:
        """The 1-based position the page shows this choice at (what a save sends)."""
        return self.choice_order.index(choice_id) + 1

    def position_of_label(self, label: str) -> int:
        return self.position_of(next(pk for pk, text in self.labels.items() if text == label))

    def right_position(self) -> int:
        return self.position_of(min(self.key))

    def wrong_position(self) -> int:
        return self.position_of(next(pk for pk in self.choice_order if pk not in self.key))


def slots(cluster: ThrowawayCluster, attempt_id: int) -> dict[int, Slot]:
    """Every slot of the attempt by position, with its question's current key and choice labels."""
    rows = cluster.rows(
        """
        SELECT r.position, r.id, r.question_id, r.choice_order,
               array_agg(c.id ORDER BY c.id) FILTER (WHERE c.is_correct),
               array_agg(c.id ORDER BY c.id), array_agg(c.label ORDER BY c.id)
        FROM exams_response r JOIN exams_choice c ON c.question_id = r.question_id
        WHERE r.attempt_id = %s GROUP BY r.id ORDER BY r.position
        """,
        (attempt_id,),
    )
    return {
        position: Slot(position, response_id, question_id, list(order), frozenset(key or ()), dict(zip(ids, labels)))
        for position, response_id, question_id, order, key, ids, labels in rows
    }


def picks(cluster: ThrowawayCluster, attempt_id: int) -> dict[int, list[int]]:
    """Choice ids stored for each position (sorted; duplicates kept, so 'exactly once' is visible)."""
    stored: dict[int, list[int]] = {}
    for position, choice_id in cluster.rows(
        "SELECT r.position, rc.choice_id FROM exams_response r "
        "JOIN exams_responsechoice rc ON rc.response_id = r.id WHERE r.attempt_id = %s ORDER BY r.position, rc.choice_id",
        (attempt_id,),
    ):
        stored.setdefault(position, []).append(choice_id)
    return stored


def attempt_status(cluster: ThrowawayCluster, attempt_id: int) -> tuple[str, object]:
    ((status, finished_at),) = cluster.rows("SELECT status, finished_at FROM exams_attempt WHERE id = %s", (attempt_id,))
    return status, finished_at
