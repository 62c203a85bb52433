"""`manage.py telegram_link_code USERNAME`: a one-time code the user sends to the bot as /start <code>."""

from django.core.management.base import BaseCommand

from integrations.services.telegram import telegram_link_code_create, telegram_link_code_payload
from memory_project.cli import command_owner


class Command(BaseCommand):
    help = "Create a one-time Telegram link code for USERNAME; the code is the last line printed."

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username, **options):
        payload = telegram_link_code_payload(telegram_link_code_create(owner=command_owner(username)))
        self.stdout.write(f"Send this to the bot from Telegram before {payload['expires_at']}: {payload['command']}")
        if payload["link"]:
            self.stdout.write(f"or open {payload['link']}")
        self.stdout.write(payload["code"])
