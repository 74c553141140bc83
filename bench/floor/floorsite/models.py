from django.conf import settings
from django.db import models


class Row(models.Model):
    """One row per user: what the floor's write locks and updates."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    value = models.IntegerField(default=0)
