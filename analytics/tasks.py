"""Thin Celery entry point: add one batch of request statistics (idempotent by its batch id)."""

from celery import shared_task

from analytics.services import request_stats_apply
from memory_project.celery import BrokerTolerantTask


@shared_task(base=BrokerTolerantTask, acks_late=True, autoretry_for=(Exception,), retry_backoff=True, max_retries=5)
def request_stats_apply_task(batch_id: str, rows: list[list]) -> bool:
    return request_stats_apply(batch_id=batch_id, rows=rows)
