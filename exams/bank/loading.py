"""The shipped NCA-GENM bank: loaded into an empty database, or upgraded in place over an
earlier edition (questions, choices and errata by primary key, exhibit images by name)."""
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core import serializers
from django.core.management.color import no_style
from django.db import connection, transaction
from django.utils import timezone

from exams.bank.exhibits import checked_image
from exams.models import Choice, Domain, Erratum, Exam, ExhibitImage, Question, QuestionStatus

FIXTURES = settings.BASE_DIR / "fixtures"
EXHIBITS = FIXTURES / "bank" / "exhibits"
# Kept by the database, not by the fixture: never compared, never overwritten.
_UNTRACKED = {"created_at", "updated_at"}


def bank_fixture_paths() -> list[Path]:
    return [FIXTURES / "nca-genm.json", *sorted((FIXTURES / "bank").glob("*.json"))]


@dataclass
class BankChanges:
    added: Counter = field(default_factory=Counter)
    updated: Counter = field(default_factory=Counter)
    retired: list[int] = field(default_factory=list)
    revived: list[int] = field(default_factory=list)

    def summary(self) -> str:
        if not (self.added or self.updated or self.retired or self.revived):
            return "nothing to change: the database already holds this edition"
        parts = [f"{n} {name} added" for name, n in sorted(self.added.items())]
        parts += [f"{n} {name} updated" for name, n in sorted(self.updated.items())]
        if self.retired:
            parts.append(f"{len(self.retired)} questions retired ({', '.join(map(str, sorted(self.retired)))})")
        if self.revived:
            parts.append(f"{len(self.revived)} questions made active again")
        return "; ".join(parts)


_NAMES = {Exam: "exams", Domain: "domains", Question: "questions", Choice: "choices", Erratum: "errata", ExhibitImage: "exhibit images"}


@transaction.atomic
def bank_load(paths: list[Path] | None = None, exhibits: Path = EXHIBITS) -> BankChanges:
    """Make the database hold the shipped bank; idempotent. Objects are matched by primary
    key and written only where a field differs, so running it twice changes nothing and a
    question retired by the new edition keeps its past attempts."""
    changes = BankChanges()
    for path in paths or bank_fixture_paths():
        for deserialized in serializers.deserialize("json", Path(path).read_text(), ignorenonexistent=False):
            _apply(deserialized, changes)
    for image in sorted(exhibits.glob("*")) if exhibits.exists() else []:
        if image.is_file():
            _apply_image(image, changes)
    models = [Exam, Domain, Question, Choice, Erratum]
    with connection.cursor() as cursor:
        for statement in connection.ops.sequence_reset_sql(no_style(), models):
            cursor.execute(statement)
    return changes


def _apply(deserialized, changes: BankChanges) -> None:
    incoming = deserialized.object
    model = type(incoming)
    if model is Question:
        # The shipped bank is reviewed: it loads as ready (a fixture without status would
        # otherwise give the model's default, a draft).
        incoming.status = QuestionStatus.READY
    existing = model.objects.filter(pk=incoming.pk).first()
    if existing is None:
        deserialized.save()
        changes.added[_NAMES[model]] += 1
        return
    changed = [
        f.attname
        for f in model._meta.concrete_fields
        if not f.primary_key and f.name not in _UNTRACKED and getattr(existing, f.attname) != getattr(incoming, f.attname)
    ]
    if model is Question and _reviewed_since(existing, incoming):
        # An instructor marked it reviewed after this edition was checked: keep the later date.
        changed.remove("reviewed_on")
    m2m = {
        name: set(pks) for name, pks in (deserialized.m2m_data or {}).items()
        if set(getattr(existing, name).values_list("pk", flat=True)) != set(pks)
    }
    if not changed and not m2m:
        return
    if model is Question and "is_active" in changed:
        (changes.revived if incoming.is_active else changes.retired).append(incoming.pk)
    for attname in changed:
        setattr(existing, attname, getattr(incoming, attname))
    if changed:
        if model is Question:
            existing.updated_at = timezone.now()
            changed.append("updated_at")
        existing.save(update_fields=changed)
    for name, pks in m2m.items():
        getattr(existing, name).set(pks)
    if set(changed) - {"is_active", "updated_at"} or m2m or model is not Question:
        changes.updated[_NAMES[model]] += 1


def _reviewed_since(existing: Question, incoming: Question) -> bool:
    return bool(existing.reviewed_on and (incoming.reviewed_on is None or existing.reviewed_on > incoming.reviewed_on))


def _apply_image(path: Path, changes: BankChanges) -> None:
    data = path.read_bytes()
    content_type, digest = checked_image(path.name, data)
    existing = ExhibitImage.objects.filter(name=path.name).first()
    if existing is None:
        ExhibitImage.objects.create(name=path.name, content_type=content_type, data=data, digest=digest)
        changes.added[_NAMES[ExhibitImage]] += 1
    elif existing.digest != digest:
        existing.content_type, existing.data, existing.digest = content_type, data, digest
        existing.save()
        changes.updated[_NAMES[ExhibitImage]] += 1

