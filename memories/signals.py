"""A revoked or deleted API key closes the WebSockets opened with it, however it was revoked
(the admin, a dashboard page, a service, a shell): the check runs on the row's save and delete.

`memories_served` tells listeners (the access log) which memories a search, a context build or a tool
call handed out, so memories need not know who keeps that record."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import Signal, receiver

from memories.models import ApiKey
from memory_project.events import api_key_sockets_close

# Keyword arguments: owner_id, kind ("search", "context", "tool"), query, agent, results.
memories_served = Signal()


@receiver(post_save, sender=ApiKey, dispatch_uid="api_key_revoked_closes_sockets")
def api_key_saved(sender, instance: ApiKey, created: bool, **kwargs) -> None:
    if instance.revoked_at is not None:
        api_key_sockets_close(key_id=instance.pk)


@receiver(post_delete, sender=ApiKey, dispatch_uid="api_key_deleted_closes_sockets")
def api_key_deleted(sender, instance: ApiKey, **kwargs) -> None:
    api_key_sockets_close(key_id=instance.pk)
