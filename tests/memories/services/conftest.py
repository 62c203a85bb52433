import pytest

from memories.services import search_stats
from memory_project.background import background_drain
from tests.fixtures import attached, fast_password_hasher

__all__ = ["attached", "fast_password_hasher"]


@pytest.fixture
def fresh_stats_requests():
    """Statistics refresh requests are throttled per process; each test starts with none made."""
    search_stats._requested.clear()
    yield
    background_drain()
    search_stats._requested.clear()
