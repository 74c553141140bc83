from django.apps import AppConfig


class ExamsConfig(AppConfig):
    name = "exams"
    verbose_name = "Exams"
