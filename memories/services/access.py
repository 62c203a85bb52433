"""Access statistics: the memories a search or a context call returned count as used.

Recording never queries: the returned ids are added to a per-process buffer (memory_project.batching)
and sent to the background as one batch every ACCESS_COUNT_FLUSH_SECONDS or
ACCESS_COUNT_FLUSH_SEARCHES searches, whichever comes first. One ten-row UPDATE sent per search had
cost a third of the search's own time, beside the next search, and a Celery message per search.
"""

import itertools
from collections import Counter

from django.db.models import F
from django.utils import timezone

from memories.models import Memory
from memory_project.background import background_send
from memory_project.batching import BatchBuffer

_searches = itertools.count()
_buffer = BatchBuffer(
    seconds_setting="ACCESS_COUNT_FLUSH_SECONDS",
    items_setting="ACCESS_COUNT_FLUSH_SEARCHES",
    flush=lambda: memory_access_flush(),
)


def memory_access_apply(*, memory_ids: list[str]) -> int:
    """Count each memory once per time it is listed (a batch lists it once per search that returned
    it); returns the rows updated. One UPDATE per distinct count: almost always one in all."""
    now = timezone.now()
    by_count: dict[int, list[str]] = {}
    for memory_id, count in Counter(memory_ids).items():
        by_count.setdefault(count, []).append(memory_id)
    return sum(
        Memory.objects.filter(pk__in=ids).update(access_count=F("access_count") + count, last_accessed_at=now)
        for count, ids in sorted(by_count.items())
    )


def memory_access_record(*, memory_ids: list[str]) -> None:
    """Count these memories as used (one search's answer), in this process's next batch."""
    ids = [str(i) for i in memory_ids]
    if ids:
        _buffer.add(next(_searches), lambda _: ids)


def memory_access_flush() -> int:
    """Send what this process recorded so far to the background; returns the searches it held."""
    # memories.tasks imports this module: the task is imported when a batch is sent.
    from memories.tasks import memory_access_task

    searches = list(_buffer.take().values())
    ids = [memory_id for answer in searches for memory_id in answer]
    if ids:
        background_send(memory_access_task, ids)
    return len(searches)
