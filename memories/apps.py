from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from memories import checks  # noqa: F401  (registers system checks)
