import pytest

from tests.fakes.openai_server import fake_openai

__all__ = ["fake_openai", "openai_settings"]


@pytest.fixture
def openai_settings(settings, fake_openai):
    """Settings that point the OpenAI provider at the local fake server, with fast retries."""
    settings.LLM_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = fake_openai.base_url
    settings.LLM_MODEL = "test-model"
    settings.LLM_TIMEOUT_SECONDS = 5.0
    settings.LLM_MAX_RETRIES = 2
    settings.LLM_RETRY_BACKOFF_SECONDS = 0.01
    settings.LLM_RETRY_MAX_BACKOFF_SECONDS = 0.05
    return settings
