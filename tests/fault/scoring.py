"""Grading from scratch, straight from the database rows, written apart from exams.room.grading on purpose."""
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from tests.fault.cluster import ThrowawayCluster


@dataclass(frozen=True)
class Grade:
    right: int
    total: int
    score: Decimal
    passed: bool


def grade_from_scratch(cluster: ThrowawayCluster, attempt_id: int) -> Grade:
    """All-or-nothing per question against today's key; a voided question counts for nothing.

    Only the credit_corrected and void policies are handled: under credit_corrected the
    key is simply the corrected one, whenever the attempt finished.
    """
    policies = cluster.rows(
        """
        SELECT DISTINCT e.policy FROM exams_erratum e
        JOIN exams_response r ON r.question_id = e.question_id
        WHERE r.attempt_id = %s AND e.status = 'confirmed'
        """,
        (attempt_id,),
    )
    unsupported = {policy for (policy,) in policies} - {"credit_corrected", "void"}
    assert not unsupported, f"grade_from_scratch does not model {unsupported}"
    responses = cluster.rows(
        """
        SELECT r.id, r.question_id,
               EXISTS (SELECT 1 FROM exams_erratum e
                       WHERE e.question_id = r.question_id AND e.status = 'confirmed' AND e.policy = 'void')
        FROM exams_response r WHERE r.attempt_id = %s ORDER BY r.position
        """,
        (attempt_id,),
    )
    picked: dict[int, set[int]] = defaultdict(set)
    for response_id, choice_id in cluster.rows(
        "SELECT rc.response_id, rc.choice_id FROM exams_responsechoice rc "
        "JOIN exams_response r ON r.id = rc.response_id WHERE r.attempt_id = %s",
        (attempt_id,),
    ):
        picked[response_id].add(choice_id)
    key: dict[int, set[int]] = defaultdict(set)
    for question_id, choice_id in cluster.rows(
        "SELECT c.question_id, c.id FROM exams_choice c "
        "WHERE c.is_correct AND c.question_id IN (SELECT question_id FROM exams_response WHERE attempt_id = %s)",
        (attempt_id,),
    ):
        key[question_id].add(choice_id)
    ((passing,),) = cluster.rows(
        "SELECT x.passing_score FROM exams_attempt a JOIN exams_exam x ON x.id = a.exam_id WHERE a.id = %s",
        (attempt_id,),
    )
    counted = [(response_id, question_id) for response_id, question_id, void in responses if not void]
    right = sum(1 for response_id, question_id in counted if picked[response_id] and picked[response_id] == key[question_id])
    total = len(counted)
    # Percent to two places, halves up, in integers (no float can decide the last digit).
    score = Decimal((20_000 * right + total) // (2 * total)).scaleb(-2) if total else Decimal("0.00")
    return Grade(right=right, total=total, score=score, passed=bool(total) and right * 100 >= passing * total)


def stored_grade(cluster: ThrowawayCluster, attempt_id: int) -> Grade:
    ((right, total, score, passed),) = cluster.rows(
        "SELECT right_count, total_count, score, passed FROM exams_attempt WHERE id = %s", (attempt_id,)
    )
    return Grade(right=right, total=total, score=score, passed=passed)
