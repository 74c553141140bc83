from django.apps import AppConfig


class CohortsConfig(AppConfig):
    name = "cohorts"
    verbose_name = "Cohorts"
