"""Event rules (seed 003 §11): when an event matches a rule's conditions, run its action.

Rules are rows (editable in the admin); owner-less rules apply to every owner. A condition is
`{"field": "turn_count", "op": "gte", "value": 3}`; `field` is a dotted path into the event data
(a leading `data.` or `payload.` is ignored, so seed-style paths work). Ops: eq, ne, gt, gte, lt,
lte, in, contains (and the seed's ==, !=, >, >=, <, <=). A condition on a missing field, or one
comparing incomparable values, is false rather than an error.

Actions:
- consolidate: the session named by `session_id` gets its session-end job if it has none yet
  (an open session is left alone: consolidating it now would shut out its later turns);
- notify: a `notification` event to the owner (and staff) naming the rule and the event;
- flag: the memory named by `memory_id` (or `memory.id`) goes to `pending_review`.

Each action runs in a savepoint: a failing rule is logged and never undoes the change that emitted
the event.
"""

import logging
import operator
import threading
import time
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from memories.models import EventRule, EventType, Memory, Status
from memories.services.extraction_jobs import extraction_job_dispatch_on_commit
from memories.services.memories import memory_update
from memory_project.events import event_publish
from sessions.models import ChatSession, ExtractionJob

logger = logging.getLogger(__name__)

NOTIFICATION_EVENT = "notification"
_MISSING = object()
# Events emitted while a rule runs (a flag's memory.changed) may match rules again; beyond this
# depth they are published but not evaluated, so no chain of rules can loop.
MAX_DEPTH = 2


def _contains(container, item) -> bool:
    if isinstance(container, str):
        return isinstance(item, str) and item.casefold() in container.casefold()
    return item in container


OPS = {
    "eq": operator.eq,
    "ne": operator.ne,
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
    "in": lambda value, options: value in options,
    "contains": _contains,
}
OP_ALIASES = {"==": "eq", "!=": "ne", ">": "gt", ">=": "gte", "<": "lt", "<=": "lte"}

DEFAULT_RULES = [
    {
        "name": "consolidate_on_session_end",
        "event_type": "session.ended",
        "match": "all",
        "conditions": [{"field": "turn_count", "op": "gte", "value": 3}],
        "action": "consolidate",
    },
    {
        "name": "notify_important_memory",
        "event_type": "memory.write.important",
        "match": "all",
        "conditions": [{"field": "importance", "op": "gte", "value": 0.8}],
        "action": "notify",
    },
]


# ---------------------------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------------------------
def field_value(data: dict, path: str) -> Any:
    parts = [p for p in str(path).split(".") if p]
    if parts and parts[0] in ("data", "payload") and parts[0] not in data:
        parts = parts[1:]
    value: Any = data
    for part in parts:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def condition_matches(condition: dict, data: dict) -> bool:
    if not isinstance(condition, dict):
        return False
    op = OP_ALIASES.get(condition.get("op"), condition.get("op"))
    compare = OPS.get(op)
    value = field_value(data, condition.get("field", ""))
    if compare is None or value is _MISSING:
        return False
    try:
        return bool(compare(value, condition.get("value")))
    except TypeError:  # e.g. "3" > 2, or `in` against a number: a non-match, not a crash
        return False


def rule_matches(rule: EventRule, data: dict) -> bool:
    conditions = rule.conditions if isinstance(rule.conditions, list) else []
    if not conditions:
        return True
    results = (condition_matches(c, data) for c in conditions)
    return any(results) if rule.match == EventRule.Match.ANY else all(results)


# ---------------------------------------------------------------------------------------------
# Which event types have rules at all: most events (turn.created, one per turn) have none, and
# must not cost a query each. Edits in this process clear the cache at once; other processes
# (workers) see them within EVENT_RULES_CACHE_SECONDS.
# ---------------------------------------------------------------------------------------------
_cache_lock = threading.Lock()
_cache: dict[str, Any] = {"loaded_at": None, "types": frozenset()}


def event_rules_cache_clear() -> None:
    with _cache_lock:
        _cache["loaded_at"] = None


@receiver(post_save, sender=EventRule)
@receiver(post_delete, sender=EventRule)
def _rules_changed(**kwargs):
    event_rules_cache_clear()


