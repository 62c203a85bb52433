"""Small real files for attachment tests, the JSON a client sends for them, and sharing one."""

import base64
import struct
import zlib

from attachments.models import Attachment

TINY_PNG_SIZE = 69


def tiny_png() -> bytes:
    """A valid 1×1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def attachment(data: bytes, *, filename: str, content_type: str, caption: str = "") -> dict:
    return {
        "filename": filename,
        "content_type": content_type,
        "data": base64.b64encode(data).decode(),
        "caption": caption,
    }


def share_png(api, *, session_id, name: str) -> Attachment:
    """A tiny PNG called `name` sent with a user turn to the session through the API; its stored row."""
    body = api.post(
        f"/api/v1/sessions/{session_id}/turns/",
        {
            "role": "user",
            "content": f"Sharing {name}.",
            "attachments": [attachment(tiny_png(), filename=name, content_type="image/png")],
        },
        format="json",
    ).json()
    return Attachment.objects.get(pk=body["attachments"][0]["id"])
