"""The choice sets the sessions app's rows share with the apps that write them (channels, roles)."""

from django.db import models


class Channel(models.TextChoices):
    WEB = "web"
    TELEGRAM = "telegram"
    API = "api"
    HEARTBEAT = "heartbeat"


class Role(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"
