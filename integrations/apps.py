from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"
    verbose_name = "Integrations"

    def ready(self):
        # Imported in ready(): models and services load only once the app registry is.
        from integrations.services.erasure_hooks import integration_erasure_hooks_register
        from integrations.services.webhooks import webhook_event_received
        from memory_project.events import event_listener_register

        event_listener_register(webhook_event_received)
        integration_erasure_hooks_register()
