"""Usernames that cannot impersonate: the UTS #39 confusable skeleton, stored beside the username.

`кіm` (Cyrillic) and `kim` (Latin) show alike in a cohort report and the admin. Each user's
skeletons (`UsernameSkeleton`) carry unique indexes, so a look-alike of a taken name is
refused at sign-up and in the admin, also when two requests race (the IntegrityError is
answered with the form's own error, as for the email rule).
"""
import functools
import unicodedata
from pathlib import Path

CONFUSABLES = Path(__file__).resolve().parent / "confusables.txt"
LOOK_ALIKE = "This username looks like one already taken: choose another."


@functools.cache
def _prototypes() -> dict[str, str]:
    """confusables.txt's mapping: a code point → its prototype (one or more code points)."""
    mapping = {}
    with CONFUSABLES.open(encoding="utf-8-sig") as lines:
        for line in lines:
            data = line.split("#", 1)[0].strip()
            if not data:
                continue
            source, target, _kind = (field.strip() for field in data.split(";"))
            mapping[chr(int(source, 16))] = "".join(chr(int(point, 16)) for point in target.split())
    return mapping


def confusables_version() -> str:
    """The Unicode version of the shipped confusables.txt (its header's "Version:" line)."""
    with CONFUSABLES.open(encoding="utf-8-sig") as lines:
        for line in lines:
            if line.startswith("# Version:"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def skeleton(text: str) -> str:
    """UTS #39 skeleton(X): NFD, each code point replaced by its prototype, NFD again."""
    prototypes = _prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(prototypes.get(character, character) for character in decomposed))


def username_skeletons(username: str) -> tuple[str, str]:
    """The two keys a username may not share with another: the skeleton of its casefolded
    form, and of its upper-cased form.

    Both, because Unicode's prototypes differ by case: Cyrillic `к` maps to Latin `ĸ` (kra),
    not `k`, while `К` maps to `K`, so `кіm` and `kim` share only the upper-cased skeleton
    (`KlM`); other pairs share only the casefolded one.
    """
    folded = unicodedata.normalize("NFKC", username).casefold()
    return skeleton(folded), skeleton(folded.upper())


def look_alike(username: str, *, user_pk: int | None) -> str | None:
    """The taken username this one looks like (not the user's own), or None."""
    from django.db.models import Q

    from accounts.models import UsernameSkeleton

    folded, upper = username_skeletons(username)
    clash = (
        UsernameSkeleton.objects.filter(Q(skeleton=folded) | Q(upper_skeleton=upper))
        .exclude(user_id=user_pk).select_related("user").first()
    )
    return clash.user.get_username() if clash else None


def username_claim(user) -> None:
    """Store (or renew) the user's skeletons; an IntegrityError means a look-alike won a race."""
    from accounts.models import UsernameSkeleton

    folded, upper = username_skeletons(user.get_username())
    UsernameSkeleton.objects.update_or_create(user=user, defaults={"skeleton": folded, "upper_skeleton": upper})
