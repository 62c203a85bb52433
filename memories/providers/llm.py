"""The factory that picks the configured LLM provider (the interface is in memories.providers.llm_types).

Two providers implement it:
- `OpenAIProvider` (memories.providers.openai_llm): any OpenAI-compatible chat completions server,
  JSON mode, schema-validated output with one repair round, retries with exponential backoff.
- `HeuristicProvider` (memories.extraction.provider): offline and deterministic, English and
  Chinese patterns, extractive summaries.

Both raise `LLMError` (and nothing else) when they cannot produce a valid answer, so a caller can
leave its job queued and retry later instead of crashing.
"""

from functools import lru_cache

from django.conf import settings

from memories.extraction.provider import HeuristicProvider
from memories.providers.llm_types import LLMProvider
from memories.providers.openai_llm import OpenAIProvider


@lru_cache(maxsize=8)
def _build(provider: str, options: tuple[tuple[str, object], ...]) -> LLMProvider:
    if provider == "openai":
        return OpenAIProvider(**dict(options))
    return HeuristicProvider()


def get_llm() -> LLMProvider:
    """The configured provider, built once per distinct set of settings values."""
    options = {
        "api_key": settings.OPENAI_API_KEY or "",
        "base_url": settings.OPENAI_BASE_URL or None,
        "model": settings.LLM_MODEL,
        "timeout": float(settings.LLM_TIMEOUT_SECONDS),
        "max_retries": int(settings.LLM_MAX_RETRIES),
        "backoff": float(getattr(settings, "LLM_RETRY_BACKOFF_SECONDS", 0.5)),
        "max_backoff": float(getattr(settings, "LLM_RETRY_MAX_BACKOFF_SECONDS", 8.0)),
    }
    # As a tuple of pairs: the cache needs its arguments hashable.
    return _build(settings.LLM_PROVIDER, tuple(options.items()))


def get_llm_cache_clear() -> None:
    _build.cache_clear()
