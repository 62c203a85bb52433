"""Idle sessions are ended by the periodic task, once."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions import tasks
from sessions.models import ChatSession, ExtractionJob
from tests.factories import ChatSessionFactory, ConversationTurnFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return UserFactory(username="alice")


def test_idle_sessions_are_ended_once(owner, settings, monkeypatch):
    settings.SESSION_IDLE_TIMEOUT_MINUTES = 30
    monkeypatch.setattr("memories.signals.extraction_job_dispatch_on_commit", lambda **kw: None)
    idle = ChatSessionFactory(owner=owner)
    for n in range(3):
        ConversationTurnFactory(session=idle, owner=owner, sequence=n + 1)
    ChatSession.objects.filter(pk=idle.pk).update(turn_count=3, last_activity_at=timezone.now() - timedelta(minutes=31))
    active = ChatSessionFactory(owner=owner)
    ChatSession.objects.filter(pk=active.pk).update(last_activity_at=timezone.now() - timedelta(minutes=29))

    first = tasks.sessions_idle_end.delay().get()
    second = tasks.sessions_idle_end.delay().get()

    idle.refresh_from_db()
    active.refresh_from_db()
    assert (first, second) == (1, 0)
    assert idle.status == "ended" and active.status == "open"
    job = ExtractionJob.objects.get(session=idle)
    assert (job.kind, job.range_start, job.range_end, job.status) == ("session_end", 1, 3, "pending")
