"""The exam model, one module per concern; every name is importable from exams.models as before.

exams.models.bank: exams, domains, questions, versions, choices, exhibits, errata, disputes.
exams.models.attempts: attempts, responses, picks, strike-outs, regrades, extra time.
exams.models.study: review cards and bookmarks.
exams.models.statistics: item and test statistics.
"""
from exams.models.bank import (  # noqa: F401
    Exam,
    Domain,
    QuestionKind,
    QuestionQuerySet,
    Question,
    ChoiceText,
    choice_texts,
    content_digest,
    QuestionVersionManager,
    QuestionVersion,
    ExhibitImage,
    Choice,
    ErratumSource,
    ErratumStatus,
    ErratumPolicy,
    Erratum,
    Dispute,
)
from exams.models.attempts import (  # noqa: F401
    AttemptMode,
    AttemptStatus,
    AttemptQuerySet,
    Attempt,
    Response,
    ResponseChoice,
    ResponseStrike,
    RegradeEvent,
    RegradeChange,
    LearnerAccommodation,
)
from exams.models.study import (  # noqa: F401
    CardState,
    ReviewCardQuerySet,
    ReviewCard,
    BookmarkQuerySet,
    NOTE_MAX_LENGTH,
    Bookmark,
)
from exams.models.statistics import (  # noqa: F401
    MiskeyFlag,
    ItemStatistic,
    ExamStatistic,
)
