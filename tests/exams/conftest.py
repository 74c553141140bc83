"""Fixtures shared by the exams tests."""
import pytest

from tests.factories import DomainFactory, ExamFactory


@pytest.fixture
def exam():
    """An empty exam with two domains, for the import tests to fill."""
    exam = ExamFactory(code="GENM")
    DomainFactory(exam=exam, name="Core ML", order=1, weight=60)
    DomainFactory(exam=exam, name="Data", order=2, weight=40)
    return exam
