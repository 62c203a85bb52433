"""Migration 0010: memories superseded before issue 11 (left active at half strength) are archived."""

import importlib

from django.db import connection

from memories.models import MemoryEvent, MemoryRelation
from tests.factories import MemoryFactory

migration = importlib.import_module("memories.migrations.0010_archive_superseded")


def test_an_active_superseded_memory_is_archived_with_a_history_row(user):
    # given an old memory superseded the pre-issue-11 way (still active, pinned) and an untouched one
    old = MemoryFactory(owner=user, content="User prefers tea", strength=0.3, pinned=True)
    new = MemoryFactory(owner=user, content="User prefers coffee", strength=0.6)
    other = MemoryFactory(owner=user, content="User lives in Porto", strength=0.6)
    MemoryRelation.objects.create(owner=user, source=new, target=old, type="supersedes")

    # when the migration's statement runs
    with connection.cursor() as cursor:
        cursor.execute(migration.ARCHIVE_SQL)

    # then only the superseded memory is archived and unpinned, at the same strength, and says why
    for memory in (old, new, other):
        memory.refresh_from_db()
    assert (old.status, old.pinned, old.strength) == ("archived", False, 0.3)
    assert (new.status, other.status) == ("active", "active")
    event = MemoryEvent.objects.get(memory=old)
    assert (event.event_type, event.actor, event.before["status"], event.after["status"]) == (
        "archive",
        "system:migration",
        "active",
        "archived",
    )
    assert not MemoryEvent.objects.filter(memory__in=[new, other]).exists()
