"""Thin Celery entry point: add one batch of request statistics (idempotent by its batch id)."""

from celery import shared_task

from analytics.services import request_stats_apply
from memory_project.celery import RETRY_WITH_BACKOFF, BrokerTolerantTask


@shared_task(base=BrokerTolerantTask, **RETRY_WITH_BACKOFF, max_retries=5)
def request_stats_apply_task(batch_id: str, rows: list[list]) -> bool:
    return request_stats_apply(batch_id=batch_id, rows=rows)
