"""The per-process batch buffer behind request analytics and the access log."""

import time

import pytest
from django.db import connections

from memory_project.batching import BatchBuffer


def _buffer(sent: list) -> BatchBuffer:
    buffer = BatchBuffer(seconds_setting="T_SECONDS", items_setting="T_ITEMS", flush=lambda: sent.append(buffer.take()))
    return buffer


def test_adds_under_one_key_are_merged_and_the_batch_goes_when_enough_arrive(settings):
    # given a buffer sent every 3 adds
    settings.T_SECONDS, settings.T_ITEMS = 3600, 3
    sent: list = []
    buffer = _buffer(sent)

    # when three adds arrive, two under the same key
    for key in ("a", "a", "b"):
        buffer.add(key, lambda n: (n or 0) + 1)

    # then one batch went, merged per key, and the buffer is empty
    assert sent == [{"a": 2, "b": 1}]
    assert buffer.pending() == []


def test_a_batch_ages_from_its_first_add_not_from_the_last_send(settings):
    # given a buffer whose last batch left an hour ago
    settings.T_SECONDS, settings.T_ITEMS = 5, 100
    sent: list = []
    buffer = _buffer(sent)
    buffer._since = time.monotonic() - 3600

    # when a lone add arrives, and another owner's is discarded
    buffer.add("a", lambda _: 1)
    buffer.add("b", lambda _: 2)
    buffer.discard(lambda key, _: key != "b")

    # then it waits for its batch instead of going alone
    assert sent == []
    assert buffer.pending() == [1]
    assert buffer.take() == {"a": 1}


@pytest.mark.django_db(transaction=True)
def test_a_batch_sent_by_the_timer_gives_its_connection_back(settings):
    # given a buffer whose timer sends the batch after 0.05 s, through a flush that uses the database
    settings.T_SECONDS, settings.T_ITEMS = 0.05, 100
    used = []

    def flush():
        connections["default"].ensure_connection()
        used.append(connections["default"])

    buffer = BatchBuffer(seconds_setting="T_SECONDS", items_setting="T_ITEMS", flush=flush)

    # when one add arrives and the timer fires
    buffer.add("a", lambda _: 1)
    buffer._timer.join(timeout=10)

    # then the flush ran on the timer's thread, and that thread's connection was closed (given back
    # to the pool) before the thread ended
    assert len(used) == 1
    assert used[0] is not connections["default"]
    assert used[0].connection is None
