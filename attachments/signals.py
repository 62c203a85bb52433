"""A row deleted through the ORM (the admin, a cascade from a deleted session) takes its file along."""

from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from attachments.models import Attachment
from attachments.services import attachment_files_delete


@receiver(post_delete, sender=Attachment)
def attachment_file_delete(sender, instance: Attachment, **kwargs) -> None:
    name = instance.storage_name
    transaction.on_commit(lambda: attachment_files_delete(names=[name]))
