"""The authentication backend path that sessions signed in before Django's own backend carry.

Until then AUTHENTICATION_BACKENDS named `accounts.backends.ModelBackend` (Django's
ModelBackend with a hand-prepared user read), and `login` stored that path in each session
(`_auth_user_backend`). Django signs a session in only while the path it carries is listed
in AUTHENTICATION_BACKENDS, so the old path stays listed, last, as this class: it finds a
session's user exactly as Django's ModelBackend does (an unknown or inactive user is no
one; Django still checks the session's password hash after it) and does nothing else. It
authenticates no one, so a login checks a password once, in Django's backend; it grants no
permission, so Django's backend alone answers those. Sessions signed in since carry
Django's path; once no stored session carries this one (a session lives
SESSION_COOKIE_AGE, two weeks, from its last save), this module and its line can go.
"""
from django.contrib.auth import backends


class ModelBackend(backends.BaseBackend):
    def get_user(self, user_id):
        return backends.ModelBackend().get_user(user_id)
