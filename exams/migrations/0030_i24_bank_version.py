"""A bank version bumped by PostgreSQL itself whenever the exam's questions change as the
learner-facing caches read them (issue 24 item 2: the 1,000-attempt dashboard).

`exams.statistics.calibration.stored_version` keyed the caches of bank-sized reads on a hash
summed over every question (a scan of 10,000 rows, ~7 ms, on every dashboard). A statement-level
trigger on `exams_question` now sets one row's version from a sequence on every INSERT, DELETE,
TRUNCATE and every UPDATE that names a column those caches read, whatever wrote it (the admin,
the importers, `load_bank`, a raw statement): one indexed row to read, and no write path to
forget. The value comes from a sequence, which a rollback never takes back, so a version seen
inside a transaction that rolled back is never given to other data.

Off PostgreSQL nothing is created: there the caches are off (stored_version gives None).

Also a partial index of the questions learners meet, by exam: the review outlook's join of the
learner's cards to them read all 10,000 question rows (8.7 ms at bench/scale); it now reads the
index (3.3 ms).
"""
from django.db import migrations, models

# The columns the caches keyed on the version read (calibration.stored, the builder's topics and counts).
COLUMNS = "exam_id, domain_id, difficulty, status, is_active, topic, exclusion_group"

FORWARD = [
    "CREATE SEQUENCE exams_bank_version_seq",
    "CREATE TABLE exams_bankversion (id smallint PRIMARY KEY CHECK (id = 1), version bigint NOT NULL)",
    "INSERT INTO exams_bankversion (id, version) VALUES (1, nextval('exams_bank_version_seq'))",
    """CREATE FUNCTION exams_bank_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
           UPDATE exams_bankversion SET version = nextval('exams_bank_version_seq') WHERE id = 1;
           RETURN NULL;
       END $$""",
    f"""CREATE TRIGGER exams_question_bank_version
        AFTER INSERT OR DELETE OR UPDATE OF {COLUMNS} ON exams_question
        FOR EACH STATEMENT EXECUTE FUNCTION exams_bank_version_bump()""",
    """CREATE TRIGGER exams_question_bank_version_truncate
        AFTER TRUNCATE ON exams_question FOR EACH STATEMENT EXECUTE FUNCTION exams_bank_version_bump()""",
]
BACKWARD = [
    "DROP TRIGGER exams_question_bank_version_truncate ON exams_question",
    "DROP TRIGGER exams_question_bank_version ON exams_question",
    "DROP FUNCTION exams_bank_version_bump()",
    "DROP TABLE exams_bankversion",
    "DROP SEQUENCE exams_bank_version_seq",
]


def run(statements):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for statement in statements:
            schema_editor.execute(statement)
    return apply


class Migration(migrations.Migration):

    dependencies = [
        ("exams", "0029_i24_sure_answers_index"),
    ]

    operations = [
        migrations.RunPython(run(FORWARD), run(BACKWARD)),
        migrations.AddIndex(
            model_name="question",
            index=models.Index(
                condition=models.Q(("is_active", True), ("status", "ready")), fields=["exam", "id"],
                name="question_learner_by_exam",
            ),
        ),
    ]
