"""Generate a large certprep history in PostgreSQL with set-based SQL (INSERT ... SELECT generate_series).

Default scale: 10,000 questions (4 choices each, one version each), 100,000 finished mock
attempts of 60 slots = 6,000,000 responses (~97% answered, one pick each, two on the
choose-two questions), 2,000 learners of whom one (`heavy`) has 1,000 attempts, and one
question (`STAR`, id 1) held by every attempt. Deterministic: the same arguments give the
same rows. Called by bench/scale/run.py; needs Django set up against an empty, migrated
PostgreSQL database.
"""
import math
import re
import time
from dataclasses import dataclass

SLOTS = 60
CHOICES = 4
STAR_QUESTION = 1
EXAM_CODE = "SCALE"
HEAVY = "heavy"
# NCA-GENM's seven domains and weights, so a draw takes the same quotas as the real exam.
DOMAINS = [
    ("Experimentation", 22), ("Core ML and AI knowledge", 15), ("Multimodal data", 15),
    ("Software development", 15), ("Data analysis and visualization", 10), ("Performance optimization", 10),
    ("Trustworthy AI", 13),
]
STEM = (
    "A team fine-tunes a multimodal model on paired image and caption data and sees validation loss "
    "rise after the third epoch while training loss keeps falling. Which change is the **most likely** "
    "to help, given a fixed compute budget and no new data?"
)
EXPLANATION = (
    "Rising validation loss with falling training loss is over-fitting; regularisation or early "
    "stopping addresses it without more data or compute."
)


@dataclass(frozen=True)
class Scale:
    questions: int = 10_000
    attempts: int = 100_000
    learners: int = 2_000
    heavy_attempts: int = 1_000

    @property
    def responses(self) -> int:
        return self.attempts * SLOTS


def _stride(modulus: int) -> int:
    """A step coprime with the modulus, so 60 consecutive multiples are distinct question ids."""
    step = 167
    while math.gcd(step, modulus) != 1:
        step += 2
    return step


def _timed(log: list, label: str, sql: str, params=None) -> int:
    from django.db import connection

    if params is not None:
        # The modulo operator next to driver placeholders must be written %%.
        sql = re.sub(r"%(?!s\b)", "%%", sql)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.rowcount
    log.append((label, rows, time.perf_counter() - started))
    print(f"  {label}: {rows:,} rows in {time.perf_counter() - started:.1f} s", flush=True)
    return rows


