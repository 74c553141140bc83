"""The exam model, one module per concern; every name is importable from exams.models as before.

exams.models.bank: exams, domains, questions, versions, choices, exhibits, errata, disputes.
exams.models.attempts: attempts, responses, picks, strike-outs, regrades, extra time.
exams.models.study: review cards and bookmarks.
exams.models.statistics: item and test statistics.
"""
from exams.models.attempts import (  # noqa: F401
    Attempt,
    AttemptMode,
    AttemptQuerySet,
    AttemptStatus,
    Certainty,
    LearnerAccommodation,
    RegradeChange,
    RegradeEvent,
    Response,
    ResponseChoice,
    ResponseStrike,
)
from exams.models.bank import (  # noqa: F401
    Choice,
    ChoiceText,
    Dispute,
    Domain,
    Erratum,
    ErratumPolicy,
    ErratumSource,
    ErratumStatus,
    Difficulty,
    Exam,
    ExhibitImage,
    Question,
    LEARNER_QUESTIONS,
    QuestionKind,
    QuestionQuerySet,
    QuestionStatus,
    QuestionVersion,
    QuestionVersionManager,
    choice_texts,
    content_digest,
    learner_questions,
)
from exams.models.statistics import ExamStatistic, ItemStatistic, MiskeyFlag  # noqa: F401
from exams.models.study import NOTE_MAX_LENGTH, Bookmark, BookmarkQuerySet, CardState, ReviewCard, ReviewCardQuerySet  # noqa: F401
