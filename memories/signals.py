"""Receivers connected when the app is ready, and the signals memories sends.

A revoked or deleted API key closes the WebSockets opened with it, however it was revoked (the
admin, a dashboard page, a service, a shell): the check runs on the row's save and delete.

Stored turns and ended sessions (sessions.signals) start the turn-to-memory pipeline: turn vectors
after the commit, extraction jobs queued in the same transaction as the turns.

`memories_served` tells listeners (the access log) which memories a search, a context build or a tool
call handed out, so memories need not know who keeps that record."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import Signal, receiver

from memories.models import ApiKey
from memories.services.extraction_jobs import extraction_job_dispatch_on_commit, extraction_jobs_enqueue_for_turns
from memories.services.turn_embeddings import turn_embeddings_request
from memory_project.events import api_key_sockets_close
from sessions.signals import session_ended, turns_stored

# Keyword arguments: owner_id, kind ("search", "context", "tool"), query, agent, results.
memories_served = Signal()


@receiver(post_save, sender=ApiKey, dispatch_uid="api_key_revoked_closes_sockets")
def api_key_saved(sender, instance: ApiKey, created: bool, **kwargs) -> None:
    if instance.revoked_at is not None:
        api_key_sockets_close(key_id=instance.pk)


@receiver(post_delete, sender=ApiKey, dispatch_uid="api_key_deleted_closes_sockets")
def api_key_deleted(sender, instance: ApiKey, **kwargs) -> None:
    api_key_sockets_close(key_id=instance.pk)


@receiver(turns_stored, dispatch_uid="turns_stored_start_pipeline")
def turns_stored_received(sender, session, turns, **kwargs) -> None:
    turn_embeddings_request(stored=len(turns))
    extraction_jobs_enqueue_for_turns(session=session, turns=turns)


@receiver(session_ended, dispatch_uid="session_ended_dispatches_job")
def session_ended_received(sender, session, job, **kwargs) -> None:
    extraction_job_dispatch_on_commit(job_id=job.pk)