def generate(scale: Scale) -> list[tuple[str, int, float]]:
    """Fill the database; returns (step, rows, seconds) for each step."""
    from django.contrib.auth.hashers import make_password
    from django.db import connection, transaction

    from exams.models import Domain, Exam, Question, QuestionVersion, content_digest

    if scale.questions <= SLOTS or scale.attempts < scale.heavy_attempts or scale.learners < 2:
        raise ValueError("need more questions than slots, at least heavy_attempts attempts and two learners")
    log: list[tuple[str, int, float]] = []
    with transaction.atomic():
        with connection.cursor() as cursor:
            # Rows are consistent by construction; skipping the per-row foreign-key triggers
            # (a superuser's bulk-load switch, this session only) makes the load minutes, not hours.
            cursor.execute("SET LOCAL session_replication_role = replica")
            cursor.execute("SET LOCAL synchronous_commit = off")  # this load only; measurements keep the default
        exam = Exam.objects.create(
            code=EXAM_CODE, title="Scale benchmark exam", question_count=SLOTS, time_limit_minutes=60,
            passing_score=70, is_published=True,
        )
        domains = [Domain.objects.create(exam=exam, name=name, weight=weight, order=index)
                   for index, (name, weight) in enumerate(DOMAINS)]
        # Question q goes to a domain by q mod 100 against the cumulative weights.
        bounds, total = [], 0
        for domain, (_, weight) in zip(domains, DOMAINS, strict=True):
            total += weight
            bounds.append(f"WHEN q % 100 < {total} THEN {domain.pk}")
        domain_case = f"CASE {' '.join(bounds)} ELSE {domains[-1].pk} END"
        _timed(log, "questions", f"""
            INSERT INTO exams_question (id, exam_id, domain_id, title, stem, explanation, kind, choose, keep_order,
                                        is_active, created_at, updated_at, exclusion_group, exhibit, sources, topic,
                                        idnumber, difficulty, status)
            SELECT q, %s, {domain_case}, 'Scale question ' || q, %s || ' (' || q || ')', %s,
                   CASE WHEN q % 10 = 0 THEN 'multiple' ELSE 'single' END, CASE WHEN q % 10 = 0 THEN 2 ELSE 1 END,
                   false, true, now() - interval '400 days', now() - interval '400 days', '', '', '', '', '',
                   'medium', 'ready'
            FROM generate_series(1, %s) AS q
        """, [exam.pk, STEM, EXPLANATION, scale.questions])
        _timed(log, "choices", f"""
            INSERT INTO exams_choice (id, question_id, label, text, is_correct, feedback, "order")
            SELECT (q - 1) * {CHOICES} + j, q, chr(64 + j), 'Option ' || chr(64 + j) || ' for question ' || q,
                   j = 1 OR (q % 10 = 0 AND j = 2), CASE WHEN j = 1 THEN 'Right: see the explanation.' ELSE '' END, j
            FROM generate_series(1, %s) AS q CROSS JOIN generate_series(1, {CHOICES}) AS j
        """, [scale.questions])

        # Versions through the model's own content() and digest, so a draw finds them current.
        started = time.perf_counter()
        versions = []
        for question in Question.objects.filter(exam=exam).prefetch_related("choices").order_by("pk").iterator(chunk_size=2000):
            content = question.content()
            versions.append(QuestionVersion(id=question.pk, question_id=question.pk, number=1, content=content,
                                            digest=content_digest(content)))
        QuestionVersion.objects.bulk_create(versions, batch_size=2000)
        log.append(("question versions", len(versions), time.perf_counter() - started))

        started = time.perf_counter()
        password = make_password("bench-scale-passphrase")
        with connection.cursor() as cursor:
            cursor.execute("""
                INSERT INTO auth_user (id, password, is_superuser, username, first_name, last_name, email, is_staff,
                                       is_active, date_joined)
                SELECT u, %s, false, CASE WHEN u = 1 THEN %s ELSE 'scale' || lpad(u::text, 5, '0') END, '', '',
                       'scale' || u || '@example.com', false, true, now() - interval '500 days'
                FROM generate_series(1, %s) AS u
            """, [password, HEAVY, scale.learners])
            cursor.execute("""
                INSERT INTO accounts_profile (user_id, time_zone, shortcuts_enabled, accommodation_factor,
                                              desired_retention, review_session_size, ask_certainty_in_mocks)
                SELECT u, 'UTC', true, 1.00, 0.90, 20, false FROM generate_series(1, %s) AS u
            """, [scale.learners])
        log.append(("learners and profiles", scale.learners, time.perf_counter() - started))

        # Attempts 1..heavy_attempts are the heavy learner's; the rest go round the others.
        # Finished one every few minutes over the past year, oldest first.
        minutes = max(1, 525_600 // scale.attempts)
        _timed(log, "attempts", f"""
            INSERT INTO exams_attempt (id, user_id, exam_id, mode, started_at, deadline, finished_at, status,
                                       last_position, feedback_at_end)
            SELECT a, CASE WHEN a <= %s THEN 1 ELSE 2 + (a % (%s - 1)) END, %s, 'mock',
                   now() - (%s - a) * interval '{minutes} minutes' - interval '50 minutes',
                   now() - (%s - a) * interval '{minutes} minutes' + interval '10 minutes',
                   now() - (%s - a) * interval '{minutes} minutes', 'submitted', {SLOTS}, false
            FROM generate_series(1, %s) AS a
        """, [scale.heavy_attempts, scale.learners, exam.pk, scale.attempts, scale.attempts, scale.attempts, scale.attempts])

        # Slot p of attempt a: the STAR question at one position, else 60 distinct others
        # (a step coprime with the pool size never repeats within 60 slots). Whether the
        # answer is right depends on the learner's ability and the question's difficulty.
        pool = scale.questions - 1
        stride = _stride(pool)
        hash_ap = "(hashint8(ap.a::bigint * 64 + ap.p)::bigint & 2147483647)"
        # One series over response ids, attempt-major: an attempt's 60 slots sit together on
        # disk, as they do when a draw inserts them in one statement.
        _timed(log, "responses", f"""
            INSERT INTO exams_response (id, attempt_id, position, question_id, domain_id, version_id, choice_order,
                                        flagged, answered_at, checked_at, is_correct)
            SELECT n + 1, ap.a, ap.p, s.q, {domain_case.replace("q % 100", "s.q % 100")}, s.q,
                   jsonb_build_array((s.q - 1) * 4 + 1 + (s.r + 0) % 4, (s.q - 1) * 4 + 1 + (s.r + 1) % 4,
                                     (s.q - 1) * 4 + 1 + (s.r + 2) % 4, (s.q - 1) * 4 + 1 + (s.r + 3) % 4),
                   s.h % 40 = 0,
                   CASE WHEN s.h % 33 = 0 THEN NULL ELSE s.finished_at - (61 - ap.p) * interval '40 seconds' END,
                   NULL,
                   s.h % 33 <> 0 AND (s.h / 33) % 1000 < 450 + (hashint8(s.user_id)::bigint & 2147483647) % 300
                                                         + (s.q % 7 - 3) * 40
            FROM generate_series(0, %s - 1) AS n
            CROSS JOIN LATERAL (SELECT (n / {SLOTS} + 1)::int AS a, (n % {SLOTS} + 1)::int AS p) AS ap
            CROSS JOIN LATERAL (
                SELECT CASE WHEN ap.p = 1 + (ap.a * 31) % {SLOTS} THEN {STAR_QUESTION}
                            ELSE 2 + ((ap.a::bigint * 7919 + ap.p * {stride}) % {pool})::int END AS q,
                       {hash_ap} AS h, ({hash_ap} / 7 % 4)::int AS r,
                       -- the attempt's learner and finish time, as the attempts step computed them
                       CASE WHEN ap.a <= %s THEN 1 ELSE 2 + (ap.a % (%s - 1)) END::bigint AS user_id,
                       now() - (%s - ap.a) * interval '{minutes} minutes' AS finished_at
            ) AS s
        """, [scale.responses, scale.heavy_attempts, scale.learners, scale.attempts])
        # The pick: the key when right; when wrong, one of the other three (choose-two
        # questions: the first key and a wrong one).
        _timed(log, "picks", """
            INSERT INTO exams_responsechoice (id, response_id, choice_id)
            SELECT CASE WHEN k = 1 THEN r.id ELSE %s + r.id END, r.id,
                   (r.question_id - 1) * 4 + CASE
                       WHEN r.question_id % 10 <> 0 THEN
                           CASE WHEN r.is_correct THEN 1 ELSE 2 + (hashint8(r.id)::bigint & 2147483647) % 3 END
                       WHEN k = 1 THEN 1
                       ELSE CASE WHEN r.is_correct THEN 2 ELSE 3 + (hashint8(r.id)::bigint & 2147483647) % 2 END
                   END
            FROM exams_response r
            CROSS JOIN LATERAL generate_series(1, CASE WHEN r.question_id % 10 = 0 THEN 2 ELSE 1 END) AS k
            WHERE r.answered_at IS NOT NULL
        """, [scale.responses])
        _timed(log, "attempt grades", f"""
            UPDATE exams_attempt a
            SET right_count = g.right_count, total_count = {SLOTS},
                score = round(100.0 * g.right_count / {SLOTS}, 2), published_score = round(100.0 * g.right_count / {SLOTS}, 2),
                passed = g.right_count * 100 >= a_exam.passing_score * {SLOTS}
            FROM (SELECT attempt_id, count(*) FILTER (WHERE is_correct) AS right_count FROM exams_response GROUP BY attempt_id) g,
                 exams_exam a_exam
            WHERE a.id = g.attempt_id AND a_exam.id = a.exam_id
        """)
        # The heavy learner's review cards: the questions they got wrong, some due.
        _timed(log, "review cards", """
            INSERT INTO exams_reviewcard (user_id, question_id, state, step, stability, difficulty, due, last_review, updated_at)
            SELECT 1, question_id, 2, NULL, 1 + question_id % 16, 5.0,
                   now() - interval '10 days' + (question_id % 20) * interval '1 day', now() - interval '20 days', now()
            FROM (SELECT DISTINCT r.question_id FROM exams_response r
                  WHERE r.attempt_id <= %s AND r.is_correct = false LIMIT 2000) wrong
        """, [scale.heavy_attempts])
        with connection.cursor() as cursor:
            for table in ("exams_question", "exams_choice", "exams_questionversion", "auth_user", "accounts_profile",
                          "exams_attempt", "exams_response", "exams_responsechoice"):
                cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
    log.append(("VACUUM (ANALYZE)", 0, time.perf_counter() - started))
    return log
