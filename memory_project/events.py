"""The one helper services use to push live events: after commit, to the owner's group and staff."""

import logging

from asgiref.sync import async_to_sync
from django.db import transaction

logger = logging.getLogger(__name__)

STAFF_GROUP = "events.staff"


def owner_group(owner_id) -> str:
    return f"events.owner.{owner_id}"


def event_publish(*, owner_id, type: str, data: dict) -> None:
    message = {"type": "event.message", "event": {"type": type, "data": data}}

    def send():
        from channels.layers import get_channel_layer

        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(owner_group(owner_id), message)
            async_to_sync(layer.group_send)(STAFF_GROUP, {**message, "owner_id": str(owner_id)})
        except Exception:  # a live push must never fail the write that caused it
            logger.warning("could not publish %s for owner %s", type, owner_id, exc_info=True)

    transaction.on_commit(send)
