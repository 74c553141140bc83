"""Results to study from: a question grid that jumps to each question, questions grouped by
domain (closed until the learner narrows the list), exhibits beside their questions, and
filters that swap the list in place (htmx) or reload at it (plain links)."""
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from exams.models import Erratum, ErratumPolicy, ErratumStatus, ExhibitImage
from exams.room.services import attempt_start, attempt_submit
from tests.exams.room.test_mock import HTMX, key_positions, question_url, wrong_position
from tests.factories import exam_with_bank

pytestmark = pytest.mark.django_db
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def finished_mock(client, learner, *, right=(), wrong=(), flagged=(), weights=(60, 40), per_domain=10, count=10):
    """A submitted mock: `right` and `wrong` positions answered so, `flagged` flagged, the rest unanswered."""
    exam = exam_with_bank(weights=weights, per_domain=per_domain, question_count=count)
    attempt = attempt_start(user=learner, exam=exam).attempt
    for slot in attempt.responses.prefetch_related("question__choices"):
        data = {}
        if slot.position in right:
            data["choice"] = key_positions(slot)
        elif slot.position in wrong:
            data["choice"] = wrong_position(slot)
        if slot.position in flagged:
            data["flag"] = "on"
        if data:
            client.post(question_url(attempt, slot.position), data, headers=HTMX)
    attempt_submit(user=learner, attempt_id=attempt.pk)
    attempt.refresh_from_db()
    return attempt


def grid(page: str) -> dict[int, tuple[str, str]]:
    """The question grid: position → (href, accessible name)."""
    return {
        int(position): (href, label)
        for href, label, position in re.findall(r'<a class="grid-cell[^"]*" href="([^"]*)" aria-label="([^"]*)">(\d+)', page)
    }


def test_the_grid_names_every_question_and_jumps_to_it(learner_client, learner):
    attempt = finished_mock(learner_client, learner, right={1, 2}, wrong={3}, flagged={2, 4})
    page = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
    cells = grid(page)
    assert sorted(cells) == list(range(1, 11))
    assert cells[1] == ("#q-1", "Question 1: right")
    assert cells[2] == ("#q-2", "Question 2: right, flagged")
    assert cells[3] == ("#q-3", "Question 3: wrong")
    assert cells[4] == ("#q-4", "Question 4: unanswered, flagged")
    # Each cell's target is on the page, inside its domain's group.
    assert all(f'<article id="q-{position}"' in page for position in cells)


def test_questions_are_grouped_by_domain_and_closed_until_the_list_is_narrowed(learner_client, learner):
    attempt = finished_mock(learner_client, learner, right={1, 2, 3})
    url = reverse("exams:results", args=[attempt.pk])
    page = learner_client.get(url).content.decode()
    domains = list(attempt.exam.domains.order_by("order"))
    assert page.count('<details class="domain-group">') == len(domains)
    assert [name for name in re.findall(r'<span class="group-name">([^<]*)</span>', page)] == [d.name for d in domains]
    first = attempt.responses.filter(domain=domains[0])
    right_in_first = first.filter(is_correct=True).count()
    # The draw shuffles positions, so the first domain may hold none of the three right ones:
    # a state with no questions is left out of the tally rather than read "0 right".
    parts = [f"{n} {word}" for n, word in ((right_in_first, "right"), (first.count() - right_in_first, "unanswered")) if n]
    assert f"{first.count()} questions: {', '.join(parts)}</span>" in page
    tallies = re.findall(r'<span class="group-tally">([^<]*)</span>', page)
    assert len(tallies) == len(domains) and not any(re.search(r"(: |, )0 ", tally) for tally in tallies)
    # Narrowed by a filter, the groups open: the learner asked to see those questions.
    wrong = learner_client.get(url, {"show": "wrong"}).content.decode()
    assert '<details class="domain-group">' not in wrong and wrong.count('<details class="domain-group" open>') == 2
    assert wrong.count('class="result-item') == 7


def test_a_filter_keeps_the_whole_grid_and_sends_left_out_cells_to_the_whole_list(learner_client, learner):
    attempt = finished_mock(learner_client, learner, right={1, 2, 3})
    page = learner_client.get(reverse("exams:results", args=[attempt.pk]), {"show": "wrong"}).content.decode()
    cells = grid(page)
    assert sorted(cells) == list(range(1, 11))
    assert cells[1][0] == "?show=all#q-1" and cells[4][0] == "#q-4"
    assert '<article id="q-1"' not in page and '<article id="q-4"' in page


