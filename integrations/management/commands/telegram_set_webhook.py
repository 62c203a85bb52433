"""`manage.py telegram_set_webhook URL`: point the bot at this service's webhook, with the secret token."""

import re

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from integrations.services.telegram_api import TelegramApiError, telegram_set_webhook

# What Telegram accepts as secret_token.
SECRET_FORMAT = re.compile(r"^[A-Za-z0-9_-]{1,256}$")


class Command(BaseCommand):
    help = (
        "Register URL (https://<host>/integrations/telegram/webhook/) as the bot's webhook, with "
        "TELEGRAM_WEBHOOK_SECRET as its secret token."
    )

    def add_arguments(self, parser):
        parser.add_argument("url", help="the public HTTPS URL of /integrations/telegram/webhook/")
        parser.add_argument("--drop-pending-updates", action="store_true", help="discard updates Telegram queued")

    def handle(self, *args, url, drop_pending_updates, **options):
        if not settings.TELEGRAM_BOT_TOKEN:
            raise CommandError("TELEGRAM_BOT_TOKEN is not set")
        secret = settings.TELEGRAM_WEBHOOK_SECRET
        if not secret:
            raise CommandError("TELEGRAM_WEBHOOK_SECRET is not set (the webhook endpoint is disabled without it)")
        if not SECRET_FORMAT.match(secret):
            raise CommandError("TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
        if not url.startswith(("https://", "http://")):
            raise CommandError(f"not a URL: {url}")
        try:
            telegram_set_webhook(url=url, secret_token=secret, drop_pending_updates=drop_pending_updates)
        except TelegramApiError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Webhook set: {url}")
