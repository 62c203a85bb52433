"""`manage.py telegram_link_code USERNAME`: a one-time code the user sends to the bot as /start <code>."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from integrations.services.telegram import telegram_link_code_create, telegram_link_code_payload


class Command(BaseCommand):
    help = "Create a one-time Telegram link code for USERNAME; the code is the last line printed."

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username, **options):
        owner = get_user_model().objects.filter(username=username).first()
        if owner is None:
            raise CommandError(f"no such user: {username}")
        payload = telegram_link_code_payload(telegram_link_code_create(owner=owner))
        self.stdout.write(f"Send this to the bot from Telegram before {payload['expires_at']}: {payload['command']}")
        if payload["link"]:
            self.stdout.write(f"or open {payload['link']}")
        self.stdout.write(payload["code"])
