"""Event rules (seed 003 §11): condition operators, the default rules, and the three actions."""

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from memories.drafts import MemoryDraft
from memories.models import EventRule, Memory, MemoryEvent, Status
from memories.services.event_rules import (
    condition_matches,
    event_rules_evaluate,
    event_rules_seed_defaults,
    rule_matches,
)
from memories.services.memories import memory_create
from memory_project.events import owner_group
from sessions.models import ChatSession, ExtractionJob
from sessions.services.sessions import session_end
from tests.factories import ConversationTurnFactory, UserFactory

DATA = {"turn_count": 4, "session_id": "s1", "memory": {"category": "fact", "tags": ["a", "b"]}, "text": "Hello World"}


@pytest.mark.parametrize(
    ("field", "op", "value", "expected"),
    [
        ("turn_count", "eq", 4, True),
        ("turn_count", "ne", 4, False),
        ("turn_count", "gt", 3, True),
        ("turn_count", "gte", 4, True),
        ("turn_count", "lt", 4, False),
        ("turn_count", "lte", 4, True),
        ("turn_count", ">=", 3, True),
        ("payload.turn_count", ">=", 5, False),
        ("data.memory.category", "in", ["fact", "rule"], True),
        ("memory.tags", "contains", "b", True),
        ("text", "contains", "world", True),
        ("text", "contains", "planet", False),
        ("missing.path", "eq", None, False),
        ("turn_count", "gt", "3", False),
        ("turn_count", "in", 4, False),
        ("turn_count", "matches", 4, False),
    ],
)
def test_condition_operators(field, op, value, expected):
    assert condition_matches({"field": field, "op": op, "value": value}, DATA) is expected


def test_all_and_any_matching():
    conditions = [{"field": "turn_count", "op": "gte", "value": 3}, {"field": "text", "op": "eq", "value": "nope"}]

    assert not rule_matches(EventRule(match="all", conditions=conditions), DATA)
    assert rule_matches(EventRule(match="any", conditions=conditions), DATA)
    assert rule_matches(EventRule(match="all", conditions=[]), DATA)


@pytest.fixture
def default_rules(db):
    event_rules_seed_defaults()
    return EventRule.objects.filter(owner=None)


def test_default_rules_are_seeded(default_rules):
    rules = {r.name: (r.event_type, r.action, r.conditions, r.enabled) for r in default_rules}

    assert rules["consolidate_on_session_end"] == (
        "session.ended",
        "consolidate",
        [{"field": "turn_count", "op": "gte", "value": 3}],
        True,
    )
    assert rules["notify_important_memory"] == (
        "memory.write.important",
        "notify",
        [{"field": "importance", "op": "gte", "value": 0.8}],
        True,
    )


def _ended_session(owner, turns: int) -> ChatSession:
    session = ChatSession.objects.create(owner=owner, status="ended", turn_count=turns)
    for n in range(turns):
        ConversationTurnFactory(session=session, owner=owner, sequence=n + 1)
    return session


def test_consolidate_rule_is_idempotent_with_session_end(default_rules):
    owner = UserFactory(username="alice")
    session = ChatSession.objects.create(owner=owner)
    for n in range(3):
        ConversationTurnFactory(session=session, owner=owner, sequence=n + 1)
    ChatSession.objects.filter(pk=session.pk).update(turn_count=3)

    session_end(session=session)
    fired = event_rules_evaluate(
        owner_id=owner.pk, event_type="session.ended", data={"session_id": str(session.pk), "turn_count": 3}
    )

    assert fired == ["consolidate_on_session_end"]
    assert ExtractionJob.objects.filter(session=session, kind="session_end").count() == 1


def test_consolidate_rule_enqueues_a_missing_job_once(default_rules):
    owner = UserFactory(username="alice")
    session = _ended_session(owner, 3)
    data = {"session_id": str(session.pk), "turn_count": 3}

    event_rules_evaluate(owner_id=owner.pk, event_type="session.ended", data=data)
    event_rules_evaluate(owner_id=owner.pk, event_type="session.ended", data=data)

    job = ExtractionJob.objects.get(session=session, kind="session_end")
    assert (job.status, job.range_start, job.range_end) == ("pending", 1, 3)