def test_filters_are_plain_links_to_the_list_and_htmx_swaps_only_the_list(learner_client, learner):
    attempt = finished_mock(learner_client, learner, right={1}, flagged={1})
    url = reverse("exams:results", args=[attempt.pk])
    page = learner_client.get(url).content.decode()
    assert 'href="?show=flagged#questions"' in page and 'hx-get="?show=flagged"' in page
    assert 'hx-target="#questions"' in page and 'hx-push-url="true"' in page
    assert '<form method="get" action="#questions"' in page
    with CaptureQueriesContext(connection) as whole:
        learner_client.get(url, {"show": "flagged"})
    with CaptureQueriesContext(connection) as partial:
        response = learner_client.get(url, {"show": "flagged"}, headers=HTMX)
    part = response.content.decode()
    assert part.lstrip().startswith('<section class="card results-questions" id="questions"')
    assert "domain-results" not in part and "<html" not in part
    assert part.count('class="result-item') == 1 and 'aria-current="page">Flagged<' in part
    assert len(partial.captured_queries) < len(whole.captured_queries)
    assert "HX-Request" in response["Vary"]
    # Going back to a pushed address whose snapshot htmx lost asks for the whole page.
    restored = learner_client.get(url, {"show": "flagged"}, headers={**HTMX, "HX-History-Restore-Request": "true"})
    assert "domain-results" in restored.content.decode()


def test_a_question_changed_by_a_correction_is_marked_in_the_grid(learner_client, learner):
    attempt = finished_mock(learner_client, learner, weights=(100,), right={1})
    slot = attempt.responses.get(position=2)
    erratum = Erratum.objects.create(
        question=slot.question, note="The published key was wrong.", status=ErratumStatus.CONFIRMED,
        policy=ErratumPolicy.CREDIT_CORRECTED, decided_at=timezone.now(),
    )
    erratum.published_key.set([slot.question.choices.get(label="B")])
    cells = grid(learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode())
    assert cells[2][1] == "Question 2: unanswered, changed by a correction"
    assert cells[1][1] == "Question 1: right"


def test_held_questions_show_held_in_the_grid_and_no_verdict(learner_client, learner):
    attempt = finished_mock(learner_client, learner, weights=(100,), per_domain=10, right={1, 2})
    attempt_start(user=learner, exam=attempt.exam)  # a mock of the same ten questions runs
    page = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
    assert {label for _, label in grid(page).values()} == {f"Question {n}: held" for n in range(1, 11)}
    assert "10 questions: 10 held" in page and " right," not in page


def test_exhibits_show_with_their_questions_and_open_full_size(learner_client, learner):
    exam = exam_with_bank(weights=(100,), per_domain=10)
    ExhibitImage.objects.create(name="05-curve.png", content_type="image/png", data=PNG, digest="x")
    question = exam.questions.order_by("pk").first()
    question.exhibit = "![Validation loss falls to 1.6 by step 2,000](exhibit:05-curve.png)\n\n| step | loss |\n|---|---|\n| 1 | 2.1 |"
    question.save()
    attempt = attempt_start(user=learner, exam=exam).attempt
    attempt_submit(user=learner, attempt_id=attempt.pk)
    position = attempt.responses.get(question=question).position
    page = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
    image = reverse("exams:exhibit", args=[question.pk, "05-curve.png"])
    figure = re.search(rf'<figure class="exhibit" aria-label="Exhibit of question {position}" tabindex="0">(.*?)</figure>', page, re.S)
    assert figure is not None
    assert f'<a class="exhibit-image" href="{image}" target="_blank" rel="noopener"><img src="{image}" alt="Validation loss falls to 1.6 by step 2,000">' in figure.group(1)
    assert "Open full size" in figure.group(1) and "<td>2.1</td>" in figure.group(1)
    assert learner_client.get(image).status_code == 200


def test_sources_that_name_a_web_address_are_links(learner_client, learner):
    exam = exam_with_bank(weights=(100,), per_domain=10)
    exam.questions.update(sources=(
        "- [Triton model configuration](https://docs.nvidia.com/deeplearning/triton-inference-server/) — checked 2026-11\n"
        "- NeMo guide, https://docs.nvidia.com/nemo-framework/ (checked 2026-11)"
    ))
    attempt = attempt_start(user=learner, exam=exam).attempt
    attempt_submit(user=learner, attempt_id=attempt.pk)
    page = learner_client.get(reverse("exams:results", args=[attempt.pk])).content.decode()
    learn_more = re.search(r'<div class="learn-more">(.*?)</div>', page, re.S).group(1)
    assert '<a href="https://docs.nvidia.com/deeplearning/triton-inference-server/" rel="noopener noreferrer nofollow">Triton model configuration</a>' in learn_more
    assert '<a href="https://docs.nvidia.com/nemo-framework/" rel="noopener noreferrer nofollow">' in learn_more
