"""Every Leitner review item becomes an FSRS card in the Review state; then the boxes go.

Stability is the box's interval in days (box 1, due again the same day, counts as one
day), difficulty the middle of FSRS's 1–10 scale, the last review the item's last update,
and the card falls due at the start of the item's due date in the learner's time zone, so
nothing due before is due later now. The numbers are written here, not imported: this
migration must keep meaning what it meant after exams.schedule is gone.
"""
from datetime import UTC, datetime, time
from zoneinfo import ZoneInfo

from django.db import migrations

# exams.schedule.INTERVAL_DAYS as it was, box 1 lifted to one day (FSRS needs a stability > 0).
STABILITY_DAYS = {1: 1.0, 2: 1.0, 3: 3.0, 4: 7.0, 5: 16.0}
DIFFICULTY = 5.0
REVIEW_STATE = 2
BATCH = 2000


def _zones(Profile):
    return dict(Profile.objects.values_list("user_id", "time_zone"))


def leitner_to_cards(apps, schema_editor):
    ReviewItem = apps.get_model("exams", "ReviewItem")
    ReviewCard = apps.get_model("exams", "ReviewCard")
    zones = _zones(apps.get_model("accounts", "Profile"))
    cards = []
    for item in ReviewItem.objects.order_by("pk").iterator(chunk_size=BATCH):
        zone = ZoneInfo(zones.get(item.user_id, "UTC"))
        cards.append(ReviewCard(
            user_id=item.user_id, question_id=item.question_id, state=REVIEW_STATE, step=None,
            stability=STABILITY_DAYS[item.box], difficulty=DIFFICULTY,
            due=datetime.combine(item.due_on, time.min, tzinfo=zone).astimezone(UTC),
            last_review=item.updated_at, updated_at=item.updated_at,
        ))
        if len(cards) == BATCH:
            ReviewCard.objects.bulk_create(cards)
            cards = []
    ReviewCard.objects.bulk_create(cards)


def cards_to_leitner(apps, schema_editor):
    """Back to boxes: the largest box whose interval the card's stability reaches, due on its due date."""
    ReviewItem = apps.get_model("exams", "ReviewItem")
    ReviewCard = apps.get_model("exams", "ReviewCard")
    zones = _zones(apps.get_model("accounts", "Profile"))
    items = []
    for card in ReviewCard.objects.order_by("pk").iterator(chunk_size=BATCH):
        stability = card.stability or 0.0
        box = max((box for box, days in STABILITY_DAYS.items() if days <= stability), default=1)
        items.append(ReviewItem(
            user_id=card.user_id, question_id=card.question_id, box=box,
            due_on=card.due.astimezone(ZoneInfo(zones.get(card.user_id, "UTC"))).date(), updated_at=card.updated_at,
        ))
    ReviewItem.objects.bulk_create(items, batch_size=BATCH)
    ReviewCard.objects.all().delete()


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0001_initial"),
        ("exams", "0017_i15a_review_cards"),
    ]

    operations = [
        migrations.RunPython(leitner_to_cards, cards_to_leitner),
        migrations.DeleteModel(name="ReviewItem"),
    ]
