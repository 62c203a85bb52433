"""Access statistics, updated off the query path: a Celery task with a broker, else a thread."""

from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import connection
from django.db.models import F
from django.utils import timezone

from memories.models import Memory

_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-access")


def memory_access_apply(*, memory_ids: list[str]) -> int:
    return Memory.objects.filter(pk__in=memory_ids).update(
        access_count=F("access_count") + 1, last_accessed_at=timezone.now()
    )


def _in_thread(memory_ids: list[str]) -> None:
    try:
        memory_access_apply(memory_ids=memory_ids)
    finally:
        # A worker thread's connection would otherwise outlive its use (and block test teardown).
        connection.close()


def memory_access_record(*, memory_ids: list[str]) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        _executor.submit(_in_thread, list(memory_ids))
    else:
        from memories.tasks import memory_access_task

        memory_access_task.delay([str(i) for i in memory_ids])
