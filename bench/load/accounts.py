"""Create N learner accounts for the load benchmark in a few statements (one password hash for all).

Usage (environment as for manage.py): python bench/load/accounts.py --count 220

With --sessions FILE --signed-in-from N, accounts N onwards also get a signed-in session
(made as a login would make it, without paying for the password hash) and FILE, the
locust session cache (bench/load/locustfile.py), gets their cookies: learners "already
signed in" for the start spike and the capacity ramp.
"""
import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--prefix", default="learner")
    parser.add_argument("--password", default="bench-learner-passphrase")
    parser.add_argument("--sessions", help="the locust session cache to add signed-in sessions to")
    parser.add_argument("--signed-in-from", type=int, default=None)
    args = parser.parse_args()

    import django

    django.setup()
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from django.db import transaction

    from accounts.models import Profile

    started = time.perf_counter()
    # One hash (with its salt) for every account: hashing costs ~1 s each at Django's
    # 1,500,000 PBKDF2 iterations; logging in still verifies it the full way.
    password = make_password(args.password)
    names = [f"{args.prefix}{index:04d}" for index in range(args.count)]
    with transaction.atomic():
        existing = set(User.objects.filter(username__in=names).values_list("username", flat=True))
        User.objects.bulk_create(
            [User(username=name, email=f"{name}@example.com", password=password) for name in names if name not in existing],
            batch_size=1000,
        )
        users = User.objects.filter(username__in=names).values_list("pk", flat=True)
        Profile.objects.bulk_create([Profile(user_id=pk) for pk in users], batch_size=1000, ignore_conflicts=True)
    signed_in = 0
    if args.sessions and args.signed_in_from is not None:
        signed_in = sign_in(args.sessions, names[args.signed_in_from:])
    print(f"{len(names)} learner accounts ready ({len(names) - len(existing)} new, {signed_in} signed in already) "
          f"in {time.perf_counter() - started:.1f} s")


def sign_in(cache: str, names: list[str]) -> int:
    import json
    import secrets
    import string

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.utils.module_loading import import_string

    store_class = import_string(f"{settings.SESSION_ENGINE}.SessionStore")
    path = Path(cache)
    sessions = json.loads(path.read_text()) if path.exists() else {}
    for user in User.objects.filter(username__in=names):
        store = store_class()
        store[SESSION_KEY] = str(user.pk)
        store[BACKEND_SESSION_KEY] = "accounts.backends.ModelBackend"
        store[HASH_SESSION_KEY] = user.get_session_auth_hash()
        store.create()
        csrf = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
        sessions[user.username] = [
            {"name": "sessionid", "value": store.session_key, "domain": "127.0.0.1", "path": "/"},
            {"name": "csrftoken", "value": csrf, "domain": "127.0.0.1", "path": "/"},
        ]
    path.write_text(json.dumps(sessions))
    return len(names)


if __name__ == "__main__":
    main()
