from django.core.management.base import BaseCommand

from memories.services.api_keys import api_key_create


class Command(BaseCommand):
    help = "Create an API key for USERNAME (creating the user if missing); the key is the last line printed."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="A label for the key.")

    def handle(self, *args, username, name, **options):
        key, raw = api_key_create(username=username, name=name)
        self.stdout.write(
            f"Created API key {key.prefix}… for {key.owner.username}. Use it as 'Authorization: Token <key>':"
        )
        self.stdout.write(raw)
