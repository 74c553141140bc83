"""Every form found on the pages each persona can open (learner, instructor, admin, and
anonymous), found by fetching every URL pattern of the resolver with real objects and parsing
the HTML, so a form added later is fuzzed without editing this file. Each form is posted
with its fields kept, dropped, doubled or replaced by hostile values, in bodies of every
kind: never a 5xx or a traceback, and a refused post changes nothing."""
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import (
    BODY_KINDS,
    Form,
    build_path,
    build_world,
    check,
    content_of,
    default_data,
    failure_text,
    forms_on,
    fuzz_settings,
    hostile,
    rolled_back,
    send,
    snapshot,
    upload,
    url_patterns,
)

pytestmark = pytest.mark.django_db
PERSONAS = ["anonymous", "learner", "instructor", "admin"]


def page_urls(world, persona: str) -> list[str]:
    """Every pattern filled with the persona's real objects (and a foreign one or two)."""
    urls = []
    for pattern in url_patterns():
        slots = [part for part in pattern.parts if not isinstance(part, str)]
        choices = []
        for slot in slots:
            if slot.name == "object_id" and pattern.name.startswith("admin:"):
                model = pattern.name.removeprefix("admin:").rsplit("_", 1)[0]
                known = world.objects.get(model, [])[:1]
            elif slot.name == "app_label":
                known = ["exams"]
            else:
                known = world.ids.get(slot.name, [])[:4]
            choices.append(known)
        if all(choices):
            for values in itertools.product(*choices):
                urls.append(build_path(pattern, dict(zip([slot.name for slot in slots], values, strict=True))))
    return urls


def discover_forms(world, persona: str) -> list[tuple[str, Form]]:
    client = world.clients[persona]
    found = {}
    for url in page_urls(world, persona):
        with rolled_back(client):
            response = client.get(url)
            if response.status_code != 200 or not response.get("Content-Type", "").startswith("text/html"):
                continue
            for form in forms_on("http://testserver" + url, content_of(response).decode()):
                found.setdefault(form.signature(), (url, form))
    return list(found.values())


MUTATIONS = ["keep", "keep", "drop", "hostile", "double", "foreign"]


@pytest.mark.parametrize("persona", PERSONAS)
def test_every_form_on_the_pages_survives_hostile_posts(persona):
    world = build_world()
    forms = discover_forms(world, persona)
    if persona != "anonymous":
        # The personas reach their own pages' forms (a smoke check that discovery works).
        assert len(forms) >= 5, [form.action for _, form in forms]
    known = sorted({value for values in world.ids.values() for value in values})
    client = world.clients[persona]
    failures = []
    for page, form in forms:
        names = sorted({item.name for item in form.fields if item.kind not in ("submit", "file")})
        files = sorted({item.name for item in form.fields if item.kind == "file"})
        submits = [item for item in form.fields if item.kind == "submit"]

        @fuzz_settings(per_hundred=2)
        @given(
            submit=st.sampled_from(submits) if submits else st.none(),
            mutations=st.fixed_dictionaries({name: st.sampled_from(MUTATIONS) for name in names}),
            values=st.fixed_dictionaries({name: hostile(known) for name in names}),
            extra=st.dictionaries(st.text(min_size=1, max_size=12), hostile(known), max_size=2),
            body=st.sampled_from(BODY_KINDS),
            file_bytes=st.binary(max_size=300) | st.sampled_from([b"\x00" * 64, "::T::Q{=a ~b}".encode(), b'{"format":1}']),
            file_name=st.sampled_from(["bank.gift", "bank.txt", "bank.json", "bank.xml", "bank.exe", "../../x.gift", "x\x00.gift", ""]),
        )
        def run(submit, mutations, values, extra, body, file_bytes, file_name):
            data = default_data(form, submit)
            for name, mutation in mutations.items():
                if mutation == "drop":
                    data.pop(name, None)
                elif mutation == "hostile":
                    data[name] = [values[name]]
                elif mutation == "double":
                    data[name] = data.get(name, [""]) + [values[name]]
                elif mutation == "foreign":
                    data[name] = [known[hash(name) % len(known)]]
            for name, value in extra.items():
                data.setdefault(name, [value])
            uploads = {name: upload(file_name or "noname", file_bytes) for name in files}
            with rolled_back(client):
                before = snapshot()
                response = send(client, form.method, form.action, data, body=body if form.method == "post" else "multipart", files=uploads)
                check(response, form.method, before, f"{persona} {form.method.upper()} {form.action} (form on {page}, {body})")

        try:
            run()
        except Exception as error:  # every form is tried; all failures are reported together
            failures.append(failure_text(f"{form.method} {form.action} (on {page})", error))
    assert not failures, "\n\n".join(failures)
