"""The cohort report sorts by any column through ?sort= links (issue 27, item 4)."""
import pytest
from django.urls import reverse

from cohorts.models import Cohort, Invitation, Membership
from tests.cohorts.test_cohorts import mock
from tests.factories import UserFactory, exam_with_bank

pytestmark = pytest.mark.django_db


@pytest.fixture
def report(client, instructor):
    exam = exam_with_bank(per_domain=25)
    first, second = exam.domains.order_by("order")
    cohort = Cohort.objects.create(owner=instructor, exam=exam, name="Spring class")
    Invitation.objects.create(cohort=cohort)
    for name, score, answers in [
        ("ana", 70, {first.pk: (9, 10)}), ("ben", 40, {first.pk: (3, 10)}), ("cy", None, {}),
    ]:
        learner = UserFactory(username=name)
        Membership.objects.create(cohort=cohort, learner=learner)
        if score is not None:
            mock(learner, exam, score=score, days_ago=1, answers=answers)
    client.force_login(instructor)

    def order(sort=None) -> list[str]:
        page = client.get(reverse("cohorts:detail", args=[cohort.pk]), {"sort": sort} if sort is not None else {})
        assert page.status_code == 200
        return [row.membership.learner.username for row in page.context["rows"]], page

    return order, first


def test_the_default_and_an_unknown_value_sort_by_learner(report):
    order, _ = report
    assert order()[0] == ["ana", "ben", "cy"]
    for unknown in ("nonsense", "-", "d999999", "x" * 300, "-learner"):
        names, page = order(unknown)
        assert page.status_code == 200
    assert order("-learner")[0] == ["cy", "ben", "ana"]
    assert order("nonsense")[0] == ["ana", "ben", "cy"]


def test_scores_and_domains_sort_with_empty_figures_last_both_ways(report):
    order, first = report
    assert order("last")[0] == ["ben", "ana", "cy"]
    assert order("-last")[0] == ["ana", "ben", "cy"]
    assert order(f"d{first.pk}")[0] == ["ben", "ana", "cy"]
    names, page = order(f"-d{first.pk}")
    assert names == ["ana", "ben", "cy"]
    # The current column's link turns the order round; the others sort ascending first.
    html = page.content.decode()
    assert f'aria-sort="descending"' in html and f'href="?sort=d{first.pk}"' in html and 'href="?sort=mocks"' in html
