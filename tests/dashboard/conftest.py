import pytest
from django.test import Client

from tests.factories import UserFactory
from tests.fixtures import fast_password_hasher

__all__ = ["fast_password_hasher"]

PASSWORD = "pw-for-tests"


@pytest.fixture
def alice(db):
    return UserFactory(username="alice")


@pytest.fixture
def bob(db):
    return UserFactory(username="bob")


@pytest.fixture
def staff(db):
    return UserFactory(username="root", is_staff=True)


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def alice_client(alice):
    return logged_in(alice)


@pytest.fixture
def bob_client(bob):
    return logged_in(bob)


@pytest.fixture
def staff_client(staff):
    return logged_in(staff)
