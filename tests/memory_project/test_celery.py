"""The Celery app's worker hooks: a worker process about to exit sends what its batch buffers hold."""

import os

import pytest
from celery.signals import worker_process_shutdown

from accesslog.models import QueryLog
from accesslog.services import access_log_record
from memories.models import Memory
from memories.services.access import memory_access_record
from memory_project.background import background_drain
from tests.factories import MemoryFactory


@pytest.mark.django_db(transaction=True)
def test_a_worker_process_about_to_exit_sends_the_searches_it_still_buffered(settings, user):
    # given a search's access count and access-log entry held by batches due in an hour
    settings.ACCESS_COUNT_FLUSH_SECONDS = settings.ACCESS_LOG_FLUSH_SECONDS = 3600
    settings.ACCESS_COUNT_FLUSH_SEARCHES = settings.ACCESS_LOG_FLUSH_ENTRIES = 1000
    kayak = MemoryFactory(owner=user, content="kayak")
    memory_access_record(memory_ids=[kayak.pk])
    access_log_record(
        owner_id=user.pk, kind="search", query="kayak?", agent="", results=[{"id": kayak.pk, "score": 0.5}]
    )
    background_drain()
    assert (Memory.objects.get(pk=kayak.pk).access_count, QueryLog.objects.count()) == (0, 0)

    # when the worker process shuts down
    worker_process_shutdown.send(sender=None, pid=os.getpid(), exitcode=0)
    background_drain()

    # then both were written
    assert Memory.objects.get(pk=kayak.pk).access_count == 1
    assert list(QueryLog.objects.values_list("owner_id", "kind", "query")) == [(user.pk, "search", "kayak?")]
