import hashlib
import secrets

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from memories.models import ApiKey
from memory_project.events import api_key_sockets_close

KEY_PREFIX = "mem_"


def api_key_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


@transaction.atomic
def api_key_create(*, username: str, name: str = "") -> tuple[ApiKey, str]:
    """Create a key for `username` (creating the user if missing); the raw key is returned once."""
    user, _ = get_user_model().objects.get_or_create(username=username)
    raw = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey.objects.create(owner=user, name=name, prefix=raw[:12], key_hash=api_key_hash(raw))
    return key, raw


def api_key_revoke(*, key: ApiKey) -> ApiKey:
    """Revoke a key: it stops authenticating at once and the WebSockets opened with it are closed.
    Revoking a revoked key keeps its first date."""
    if key.revoked_at is None:
        ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
        key.refresh_from_db(fields=["revoked_at"])
    # A queryset update sends no post_save (memories/signals.py): the key's WebSockets are closed here.
    api_key_sockets_close(key_id=key.pk)
    return key
