from django.apps import AppConfig


class ErasureConfig(AppConfig):
    name = "erasure"
    verbose_name = "Erasure"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from erasure import hooks

        hooks.builtin_hooks_register()
