from django.apps import AppConfig


class WebConfig(AppConfig):
    """The composition root: URLs, ASGI routing and the web server, above every app they serve."""

    name = "web"
    label = "web"
