"""`manage.py serve_background`: the background process of the embedded mode writes what it still
buffered before it exits."""

import signal

import pytest
from django.core.management import call_command

from memories.models import Memory
from memories.services.access import memory_access_record
from tests.factories import MemoryFactory


@pytest.mark.django_db(transaction=True)
def test_the_background_process_writes_the_access_counts_it_still_buffered_when_it_exits(settings, user):
    # given a search's access count held by a batch due in an hour, in a process that runs at its
    # own priority (no renice here: it would slow the rest of the test run)
    settings.ACCESS_COUNT_FLUSH_SECONDS, settings.ACCESS_COUNT_FLUSH_SEARCHES = 3600, 1000
    settings.BACKGROUND_NICE = 0
    kayak = MemoryFactory(owner=user, content="kayak")
    memory_access_record(memory_ids=[kayak.pk])
    assert Memory.objects.get(pk=kayak.pk).access_count == 0

    # when the background process finds its server gone and exits
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        call_command("serve_background", parent=-1)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)

    # then the count was written on its way out
    assert Memory.objects.get(pk=kayak.pk).access_count == 1
