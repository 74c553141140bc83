"""Factories for test banks, learners and attempts."""
import factory
from django.contrib.auth.models import User

from accounts.models import Profile
from exams.models import Choice, Domain, Exam, Question, QuestionKind, QuestionStatus

PASSWORD = "correct-horse-battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def profile(user, create, extracted, **kwargs):
        if create:
            user.save()
            Profile.objects.for_user(user)


class ExamFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Exam

    code = factory.Sequence(lambda n: f"EX-{n}")
    title = factory.Sequence(lambda n: f"Exam {n}")
    description = "A test exam."
    question_count = 10
    time_limit_minutes = 10
    passing_score = 70
    is_published = True


class DomainFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Domain

    exam = factory.SubFactory(ExamFactory)
    name = factory.Sequence(lambda n: f"Domain {n}")
    weight = 100
    order = factory.Sequence(lambda n: n)


class QuestionFactory(factory.django.DjangoModelFactory):
    """A question with choices A–D; `keys` names the correct labels (default A)."""

    class Meta:
        model = Question
        skip_postgeneration_save = True

    domain = factory.SubFactory(DomainFactory)
    exam = factory.SelfAttribute("domain.exam")
    title = factory.Sequence(lambda n: f"Question {n}")
    stem = factory.Sequence(lambda n: f"What is the answer to question {n}?")
    explanation = "Because the key is right."
    kind = QuestionKind.SINGLE
    choose = 1
    # Ready, as every question learners see; a test of drafts asks for status=QuestionStatus.DRAFT.
    status = QuestionStatus.READY

    @factory.post_generation
    def keys(question, create, extracted, **kwargs):
        if not create:
            return
        keys = set(extracted or ["A"])
        for order, label in enumerate("ABCD", start=1):
            Choice.objects.create(
                question=question, label=label, order=order, text=f"Choice {label} of {question.title}",
                is_correct=label in keys, feedback=f"Feedback on {label}.",
            )


def exam_with_bank(*, weights=(60, 40), per_domain=10, question_count=10, **exam_fields) -> Exam:
    """An exam whose domains have the given weights and `per_domain` questions each."""
    exam = ExamFactory(question_count=question_count, **exam_fields)
    for order, weight in enumerate(weights, start=1):
        domain = DomainFactory(exam=exam, weight=weight, order=order)
        QuestionFactory.create_batch(per_domain, domain=domain, exam=exam)
    return exam
