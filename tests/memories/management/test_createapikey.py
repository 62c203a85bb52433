"""`python manage.py createapikey USERNAME`: creates the user if missing and prints a working key last."""

import hashlib
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from rest_framework.test import APIClient

from memories.models import ApiKey
from sessions.models import ChatSession
from tests.factories import UserFactory


def _create_key(*args) -> tuple[str, list[str]]:
    out = StringIO()
    call_command("createapikey", *args, stdout=out)
    lines = out.getvalue().strip().splitlines()
    return lines[-1], lines


def _client(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    return client


def test_creates_a_missing_user_and_prints_a_key_that_authenticates(db):
    # given no user called dora
    assert not get_user_model().objects.filter(username="dora").exists()

    # when a key is created for dora
    raw, lines = _create_key("dora")

    # then dora exists and the last line is a key that acts for her
    dora = get_user_model().objects.get(username="dora")
    assert raw.startswith("mem_")
    assert len(lines) >= 2
    assert raw not in "\n".join(lines[:-1])
    response = _client(raw).post("/api/v1/sessions/", {"title": "via the new key"}, format="json")
    assert response.status_code == 201
    assert ChatSession.objects.get(pk=response.json()["id"]).owner == dora
    assert _client(raw).get("/api/v1/sessions/").json()["count"] == 1


def test_an_existing_user_gets_an_additional_key(db):
    # given erin with one key already
    erin = UserFactory(username="erin")
    first, _ = _create_key("erin")

    # when a second key is created
    second, _ = _create_key("erin")

    # then no user is added, both keys differ and both work for erin
    assert get_user_model().objects.filter(username="erin").count() == 1
    assert first != second
    assert ApiKey.objects.filter(owner=erin).count() == 2
    for raw in (first, second):
        assert _client(raw).get("/api/v1/memories/").status_code == 200


def test_keys_are_stored_hashed_only(db):
    # when a key is created
    raw, _ = _create_key("frank", "--name", "laptop")

    # then the table holds its SHA-256 digest and a short prefix, never the key itself
    key = ApiKey.objects.get(owner__username="frank")
    assert key.key_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert key.name == "laptop"
    assert key.prefix == raw[:12]
    assert len(raw) > 40
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_apikey k WHERE strpos(k::text, %s) > 0", [raw])
        assert cursor.fetchone()[0] == 0
        cursor.execute("SELECT count(*) FROM memories_apikey k WHERE strpos(k::text, %s) > 0", [raw[12:]])
        assert cursor.fetchone()[0] == 0


def test_each_key_is_only_its_owners(db):
    # given keys for two users, and a session of the first
    gina_key, _ = _create_key("gina")
    hugo_key, _ = _create_key("hugo")
    session = _client(gina_key).post("/api/v1/sessions/", {}, format="json").json()["id"]

    # when the second user's key reads it
    response = _client(hugo_key).get(f"/api/v1/sessions/{session}/")

    # then it is a 404
    assert response.status_code == 404


def test_missing_username_is_an_error(db):
    # when the command runs without a username
    with pytest.raises(CommandError):
        call_command("createapikey", stdout=StringIO())

    # then no key is created
    assert ApiKey.objects.count() == 0
