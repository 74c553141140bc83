"""Create N learner accounts for the load benchmark in a few statements (one password hash for all).

Usage (environment as for manage.py): python bench/load/accounts.py --count 220
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
    print(f"{len(names)} learner accounts ready ({len(names) - len(existing)} new) in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
