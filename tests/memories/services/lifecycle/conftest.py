from datetime import timedelta

import pytest
from django.utils import timezone

from memories.services.lifecycle import common
from tests.factories import MemoryFactory


class FakeLLM:
    """Deterministic stand-in for get_llm(): records what the lifecycle asks and answers predictably."""

    def __init__(self):
        self.compress_calls: list[list[str]] = []
        self.summarize_calls: list[str] = []
        self.compress_result: list[str] | None = None

    def compress(self, *, memories: list[str]) -> list[str]:
        self.compress_calls.append(list(memories))
        if self.compress_result is not None:
            return list(self.compress_result)
        return [f"Summary of {len(memories)} memories: {memories[0]}"]

    def summarize(self, *, text: str, max_tokens: int) -> str:
        self.summarize_calls.append(text)
        return f"Day summary ({len(text.splitlines())} lines)"


REAL_LLM = common.lifecycle_llm


@pytest.fixture(autouse=True)
def fake_llm(monkeypatch):
    llm = FakeLLM()
    monkeypatch.setattr(common, "lifecycle_llm", lambda: llm)
    return llm


@pytest.fixture
def now():
    return timezone.now().replace(microsecond=0)


def memory_at(owner, *, now, days: float = 0, strength: float = 0.6, **fields):
    """A memory observed (and last reinforced) `days` before `now`, with base_strength = strength."""
    observed = now - timedelta(days=days)
    fields.setdefault("importance", strength)
    return MemoryFactory(owner=owner, strength=strength, observed_at=observed, **fields)
