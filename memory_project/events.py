"""The one helper services use to push live events: after commit, to the owner's group and staff."""

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)

STAFF_GROUP = "events.staff"


def owner_group(owner_id) -> str:
    return f"events.owner.{owner_id}"


def api_key_group(key_id) -> str:
    """The WebSockets opened with one API key (closed when it is revoked)."""
    return f"events.apikey.{key_id}"


def group_send(group: str, message: dict) -> None:
    """Send a channel-layer group message from synchronous code: without waiting for it when the
    layer can (embedded mode's PostgreSQL layer), else through the layer's async API."""
    layer = get_channel_layer()
    if layer is None:
        return
    if hasattr(layer, "group_send_soon"):
        layer.group_send_soon(group, message)
    else:
        async_to_sync(layer.group_send)(group, message)


def api_key_sockets_close(*, key_id) -> None:
    """After commit, close every WebSocket opened with this key, in every process (channel layer)."""

    def send():
        try:
            group_send(api_key_group(key_id), {"type": "api.key.revoked"})
        except Exception:
            logger.warning("could not close the sockets of API key %s", key_id, exc_info=True)

    transaction.on_commit(send)


# Other apps (webhooks) hear every event through these, called like the rules: inside the caller's
# transaction, so what they record commits or rolls back with the change.
_listeners: list = []
# The event rules' evaluator, registered by the app that keeps the rules (memories) from its ready(),
# so that this module, which every app imports, imports none of them.
_rule_evaluators: list = []


def event_listener_register(listener) -> None:
    """`listener(owner_id=, type=, data=)` is called for every published event; it must not raise."""
    if listener not in _listeners:
        _listeners.append(listener)


def event_rules_register(evaluator) -> None:
    """`evaluator(owner_id=, event_type=, data=)` runs the rules an event matches; it must not raise."""
    if evaluator not in _rule_evaluators:
        _rule_evaluators.append(evaluator)


def event_publish(*, owner_id, type: str, data: dict, rules: bool = True) -> None:
    """Push after commit; run the matching EventRules now, inside the caller's transaction, so a
    rule's effect (a flag, a job) commits or rolls back with the change that caused it. `rules` is
    False for events that rules themselves emit, so rules cannot feed each other."""
    message = {"type": "event.message", "event": {"type": type, "data": data}}

    def send():
        try:
            group_send(owner_group(owner_id), message)
            group_send(STAFF_GROUP, {**message, "owner_id": str(owner_id)})
        except Exception:  # a live push must never fail the write that caused it
            logger.warning("could not publish %s for owner %s", type, owner_id, exc_info=True)

    transaction.on_commit(send)
    for listener in _listeners:
        listener(owner_id=owner_id, type=type, data=data)
    if rules:
        for evaluate in _rule_evaluators:
            evaluate(owner_id=owner_id, event_type=type, data=data)
