"""get_llm(): the provider named by settings, built once per distinct settings."""

import pytest

from memories.providers import llm
from memories.providers.llm import get_llm
from memories.providers.llm_types import LLMError


def test_heuristic_is_used_when_configured(settings):
    # given the offline provider selected
    settings.LLM_PROVIDER = "heuristic"

    # when asking for the provider
    provider = get_llm()

    # then it is the heuristic one
    assert isinstance(provider, llm.HeuristicProvider)
    assert provider.name == "heuristic"


def test_openai_is_built_from_the_settings(settings):
    # given an OpenAI-compatible server configured
    settings.LLM_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.LLM_MODEL = "qwen2.5:7b"
    settings.LLM_TIMEOUT_SECONDS = 12.5
    settings.LLM_MAX_RETRIES = 4

    # when asking for the provider
    provider = get_llm()

    # then it talks to that server with those limits
    assert isinstance(provider, llm.OpenAIProvider)
    assert (provider.name, provider.model, provider.base_url) == ("openai", "qwen2.5:7b", "http://127.0.0.1:9/v1")
    assert (provider.timeout, provider.max_retries) == (12.5, 4)


def test_the_provider_is_cached_per_settings_values(settings):
    # given one configuration
    settings.LLM_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"

    # when asked twice, then once more after a change
    first, second = get_llm(), get_llm()
    settings.LLM_MODEL = "another-model"
    third = get_llm()

    # then the same instance is reused until a setting changes
    assert first is second
    assert third is not first
    assert third.model == "another-model"


def test_openai_without_a_key_or_a_server_is_a_clear_error(settings):
    # given the OpenAI provider selected with nothing to talk to
    settings.LLM_PROVIDER = "openai"
    settings.OPENAI_API_KEY = ""
    settings.OPENAI_BASE_URL = None

    # when asking for the provider
    with pytest.raises(LLMError) as failure:
        get_llm()

    # then the message says what is missing
    assert str(failure.value) == "LLM_PROVIDER is 'openai' but neither OPENAI_API_KEY nor OPENAI_BASE_URL is set"


def test_a_local_server_needs_no_key(settings):
    # given Ollama-style configuration: a base URL and no key
    settings.LLM_PROVIDER = "openai"
    settings.OPENAI_API_KEY = ""
    settings.OPENAI_BASE_URL = "http://127.0.0.1:11434/v1"

    # then the provider is built
    assert get_llm().base_url == "http://127.0.0.1:11434/v1"


def test_unknown_attributes_of_the_module_still_raise():
    with pytest.raises(AttributeError):
        llm.NoSuchProvider  # noqa: B018
