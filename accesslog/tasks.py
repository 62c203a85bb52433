"""Thin Celery entry points: add one batch of logged queries (idempotent by their ids), prune old ones."""

from celery import shared_task

from accesslog.services import access_log_apply, access_log_prune
from memory_project.celery import RETRY_WITH_BACKOFF, BrokerTolerantTask


@shared_task(base=BrokerTolerantTask, **RETRY_WITH_BACKOFF, max_retries=5)
def access_log_apply_task(entries: list[list]) -> int:
    return access_log_apply(entries=entries)


@shared_task
def access_log_prune_task() -> int:
    return access_log_prune()
