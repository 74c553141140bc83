"""Fill the slot each existing report came from, where it can be told.

The learner's slot of the erratum's question in the latest attempt they could report it
from (finished, or the answer checked) no later than the report; failing that, their
latest such slot. A learner with no such slot keeps an empty one (triage then shows
authored letters only).
"""
from django.db import migrations
from django.db.models import Q


def fill_slots(apps, schema_editor):
    Dispute = apps.get_model("exams", "Dispute")
    Response = apps.get_model("exams", "Response")
    seen = Q(attempt__status__in=["submitted", "expired"]) | Q(checked_at__isnull=False)
    for dispute in Dispute.objects.filter(response__isnull=True).select_related("erratum").iterator():
        slots = Response.objects.filter(seen, attempt__user_id=dispute.learner_id, question_id=dispute.erratum.question_id)
        newest_first = ("-attempt__started_at", "-attempt_id")
        slot = slots.filter(attempt__started_at__lte=dispute.created_at).order_by(*newest_first).first()
        slot = slot or slots.order_by(*newest_first).first()
        if slot is not None:
            Dispute.objects.filter(pk=dispute.pk).update(response_id=slot.pk)


class Migration(migrations.Migration):
    dependencies = [("exams", "0019_i18a_errata_text_and_slot")]
    operations = [migrations.RunPython(fill_slots, migrations.RunPython.noop)]
