"""What a file's bytes say it is: the declared content type of an attachment must match them.

A few signatures (the types ATTACHMENT_VERIFIABLE_TYPES lists) are enough: a client that labels an
HTML page "image/png" is refused, so no stored file is ever served as something it is not.
"""

import json

_SIGNATURES = (
    ("image/png", b"\x89PNG\r\n\x1a\n"),
    ("image/jpeg", b"\xff\xd8\xff"),
    ("image/gif", b"GIF87a"),
    ("image/gif", b"GIF89a"),
    ("application/pdf", b"%PDF-"),
)
TEXT_TYPES = ("text/plain", "text/markdown", "text/csv", "application/json")
# Text that a browser would render as a page (or script) if it ever sniffed the body.
_MARKUP_PREFIXES = ("<!doctype", "<html", "<script", "<svg", "<?xml", "<head", "<body", "<iframe")


def sniffed_type(data: bytes, declared: str) -> str | None:
    """The content type `data` verifiably has, given the client's `declared` one; None when the
    bytes are not what was declared."""
    for content_type, signature in _SIGNATURES:
        if data.startswith(signature):
            return content_type if content_type == declared else None
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp" if declared == "image/webp" else None
    if declared not in TEXT_TYPES:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\x00" in text or text.lstrip().lower().startswith(_MARKUP_PREFIXES):
        return None
    if declared == "application/json":
        try:
            json.loads(text)
        except ValueError:
            return None
    return declared
