"""Every URL pattern in the resolver (so a page added later is covered), as every persona,
GET and POST, with hostile path parts and query strings: never a 5xx or a traceback, and a
refused request changes nothing."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import (
    BODY_KINDS,
    NUMBERS,
    WORDS,
    build_path,
    build_world,
    check,
    failure_text,
    fuzz_settings,
    hostile,
    rolled_back,
    send,
    slot_value,
    snapshot,
    url_patterns,
)

pytestmark = pytest.mark.django_db
PATTERNS = url_patterns()
# Query parameters the pages read, and some they never do.
QUERY_NAMES = ["page", "show", "domain", "exam", "walk", "q", "o", "p", "e", "all", "next", "_changelist_filters",
               "exam__id__exact", "status", "_popup", "_to_field", "term", "app_label", "model_name", "field_name", "x"]


def test_the_resolver_is_walked_whole():
    routes = {pattern.route for pattern in PATTERNS}
    assert {"attempts/<int:attempt_id>/q/<int:position>/", "admin/exams/question/import/<str:token>/confirm/",
            "accounts/reset/<str:uidb64>/<str:token>/", "favicon.ico"} <= routes
    assert any(pattern.name == "admin:app_list" for pattern in PATTERNS)


def test_every_url_pattern_answers_hostile_input_without_a_server_error():
    world = build_world()
    failures = []
    for pattern in PATTERNS:
        slots = [part for part in pattern.parts if not isinstance(part, str)]

        @fuzz_settings(per_hundred=4)
        @given(
            persona=st.sampled_from(sorted(world.clients)),
            values=st.fixed_dictionaries({slot.name: slot_value(slot, world) for slot in slots}),
            method=st.sampled_from(["get", "post"]),
            body=st.sampled_from(BODY_KINDS),
            query=st.dictionaries(st.sampled_from(QUERY_NAMES) | st.text(max_size=8),
                                  st.lists(hostile(sum(world.ids.values(), [])) | st.sampled_from(NUMBERS + WORDS), min_size=1, max_size=2),
                                  max_size=3),
        )
        def run(persona, values, method, body, query):
            client = world.clients[persona]
            url = build_path(pattern, values)
            with rolled_back(client):
                before = snapshot()
                response = send(client, method, url, query, body=body)
                check(response, method, before, f"{persona} {method.upper()} {url} ({body})")

        try:
            run()
        except Exception as error:  # every pattern is tried; all failures are reported together
            failures.append(failure_text(pattern.route, error))
    assert not failures, "\n\n".join(failures)