def test_consolidate_rule_ignores_short_sessions_and_other_owners(default_rules):
    owner, stranger = UserFactory(username="alice"), UserFactory(username="mallory")
    short = _ended_session(owner, 2)
    other = _ended_session(owner, 3)

    event_rules_evaluate(
        owner_id=owner.pk, event_type="session.ended", data={"session_id": str(short.pk), "turn_count": 2}
    )
    event_rules_evaluate(
        owner_id=stranger.pk, event_type="session.ended", data={"session_id": str(other.pk), "turn_count": 3}
    )

    assert not ExtractionJob.objects.filter(session__in=[short, other]).exists()


def _drain(channel_layer, channel) -> list[dict]:
    async def receive_all():
        import asyncio

        out = []
        while True:
            try:
                out.append(await asyncio.wait_for(channel_layer.receive(channel), 0.1))
            except TimeoutError:
                return out

    return async_to_sync(receive_all)()


def test_important_memory_emits_event_and_default_rule_notifies(default_rules, django_capture_on_commit_callbacks):
    owner = UserFactory(username="alice")
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(owner_group(owner.pk), channel)

    with django_capture_on_commit_callbacks(execute=True):
        important = memory_create(
            owner=owner, draft=MemoryDraft(content="The deploy key rotates every Friday", importance=0.9), actor="t"
        )
        memory_create(owner=owner, draft=MemoryDraft(content="Likes green tea", importance=0.5), actor="t")

    events = [m["event"] for m in _drain(layer, channel)]
    types = [e["type"] for e in events]
    assert types.count("memory.write.important") == 1
    assert types.count("notification") == 1
    notification = next(e for e in events if e["type"] == "notification")
    assert notification["data"]["rule"] == "notify_important_memory"
    assert notification["data"]["event_type"] == "memory.write.important"
    assert notification["data"]["event"]["memory_id"] == str(important.pk)


def test_flag_rule_sends_matching_memory_to_review(db):
    owner, other = UserFactory(username="alice"), UserFactory(username="bob")
    EventRule.objects.create(
        owner=owner,
        name="review secrets",
        event_type="memory.changed",
        conditions=[
            {"field": "action", "op": "eq", "value": "added"},
            {"field": "memory.content", "op": "contains", "value": "password"},
        ],
        action="flag",
    )

    flagged = memory_create(owner=owner, draft=MemoryDraft(content="My bank password hint is the cat"), actor="t")
    kept = memory_create(owner=owner, draft=MemoryDraft(content="I like hiking"), actor="t")
    others = memory_create(owner=other, draft=MemoryDraft(content="The password manager is 1Password"), actor="t")

    assert Memory.objects.get(pk=flagged.pk).status == Status.PENDING_REVIEW
    assert Memory.objects.get(pk=kept.pk).status == Status.ACTIVE
    assert Memory.objects.get(pk=others.pk).status == Status.ACTIVE
    moderation = MemoryEvent.objects.get(memory=flagged, event_type="moderate")
    assert moderation.actor == "rule:review secrets"
    assert moderation.after["status"] == "pending_review"


def test_disabled_rules_do_not_fire(db):
    owner = UserFactory(username="alice")
    EventRule.objects.create(name="off", event_type="memory.changed", conditions=[], action="flag", enabled=False)

    memory = memory_create(owner=owner, draft=MemoryDraft(content="Anything at all"), actor="t")

    assert Memory.objects.get(pk=memory.pk).status == Status.ACTIVE


def test_a_failing_action_does_not_break_the_write(db, monkeypatch):
    from memories.services import event_rules

    owner = UserFactory(username="alice")
    EventRule.objects.create(name="boom", event_type="memory.changed", conditions=[], action="flag")

    def explode(**kwargs):
        raise RuntimeError("rule bug")

    monkeypatch.setitem(event_rules.ACTIONS, "flag", explode)

    memory = memory_create(owner=owner, draft=MemoryDraft(content="Still stored"), actor="t")

    assert Memory.objects.filter(pk=memory.pk, status=Status.ACTIVE).exists()
