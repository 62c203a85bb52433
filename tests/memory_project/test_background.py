"""The in-process background pool (no broker): one thread, one kept connection, safe across fork."""

import threading

import pytest
from celery import shared_task
from django.db import OperationalError, connection, transaction

from memories.models import Memory
from memories.tasks import memory_access_task
from memory_project.background import background_drain, background_send
from tests.factories import MemoryFactory
from tests.support import in_forked_child

pytestmark = pytest.mark.django_db(transaction=True)


def _backends_that_counted_an_access() -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND query LIKE %s",
            ["%access_count%"],
        )
        return {row[0] for row in cursor.fetchall()}


def test_the_pool_thread_keeps_one_connection_across_tasks():
    # given a memory
    memory = MemoryFactory(content="kayak river")

    # when two access updates run in the background, one after the other
    background_send(memory_access_task, [str(memory.pk)])
    background_drain()
    first = _backends_that_counted_an_access()
    background_send(memory_access_task, [str(memory.pk)])
    background_drain()

    # then both ran, on the same open connection
    assert Memory.objects.get(pk=memory.pk).access_count == 2
    assert len(first) == 1
    assert _backends_that_counted_an_access() == first


def test_a_forked_child_runs_background_work_on_a_thread_of_its_own():
    # given a parent whose pool thread has run a task
    memory = MemoryFactory(content="kayak river")
    background_send(memory_access_task, [str(memory.pk)])
    background_drain()

    def send_and_drain() -> int:
        background_send(memory_access_task, [str(memory.pk)])
        background_drain()
        return 0

    # when it forks and the child sends work and waits for it
    code = in_forked_child(send_and_drain)

    # then the child's task ran: the count went up once in the parent and once in the child
    assert code == 0
    assert Memory.objects.get(pk=memory.pk).access_count == 2


_attempts: list[int] = []


@shared_task(autoretry_for=(OperationalError,), max_retries=2, default_retry_delay=0)
def _flaky_task(fail_times: int) -> int:
    _attempts.append(len(_attempts) + 1)
    if len(_attempts) <= fail_times:
        raise OperationalError("deadlock detected")
    return len(_attempts)


def test_a_task_that_asks_for_a_retry_runs_again_in_the_pool():
    # given a task that meets a deadlock once, as a fill can beside a concurrent write
    _attempts.clear()

    # when it runs in the background
    background_send(_flaky_task, 1)
    background_drain()

    # then the pool ran it again, as a worker would, and the second run succeeded
    assert _attempts == [1, 2]


def test_a_task_that_keeps_failing_stops_after_its_retries(caplog):
    # given a task that fails every time
    _attempts.clear()

    # when it runs in the background
    background_send(_flaky_task, 10)
    background_drain()

    # then it ran once and max_retries more times, and the last failure is logged as an error
    assert _attempts == [1, 2, 3]
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert errors == ["background task tests.memory_project.test_background._flaky_task failed"]


def test_with_a_broker_a_send_from_a_thread_of_its_own_borrows_no_connection(settings):
    # given a broker (tasks are sent, not run here) and a task that records what it is sent
    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent, borrowed = [], []

    class RecordingTask:
        def delay(self, *args):
            sent.append(args)

    # when a thread that then ends (as a batch buffer's timer does) sends it outside any transaction
    def send():
        background_send(RecordingTask(), 7, "search")
        borrowed.append(connection.connection is not None)

    thread = threading.Thread(target=send)
    thread.start()
    thread.join()

    # then the task was sent at once, and the thread took no connection from the pool (one it never
    # gave back would be lost to the process for good)
    assert sent == [(7, "search")]
    assert borrowed == [False]


def test_with_a_broker_a_send_inside_a_transaction_waits_for_its_commit(settings):
    # given a broker and a task that records what it is sent
    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent = []

    class RecordingTask:
        def delay(self, *args):
            sent.append(args)

    # when it is sent inside a transaction
    with transaction.atomic():
        background_send(RecordingTask(), 7)
        # then nothing goes before the commit
        assert sent == []

    # and it goes once the transaction commits
    assert sent == [(7,)]
