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



_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}


def upload_name(filename: str, data: bytes) -> str:
    """A safe bank name for an uploaded image: its file name in lower case, letters, digits, '_'
    and '-' only, with the extension of what the bytes are (so "../Chart Final.svg" holding a
    PNG is "chart-final.png"; bytes that are no accepted image keep the name checked_image refuses)."""
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    stem = base.rsplit(".", 1)[0] if "." in base else base
    stem = re.sub(r"[^a-z0-9_-]+", "-", stem.lower()).strip("-_")[:100] or "exhibit"
    extension = _EXTENSIONS.get(sniff_content_type(data) or "", "bin")
    return f"{stem}.{extension}"
