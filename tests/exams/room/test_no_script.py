"""No silent loss without JavaScript (issue 26): the page says what saves a pick, the header's
links are buttons that save the form first and go to a named place, the counter is the server's."""
import pytest
from django.urls import reverse

from exams.models import Attempt, AttemptMode, QuestionKind, Response
from tests.factories import QuestionFactory, exam_with_bank

pytestmark = pytest.mark.django_db


def mock(client, exam=None) -> Attempt:
    exam = exam or exam_with_bank()
    client.post(reverse("exams:start_mock", args=[exam.code]))
    return Attempt.objects.get(mode=AttemptMode.MOCK)


def url(attempt, position=1) -> str:
    return reverse("exams:question", args=[attempt.pk, position])


def picks(attempt, position=1) -> list[int]:
    return sorted(Response.objects.get(attempt=attempt, position=position).picks.values_list("choice_id", flat=True))


def choose_two():
    exam = exam_with_bank(weights=(100,), per_domain=0, question_count=1)
    QuestionFactory(domain=exam.domains.get(), kind=QuestionKind.MULTIPLE, choose=2, keys=["A", "C"])
    return exam


def test_the_page_says_what_saves_and_offers_save_and_leave_buttons(learner_client):
    attempt = mock(learner_client)
    page = learner_client.get(url(attempt)).content.decode()
    assert "your pick is saved only when you press Save, Next, Previous or Review" in page
    assert '<button type="submit" name="go" value="stay" class="button">Save</button>' in page
    for place, label in (("catalogue", "Exams"), ("dashboard", "Dashboard"), ("bookmarks", "Bookmarks"),
                         ("profile", "Profile"), ("logout", "Log out")):
        assert (f'<button type="submit" form="attempt-main" name="leave" value="{place}" class="link-button">'
                f'<span class="visually-hidden">Save this answer and go to </span>{label}</button>') in page
    # The plain links stay for a browser with JavaScript (its saves are sent at once).
    assert '<div class="with-script">' in page and "css/noscript-attempt" in page


@pytest.mark.parametrize("place, where", [
    ("catalogue", "exams:catalogue"), ("dashboard", "exams:dashboard"), ("bookmarks", "exams:bookmarks"),
    ("profile", "accounts:profile"),
])
def test_a_header_button_saves_the_pick_then_goes_there(learner_client, place, where):
    attempt = mock(learner_client)
    reply = learner_client.post(url(attempt), {"answer": "1", "choice": ["2"], "leave": place})
    assert reply.status_code == 302 and reply["Location"] == reverse(where)
    slot = Response.objects.get(attempt=attempt, position=1)
    assert picks(attempt) == [slot.choice_order[1]] and slot.answered_at is not None


def test_log_out_saves_the_pick_then_logs_out(learner_client):
    attempt = mock(learner_client)
    reply = learner_client.post(url(attempt), {"answer": "1", "choice": ["3"], "flag": "toggle", "leave": "logout"})
    assert reply.status_code == 200 and "You are logged out" in reply.content.decode()
    slot = Response.objects.get(attempt=attempt, position=1)
    assert picks(attempt) == [slot.choice_order[2]] and slot.flagged
    assert learner_client.get(reverse("exams:dashboard")).status_code == 302  # to the login page


@pytest.mark.parametrize("place", ["admin", "https://example.com/", "/dashboard/", "cohorts", "DASHBOARD"])
def test_any_other_place_is_refused_and_nothing_is_saved(learner_client, place):
    attempt = mock(learner_client)
    reply = learner_client.post(url(attempt), {"answer": "1", "choice": ["2"], "leave": place})
    assert reply.status_code == 400 and "Nothing was saved" in reply.content.decode()
    assert picks(attempt) == []


def test_a_refused_save_stays_on_the_question_and_does_not_leave(learner_client):
    attempt = mock(learner_client, choose_two())
    reply = learner_client.post(url(attempt), {"answer": "1", "choice": ["1", "2", "3"], "leave": "dashboard"})
    assert reply.status_code == 422 and "This question takes 2 choices" in reply.content.decode()
    assert picks(attempt) == []


def test_the_counter_is_the_servers_after_a_save(learner_client):
    attempt = mock(learner_client, choose_two())
    page = learner_client.get(url(attempt)).content.decode()
    assert "0 of 2 chosen<noscript> (as last saved)</noscript>" in page
    learner_client.post(url(attempt), {"answer": "1", "choice": ["1"], "go": "stay"})
    page = learner_client.get(url(attempt)).content.decode()
    assert "1 of 2 chosen: incomplete<noscript>" in page
    learner_client.post(url(attempt), {"answer": "1", "choice": ["1", "4"], "go": "stay"})
    page = learner_client.get(url(attempt)).content.decode()
    assert "2 of 2 chosen<noscript>" in page
