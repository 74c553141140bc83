"""Users for the write floor, each with its row and a signed-in database session; writes {username: session key}.

Usage (FLOOR_DATABASE_URL, SECRET_KEY set): python bench/floor/seed.py --count 16 --out sessions.json
"""
import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "floorsite.settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    import django

    django.setup()
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore
    from floorsite.models import Row

    password = make_password("floor-passphrase")
    sessions = {}
    for index in range(args.count):
        user, _ = User.objects.get_or_create(username=f"floor{index:04d}", defaults={"password": password})
        Row.objects.get_or_create(user=user)
        # The session a login would have made, without paying for the password hash.
        store = SessionStore()
        store[SESSION_KEY] = str(user.pk)
        store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        store[HASH_SESSION_KEY] = user.get_session_auth_hash()
        store.create()
        sessions[user.username] = store.session_key
    args.out.write_text(json.dumps(sessions))
    print(f"{len(sessions)} floor users signed in")


if __name__ == "__main__":
    main()
