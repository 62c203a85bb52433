from django.apps import AppConfig


class AttachmentsConfig(AppConfig):
    name = "attachments"

    def ready(self):
        # Imported in ready(): models and services load only once the app registry is.
        from attachments import signals  # noqa: F401
        from attachments.services import attachment_erasure_hook
        from erasure.hooks import erasure_hook_register

        erasure_hook_register(attachment_erasure_hook)
