"""Integrations: the Telegram bot and outgoing webhooks."""

import ipaddress

from django.core.exceptions import ImproperlyConfigured

from memory_project.env import env_bool, env_float, env_int, env_list, env_str
from memory_project.settings.api import SPECTACULAR_SETTINGS
from memory_project.settings.logs import LOGGING

TELEGRAM_BOT_TOKEN = env_str("TELEGRAM_BOT_TOKEN")
# Telegram sends it as X-Telegram-Bot-Api-Secret-Token; without it the webhook endpoint is off (404).
TELEGRAM_WEBHOOK_SECRET = env_str("TELEGRAM_WEBHOOK_SECRET")
TELEGRAM_API_BASE = env_str("TELEGRAM_API_BASE", "https://api.telegram.org") or "https://api.telegram.org"
TELEGRAM_BOT_USERNAME = env_str("TELEGRAM_BOT_USERNAME")  # only for the t.me deep link shown with a code
TELEGRAM_LINK_CODE_TTL_MINUTES = env_float("TELEGRAM_LINK_CODE_TTL_MINUTES", 15, minimum=1)
TELEGRAM_TIMEOUT_SECONDS = env_float("TELEGRAM_TIMEOUT_SECONDS", 10, minimum=0.1)
TELEGRAM_SEND_MAX_ATTEMPTS = env_int("TELEGRAM_SEND_MAX_ATTEMPTS", 4, minimum=1, maximum=10)
TELEGRAM_RETRY_BASE_SECONDS = env_float("TELEGRAM_RETRY_BASE_SECONDS", 0.5, minimum=0)
TELEGRAM_RETRY_MAX_SECONDS = env_float("TELEGRAM_RETRY_MAX_SECONDS", 30, minimum=0)
WEBHOOK_TIMEOUT_SECONDS = env_float("WEBHOOK_TIMEOUT_SECONDS", 10, minimum=0.1)
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 6, minimum=1, maximum=20)
# Attempt n+1 waits base × 2^(n−1) seconds, at most WEBHOOK_RETRY_MAX_SECONDS.
WEBHOOK_RETRY_BASE_SECONDS = env_float("WEBHOOK_RETRY_BASE_SECONDS", 2, minimum=0)
WEBHOOK_RETRY_MAX_SECONDS = env_float("WEBHOOK_RETRY_MAX_SECONDS", 600, minimum=0)
WEBHOOK_SWEEP_AFTER_SECONDS = env_int("WEBHOOK_SWEEP_AFTER_SECONDS", 300, minimum=1)
# Without a broker, deliveries run on the in-process scheduler's threads rather than in the request
# that caused the event; each subscription has at most one delivery in flight, so a dead endpoint
# holds one thread at a time and delays only its own deliveries.
WEBHOOK_EAGER_IN_BACKGROUND = env_bool("WEBHOOK_EAGER_IN_BACKGROUND", True)
WEBHOOK_EMBEDDED_WORKERS = env_int("WEBHOOK_EMBEDDED_WORKERS", 4, minimum=1, maximum=64)
# Webhooks go to public addresses only (loopback, link-local, private, multicast and other
# non-public addresses are refused after DNS resolution); a self-hoster lists the networks of their
# own receivers here, e.g. "10.0.0.0/8,127.0.0.1/32".
WEBHOOK_ALLOWED_NETWORKS = env_list("WEBHOOK_ALLOWED_NETWORKS", [])
for _network in WEBHOOK_ALLOWED_NETWORKS:
    try:
        ipaddress.ip_network(_network, strict=False)
    except ValueError:
        raise ImproperlyConfigured(
            f"WEBHOOK_ALLOWED_NETWORKS: {_network!r} is not a network such as 10.0.0.0/8 or 127.0.0.1"
        ) from None
# The Bot API URL carries the bot token, and httpx2 (the HTTP client here and in openai) logs every
# request URL at INFO.
LOGGING["loggers"]["httpx2"] = {"level": "WARNING"}
# Named once in the OpenAPI schema, whichever serializer field uses them.
SPECTACULAR_SETTINGS.setdefault("ENUM_NAME_OVERRIDES", {}).update(
    {
        "WebhookEventEnum": "integrations.choices.WebhookEvent",
        "WebhookDeliveryStatusEnum": "integrations.models.WebhookDelivery.DeliveryStatus",
        # One name per choice set that several fields share (issue 14: generated clients get one enum).
        "MemoryStatusEnum": "memories.models.Status",
        "CategoryEnum": "memories.models.Category",
        "Seed004CategoryEnum": "memories.api.compat.SEED_CATEGORIES",
        "ResultTypeEnum": ["memory", "turn"],
        "ToolTypeEnum": ["function"],
        "WriteActionEnum": ["add", "update", "delete", "noop"],
    }
)
