from celery import shared_task

from memories.services.access import memory_access_apply


@shared_task(acks_late=True, autoretry_for=(Exception,), retry_backoff=True, max_retries=3)
def memory_access_task(memory_ids: list[str]) -> int:
    return memory_access_apply(memory_ids=memory_ids)
