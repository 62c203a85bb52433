from django.apps import AppConfig


class WebConfig(AppConfig):
    """The composition root: URLs, ASGI routing and the web server, above every app they serve."""

    name = "web"
    label = "web"

    def ready(self):
        # Imported once the settings of every app are loaded, as Django's own checks are.
        from web import checks  # noqa: F401  (registers system checks)
