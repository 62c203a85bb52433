"""The schema keeps the nightly decay a HOT update: no index holds `strength`, pages keep room."""

import pytest
from django.db import connection


@pytest.mark.django_db
def test_no_index_of_the_memory_table_holds_strength():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            "JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = ANY(x.indkey) "
            "WHERE x.indrelid = 'memories_memory'::regclass AND a.attname = 'strength'"
        )
        holding = cursor.fetchall()
        cursor.execute("SELECT count(*) FROM pg_index WHERE indrelid = 'memories_memory'::regclass")
        indexes = cursor.fetchone()[0]

    assert holding == []
    assert indexes >= 8  # the check above saw the table's indexes, not an empty catalogue


@pytest.mark.django_db
def test_memory_pages_keep_half_free_for_hot_updates():
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'memories_memory'")
        assert cursor.fetchone()[0] == ["fillfactor=50"]


@pytest.mark.django_db
def test_decay_of_a_memory_is_a_hot_update(user):
    from datetime import timedelta

    from django.utils import timezone

    from memories.models import LifecycleRun
    from memories.services.lifecycle.common import StepContext
    from memories.services.lifecycle.decay import decay_step
    from tests.factories import MemoryFactory

    # given memories said 40 days ago
    old = timezone.now() - timedelta(days=40)
    for n in range(5):
        MemoryFactory(owner=user, content=f"fact {n}", strength=0.6, observed_at=old)
    run = StepContext(owner=user, run=LifecycleRun.objects.create(owner=user, trigger="test"),
                     now=timezone.now(), export_dir=None)  # fmt: skip
    before = _update_counters()

    # when the decay step runs
    counts, _ = decay_step(run)

    # then every decayed row was updated without a new index entry
    updated, hot = (after - was for after, was in zip(_update_counters(), before))
    assert counts["decayed"] == 5
    assert (updated, hot) == (5, 5)


def _update_counters() -> tuple[int, int]:
    """Row updates and HOT updates of the memory table by this backend not yet flushed to the
    statistics, which can include earlier transactions: compare two readings in one transaction."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_stat_get_xact_tuples_updated('memories_memory'::regclass), "
            "pg_stat_get_xact_tuples_hot_updated('memories_memory'::regclass)"
        )
        return cursor.fetchone()
