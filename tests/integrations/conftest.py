import pytest
from django.test import Client

from tests.fakes.telegram_server import FakeTelegramServer
from tests.fixtures import fast_password_hasher

__all__ = ["fast_password_hasher"]

WEBHOOK_SECRET_TOKEN = "telegram-secret_123"


@pytest.fixture(autouse=True)
def integration_settings(settings):
    """Offline responder, no backoff waits, and deliveries in the test's own thread and transaction."""
    settings.OPENAI_API_KEY = ""
    settings.TELEGRAM_RETRY_BASE_SECONDS = 0
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0
    settings.WEBHOOK_EAGER_IN_BACKGROUND = False
    # The local receivers listen on 127.0.0.1, which only an operator's allow-list opens to webhooks.
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    settings.TELEGRAM_WEBHOOK_SECRET = WEBHOOK_SECRET_TOKEN


@pytest.fixture
def bot(settings):
    with FakeTelegramServer() as server:
        settings.TELEGRAM_API_BASE = server.base_url
        settings.TELEGRAM_BOT_TOKEN = server.token
        yield server


@pytest.fixture
def user_client(user):
    client = Client()
    client.force_login(user)
    return client
