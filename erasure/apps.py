from django.apps import AppConfig


class ErasureConfig(AppConfig):
    name = "erasure"
    verbose_name = "Erasure"

    def ready(self):
        # Imported in ready(): models and services load only once the app registry is.
        from erasure import hooks

        hooks.builtin_hooks_register()
