"""Writes of attachments: checked and stored with their turn, deleted when they expire or are erased.

Files are written to the storage inside the turn's transaction and removed again if it rolls back
(`attachments_discard`); they are deleted only after the rows that name them are gone for good
(after commit), so a failed deletion leaves a file without a row, never a row without its file.
"""

import hashlib
import logging
import re
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.db import connection, transaction
from django.utils import timezone
from rest_framework import status

from attachments.models import Attachment
from attachments.sniff import sniffed_type
from memory_project.exceptions import ServiceError
from memory_project.text import cjk_ngrams

logger = logging.getLogger(__name__)

EXPIRE_BATCH = 500


def attachment_storage():
    return storages["attachments"]


@dataclass
class PreparedFile:
    """An attachment checked against the limits, not stored yet."""

    filename: str
    content_type: str
    data: bytes
    caption: str
    storage_name: str
    saved: bool = False


def _safe_filename(name: str) -> str:
    # Only the last path segment, without control characters: it ends up in a header.
    name = PurePosixPath(name.replace("\\", "/")).name
    name = "".join(ch for ch in name if ch.isprintable() and ch not in '"\r\n')
    return name.strip()[:255] or "attachment"


def attachments_prepare(*, owner_id: int, turns: list[dict]) -> list[list[PreparedFile]]:
    """Check every attachment of `turns` (size, type verified against the bytes) before anything is
    stored; one refused file refuses the whole request with a 413 or 415 naming it."""
    limit = settings.ATTACHMENT_MAX_BYTES
    allowed = settings.ATTACHMENT_ALLOWED_TYPES
    prepared = []
    for turn_index, turn in enumerate(turns):
        files = []
        for index, spec in enumerate(turn.get("attachments") or []):
            where = {"turn": turn_index, "attachment": index, "filename": spec["filename"]}
            data = spec["data"]
            if len(data) > limit:
                raise ServiceError(
                    f"Attachment {spec['filename']!r} is {len(data)} bytes; the limit is {limit} bytes.",
                    code="attachment_too_large",
                    status_code=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
                    details={**where, "size": len(data), "limit": limit},
                )
            declared = spec["content_type"].split(";")[0].strip().lower()
            if declared not in allowed:
                raise ServiceError(
                    f"Attachment type {declared!r} is not accepted; accepted: {', '.join(allowed)}.",
                    code="unsupported_attachment_type",
                    status_code=status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
                    details={**where, "content_type": declared, "allowed": list(allowed)},
                )
            if sniffed_type(data, declared) is None:
                raise ServiceError(
                    f"Attachment {spec['filename']!r} is not a valid {declared} file.",
                    code="attachment_type_mismatch",
                    status_code=status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
                    details={**where, "content_type": declared},
                )
            day = timezone.now()
            files.append(
                PreparedFile(
                    filename=_safe_filename(spec["filename"]),
                    content_type=declared,
                    data=data,
                    caption=spec.get("caption") or "",
                    storage_name=f"{owner_id}/{day:%Y/%m}/{uuid.uuid4().hex}",
                )
            )
        prepared.append(files)
    return prepared


def _search_extra(filename: str, caption: str) -> str:
    """The file name's words (PostgreSQL reads "IMG_002.png" as one token) and CJK n-grams."""
    name_words = " ".join(re.findall(r"[^\W_]+", filename))
    return f"{name_words} {cjk_ngrams(f'{filename} {caption}')}".strip()


def attachments_store(*, turns: list, prepared: list[list[PreparedFile]]) -> list[Attachment]:
    """Write the files of each turn to the storage and their rows (inside the caller's transaction)."""
    storage = attachment_storage()
    retention = settings.ATTACHMENT_RETENTION_DAYS
    now = timezone.now()
    expires_at = now + timedelta(days=retention) if retention else None
    rows = []
    for turn, files in zip(turns, prepared, strict=True):
        turn.stored_attachments = []
        for position, f in enumerate(files):
            saved_as = storage.save(f.storage_name, ContentFile(f.data))
            f.storage_name, f.saved = saved_as, True
            rows.append(
                Attachment(
                    owner_id=turn.owner_id,
                    turn=turn,
                    position=position,
                    filename=f.filename,
                    content_type=f.content_type,
                    size=len(f.data),
                    sha256=hashlib.sha256(f.data).hexdigest(),
                    storage_name=saved_as,
                    caption=f.caption,
                    search_ngrams=_search_extra(f.filename, f.caption),
                    created_at=now,
                    expires_at=expires_at,
                )
            )
            turn.stored_attachments.append(rows[-1])
    return Attachment.objects.bulk_create(rows)


def attachments_discard(*, prepared: list[list[PreparedFile]]) -> None:
    """The transaction that stored these files rolled back: remove the files it wrote."""
    attachment_files_delete(names=[f.storage_name for files in prepared for f in files if f.saved])


def attachment_files_delete(*, names: list[str]) -> int:
    """Delete files from the storage; a failure is logged (the file is left over), never raised."""
    storage = attachment_storage()
    deleted = 0
    for name in names:
        try:
            storage.delete(name)
            deleted += 1
        except Exception:
            logger.exception("could not delete attachment file %s", name)
    return deleted


def attachments_expire(*, owner_id: int, now=None) -> int:
    """Delete the owner's attachments whose retention has passed: rows in batches of EXPIRE_BATCH by
    one statement each, their files after each batch commits. Returns how many went."""
    now = now or timezone.now()
    total = 0
    while True:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(
                    "DELETE FROM attachments_attachment WHERE id IN (SELECT id FROM attachments_attachment "
                    "WHERE owner_id = %s AND expires_at IS NOT NULL AND expires_at <= %s "
                    "ORDER BY expires_at LIMIT %s FOR UPDATE SKIP LOCKED) RETURNING storage_name",
                    [owner_id, now, EXPIRE_BATCH],
                )
                names = [row[0] for row in cursor.fetchall()]
            transaction.on_commit(lambda names=names: attachment_files_delete(names=names))
        total += len(names)
        if len(names) < EXPIRE_BATCH:
            return total


def attachment_erasure_hook(*, context) -> None:
    """Erasure: the files of the attachment rows it deletes, after its commit."""
    names = list(context.erased("attachments.Attachment").values_list("storage_name", flat=True))
    context.count("attachment_files", len(names))
    if names:
        context.after_commit(lambda: attachment_files_delete(names=names))
