from django.apps import AppConfig


class AccessLogConfig(AppConfig):
    name = "accesslog"
    verbose_name = "Per-query access log"

    def ready(self):
        # Imported in ready(): models and services load only once the app registry is.
        from accesslog import checks  # noqa: F401  (registers the system check)
        from accesslog.services import access_log_erasure_hook, access_log_served
        from erasure.hooks import erasure_hook_register
        from memories.signals import memories_served

        erasure_hook_register(access_log_erasure_hook)
        memories_served.connect(access_log_served, dispatch_uid="access_log_served")
