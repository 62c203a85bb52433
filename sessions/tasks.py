"""Thin Celery entry points of the sessions app.

The extraction and turn-vector tasks live in memories.tasks, under the names they had here.
"""

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from memory_project.celery import RETRY_WITH_BACKOFF
from sessions.models import ChatSession
from sessions.services.sessions import session_end

logger = logging.getLogger(__name__)

IDLE_BATCH = 200


@shared_task(**RETRY_WITH_BACKOFF, max_retries=3)
def sessions_idle_end() -> int:
    """End sessions idle for SESSION_IDLE_TIMEOUT_MINUTES; ending is idempotent, so overlapping
    runs are harmless."""
    cutoff = timezone.now() - timedelta(minutes=settings.SESSION_IDLE_TIMEOUT_MINUTES)
    idle = ChatSession.objects.filter(status=ChatSession.SessionStatus.OPEN, last_activity_at__lt=cutoff)
    ended = 0
    for session in idle.order_by("last_activity_at")[:IDLE_BATCH]:
        try:
            session_end(session=session)
            ended += 1
        except Exception:  # one bad session must not stop the others from ending
            logger.exception("could not end idle session %s", session.pk)
    if ended:
        logger.info("ended %s idle session(s)", ended)
    return ended
