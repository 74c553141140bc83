"""Registers the admin of each concern with Django's admin site (which looks for exams.admin)."""
from exams.bank import admin as bank_admin  # noqa: F401
