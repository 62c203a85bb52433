from pathlib import Path

import pytest

from tests.fixtures import fast_password_hasher

__all__ = ["fast_password_hasher"]

SEEDS = Path(__file__).resolve().parents[3] / "fixtures" / "seeds"


def seed_text(name: str) -> str:
    return (SEEDS / name).read_text(encoding="utf-8")


@pytest.fixture
def seed_memory_md() -> str:
    """Seed 002 §2.3's example MEMORY.md, verbatim."""
    return seed_text("002_MEMORY.md")


@pytest.fixture
def seed_memory_json() -> str:
    """Seed 004 §2.1's example memory.json, verbatim."""
    return seed_text("004_memory.json")


@pytest.fixture
def seed_daily_log() -> str:
    """Seed 004 §2.2's example daily log (logs/2026-02-21.json), verbatim."""
    return seed_text("004_2026-02-21.json")
