from django.apps import AppConfig


class AccessLogConfig(AppConfig):
    name = "accesslog"
    verbose_name = "Per-query access log"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from accesslog import checks  # noqa: F401  (registers the system check)
        from accesslog.services import access_log_erasure_hook
        from erasure.hooks import erasure_hook_register

        erasure_hook_register(access_log_erasure_hook)
