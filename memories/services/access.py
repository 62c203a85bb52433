"""Access statistics, updated off the query path (memory_project.background)."""

from django.db.models import F
from django.utils import timezone

from memories.models import Memory
from memory_project.background import background_send


def memory_access_apply(*, memory_ids: list[str]) -> int:
    return Memory.objects.filter(pk__in=memory_ids).update(
        access_count=F("access_count") + 1, last_accessed_at=timezone.now()
    )


def memory_access_record(*, memory_ids: list[str]) -> None:
    # memories.tasks imports this module: the task is imported when a batch is sent.
    from memories.tasks import memory_access_task

    background_send(memory_access_task, [str(i) for i in memory_ids])
