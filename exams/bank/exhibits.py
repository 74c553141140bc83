"""Exhibit images: which bytes are accepted (PNG, JPEG or WebP up to 500 KB, sniffed, never SVG)."""
import hashlib
import re

MAX_BYTES = 500_000
NAME = re.compile(r"^[\w-][\w.-]{0,118}$")


class ExhibitError(ValueError):
    pass


def sniff_content_type(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def checked_image(name: str, data: bytes) -> tuple[str, str]:
    """(content type, sha256) of an acceptable exhibit image, or ExhibitError saying why not."""
    if not NAME.match(name) or ".." in name:
        raise ExhibitError(f"exhibit name {name!r} may hold only letters, digits, '.', '_' and '-'")
    if len(data) > MAX_BYTES:
        raise ExhibitError(f"exhibit {name} is {len(data):,} bytes; at most {MAX_BYTES:,} are allowed")
    content_type = sniff_content_type(data)
    if content_type is None:
        raise ExhibitError(f"exhibit {name} is not a PNG, JPEG or WebP image")
    return content_type, hashlib.sha256(data).hexdigest()

