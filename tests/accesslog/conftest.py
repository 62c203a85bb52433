import pytest

from accesslog import services
from tests.fixtures import fast_password_hasher

__all__ = ["fast_password_hasher"]


@pytest.fixture(autouse=True)
def empty_buffer():
    services._take()
    yield
    services._take()
