"""Extraction job rows in a given state, and a second database session holding a job's lock."""

from datetime import timedelta

import psycopg
from django.db import connection
from django.utils import timezone

from memories.services.extraction_jobs import JOB_LOCK_NAMESPACE, _job_lock_key
from sessions.models import ExtractionJob
from tests.factories import ChatSessionFactory


def job_at(owner, *, status="pending", attempts=0, age=timedelta(0), claimed_age=None, **kwargs) -> ExtractionJob:
    session = ChatSessionFactory(owner=owner)
    job = ExtractionJob.objects.create(owner=owner, session=session, kind="session_end", **kwargs)
    now = timezone.now()
    ExtractionJob.objects.filter(pk=job.pk).update(
        status=status,
        attempts=attempts,
        updated_at=now - age,
        claimed_at=None if claimed_age is None else now - claimed_age,
    )
    job.refresh_from_db()
    return job


class OtherWorker:
    """A second database session holding a job's lock, as a live worker would."""

    def __init__(self, job):
        params = connection.get_connection_params()
        params.pop("cursor_factory", None)
        params.pop("context", None)
        params.pop("prepare_threshold", None)
        self.conn = psycopg.connect(**params, autocommit=True)
        self.conn.execute("SELECT pg_advisory_lock(%s, %s)", [JOB_LOCK_NAMESPACE, _job_lock_key(job.pk)])

    def die(self):
        self.conn.close()


def locks_held_here() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND pid = pg_backend_pid()",
            [JOB_LOCK_NAMESPACE],
        )
        return cursor.fetchone()[0]