def _types_with_rules() -> frozenset[str]:
    now = time.monotonic()
    with _cache_lock:
        loaded_at = _cache["loaded_at"]
        if loaded_at is not None and now - loaded_at < settings.EVENT_RULES_CACHE_SECONDS:
            return _cache["types"]
    types = frozenset(EventRule.objects.filter(enabled=True).values_list("event_type", flat=True).distinct())
    with _cache_lock:
        _cache.update(loaded_at=now, types=types)
    return types


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------
_depth = threading.local()


def event_rules_evaluate(*, owner_id, event_type: str, data: dict) -> list[str]:
    """Run every enabled rule of `owner_id` (and the global ones) matching this event; returns the
    names of the rules whose action ran."""
    depth = getattr(_depth, "value", 0)
    if depth >= MAX_DEPTH or event_type == NOTIFICATION_EVENT:
        return []
    try:
        if event_type not in _types_with_rules():
            return []
        rules = list(
            EventRule.objects.filter(enabled=True, event_type=event_type)
            .filter(Q(owner__isnull=True) | Q(owner_id=owner_id))
            .order_by("pk")
        )
    except Exception:  # rules must never break the write that emitted the event
        logger.exception("could not load event rules for %s", event_type)
        return []
    fired = []
    _depth.value = depth + 1
    try:
        for rule in rules:
            if not rule_matches(rule, data):
                continue
            try:
                with transaction.atomic():
                    ACTIONS[rule.action](rule=rule, owner_id=owner_id, event_type=event_type, data=data)
                fired.append(rule.name)
            except Exception:
                logger.exception("event rule %r (%s) failed on %s", rule.name, rule.action, event_type)
    finally:
        _depth.value = depth
    return fired


def _action_consolidate(*, rule: EventRule, owner_id, event_type: str, data: dict) -> None:
    session_id = data.get("session_id")
    if not session_id:
        return
    session = ChatSession.objects.filter(pk=session_id, owner_id=owner_id).first()
    if session is None or session.status != ChatSession.SessionStatus.ENDED:
        return
    if ExtractionJob.objects.filter(session=session, kind=ExtractionJob.Kind.SESSION_END).exists():
        return  # session_end already queued it (in this same transaction)
    job = ExtractionJob.objects.create(
        owner_id=owner_id,
        session=session,
        kind=ExtractionJob.Kind.SESSION_END,
        range_start=1 if session.turn_count else 0,
        range_end=session.turn_count,
    )
    extraction_job_dispatch_on_commit(job_id=job.pk)


def _action_notify(*, rule: EventRule, owner_id, event_type: str, data: dict) -> None:
    event_publish(
        owner_id=owner_id,
        type=NOTIFICATION_EVENT,
        data={"rule": rule.name, "rule_id": rule.pk, "event_type": event_type, "event": data},
        rules=False,
    )


def _action_flag(*, rule: EventRule, owner_id, event_type: str, data: dict) -> None:
    memory = data.get("memory")
    memory_id = data.get("memory_id") or (memory.get("id") if isinstance(memory, dict) else None)
    if not memory_id:
        return
    target = Memory.objects.filter(pk=memory_id, owner_id=owner_id).first()
    if target is None or target.status in (Status.PENDING_REVIEW, Status.REJECTED, Status.FORGOTTEN):
        return
    memory_update(
        memory=target,
        actor=f"rule:{rule.name}"[:100],
        event_type=EventType.MODERATE,
        reason=f"flagged by event rule {rule.name!r} on {event_type}",
        status=Status.PENDING_REVIEW,
    )


ACTIONS = {
    EventRule.Action.CONSOLIDATE: _action_consolidate,
    EventRule.Action.NOTIFY: _action_notify,
    EventRule.Action.FLAG: _action_flag,
}


def event_rules_seed_defaults() -> int:
    """Create the global default rules that are missing (the data migration does the same on a new
    database); returns how many were created."""
    created = 0
    for rule in DEFAULT_RULES:
        _, made = EventRule.objects.get_or_create(
            owner=None, name=rule["name"], defaults={k: v for k, v in rule.items() if k != "name"}
        )
        created += made
    return created
