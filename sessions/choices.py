"""The choice sets the sessions app's rows share with the apps that write them (channels, roles)."""

from django.db import models


class Channel(models.TextChoices):
    """Where a session's turns arrive from: the dashboard's chat, the Telegram bot, the REST API, or
    an agent's periodic heartbeat run."""

    WEB = "web"
    TELEGRAM = "telegram"
    API = "api"
    HEARTBEAT = "heartbeat"


class Role(models.TextChoices):
    """Who said a turn, as in OpenAI's chat messages; only a user turn triggers an extraction before
    its session ends."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"
