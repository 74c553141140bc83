"""The bank's bounds and vocabularies as plain values: the model, the admin, every importer and exporter share them."""
# These mirror the model's choices (exams.models); kept here as plain strings so the
# formats stay importable without Django.
KINDS = ("single", "multiple")
DIFFICULTIES = ("easy", "medium", "hard")  # Question.difficulty; formats without one give "medium"
DEFAULT_DIFFICULTY = "medium"
STATUSES = ("draft", "ready")  # Question.status; a question lands as a draft unless published
DEFAULT_STATUS = "draft"
ERRATUM_SOURCES = ("imported", "instructor", "learners")
ERRATUM_STATUSES = ("reported", "confirmed", "rejected")
ERRATUM_POLICIES = ("", "credit_corrected", "credit_either", "void")
TITLE_MAX_LENGTH = 200  # Question.title max_length
# The bank's bounds, shared by the model, the admin, every importer and exporter.
MIN_CHOICES, MAX_CHOICES = 2, 10
TEXT_LIMITS = {"stem": 10_000, "explanation": 10_000, "exhibit": 10_000, "sources": 2_000, "choice": 1_000, "feedback": 2_000}
TOPIC_MAX_LENGTH = 80  # Question.topic and Question.exclusion_group max_length
IDNUMBER_MAX_LENGTH = 100  # Question.idnumber max_length, as Moodle's
DEFAULT_TITLE_LENGTH = 80  # what Moodle uses when a question has no name
