"""Access counts: a search's returned memories count as used, written off the query path in batches."""

import time

import pytest

from memories.models import Memory
from memories.services.access import memory_access_apply, memory_access_record
from memory_project.background import background_drain
from tests.factories import MemoryFactory


def test_a_batch_counts_a_memory_once_per_search_that_returned_it(user):
    # given two memories never used
    kayak, tent = MemoryFactory(owner=user, content="kayak"), MemoryFactory(owner=user, content="tent")

    # when a batch lists the kayak for three searches and the tent for one
    updated = memory_access_apply(memory_ids=[str(kayak.pk), str(tent.pk), str(kayak.pk), str(kayak.pk)])

    # then each count grew by its searches, and both were marked as used now
    kayak.refresh_from_db()
    tent.refresh_from_db()
    assert updated == 2
    assert (kayak.access_count, tent.access_count) == (3, 1)
    assert kayak.last_accessed_at == tent.last_accessed_at
    assert kayak.last_accessed_at is not None


@pytest.mark.django_db(transaction=True)
def test_searches_are_sent_together_when_enough_have_come(settings, user):
    # given batches of three searches (and no timer within the test)
    settings.ACCESS_COUNT_FLUSH_SEARCHES, settings.ACCESS_COUNT_FLUSH_SECONDS = 3, 3600
    kayak, tent = MemoryFactory(owner=user, content="kayak"), MemoryFactory(owner=user, content="tent")

    # when two searches return the kayak
    for _ in range(2):
        memory_access_record(memory_ids=[kayak.pk])
    background_drain()

    # then nothing is written yet
    assert list(Memory.objects.order_by("content").values_list("access_count", flat=True)) == [0, 0]

    # when a third search returns both
    memory_access_record(memory_ids=[kayak.pk, tent.pk])
    background_drain()

    # then the batch of three is written at once
    assert list(Memory.objects.order_by("content").values_list("content", "access_count")) == [
        ("kayak", 3),
        ("tent", 1),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_lone_search_is_sent_by_the_timer(settings, user):
    # given batches of 100 searches or 0.05 s, whichever comes first
    settings.ACCESS_COUNT_FLUSH_SEARCHES, settings.ACCESS_COUNT_FLUSH_SECONDS = 100, 0.05
    kayak = MemoryFactory(owner=user, content="kayak")

    # when one search returns it and the timer has fired
    memory_access_record(memory_ids=[kayak.pk])
    deadline = time.monotonic() + 10
    while Memory.objects.get(pk=kayak.pk).access_count == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
        background_drain()

    # then its use is counted once
    assert Memory.objects.get(pk=kayak.pk).access_count == 1
