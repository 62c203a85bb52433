"""Every endpoint under /api/v1/ needs a valid key: 401 in the error shape otherwise, nothing written."""

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from memories.models import ApiKey
from tests.conftest import client_for
from tests.factories import ChatSessionFactory, MemoryFactory
from tests.support import assert_error, db_snapshot

SESSION = "11111111-1111-4111-8111-111111111111"
MEMORY = "22222222-2222-4222-8222-222222222222"

ENDPOINTS = [
    ("get", "/api/v1/sessions/", None),
    ("post", "/api/v1/sessions/", {"title": "x"}),
    ("get", f"/api/v1/sessions/{SESSION}/", None),
    ("get", f"/api/v1/sessions/{SESSION}/turns/", None),
    ("post", f"/api/v1/sessions/{SESSION}/turns/", {"role": "user", "content": "x"}),
    ("post", f"/api/v1/sessions/{SESSION}/end/", None),
    ("get", "/api/v1/memories/", None),
    ("post", "/api/v1/memories/", {"content": "x"}),
    ("get", f"/api/v1/memories/{MEMORY}/", None),
    ("patch", f"/api/v1/memories/{MEMORY}/", {"content": "y"}),
    ("delete", f"/api/v1/memories/{MEMORY}/", None),
    ("get", f"/api/v1/memories/{MEMORY}/history/", None),
    ("post", "/api/v1/search/", {"query": "x"}),
    ("get", "/api/v1/context/?query=x", None),
    ("get", "/api/v1/episodes/", None),
    ("get", "/api/v1/scratchpad/", None),
    ("put", "/api/v1/scratchpad/", {"current_focus": "x"}),
    ("get", "/api/v1/metrics/", None),
    ("get", "/api/v1/tools/", None),
    ("post", "/api/v1/tools/search_memory/", {"query": "x"}),
    ("post", "/api/v1/tools/search_conversation_traces/", {"query": "x"}),
    ("post", "/api/v1/tools/memory_write/", {"content": "x"}),
    ("post", "/api/v1/tools/memory_forget/", {"query": "x"}),
]
IDS = [f"{m}:{p.split('/api/v1/')[1]}" for m, p, _ in ENDPOINTS]


@pytest.fixture
def existing_rows(user):
    """Rows at the ids the endpoints name, so a 401 is not just a 404 in disguise."""
    ChatSessionFactory(owner=user, id=SESSION)
    MemoryFactory(owner=user, id=MEMORY, content="Lives in Porto")


def _request(client, method, path, body):
    return getattr(client, method)(path, body, format="json")


@pytest.mark.parametrize("method, path, body", ENDPOINTS, ids=IDS)
def test_without_credentials_is_a_401(existing_rows, method, path, body):
    # given the database as it is
    before = db_snapshot()

    # when the endpoint is called without any key
    response = _request(APIClient(), method, path, body)

    # then it is a 401 asking for a token, and nothing is written
    assert_error(response, 401, "not_authenticated", "Authentication credentials were not provided.")
    assert response["WWW-Authenticate"] == "Token"
    assert db_snapshot() == before


BAD_HEADERS = ["Token mem_not-a-real-key", "Token ", "Bearer abc", "Token a b", "Token \u00e9t\u00e9", "Token"]


@pytest.mark.parametrize("method, path, body", ENDPOINTS, ids=IDS)
def test_with_a_bad_key_is_a_401(existing_rows, method, path, body):
    # given the database as it is
    before = db_snapshot()

    for header in BAD_HEADERS:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=header)

        # when the endpoint is called with a key that is not valid (unknown, empty, other scheme, malformed)
        response = _request(client, method, path, body)

        # then it is a 401 in the error shape
        assert response.status_code == 401, header
        assert set(response.json()) == {"error"}
        assert set(response.json()["error"]) == {"code", "message", "details"}
        assert response.json()["error"]["code"] in ("not_authenticated", "authentication_failed"), header

    # and nothing is written
    assert db_snapshot() == before


def test_revoked_key_is_a_401(user):
    # given a key of alice that has been revoked
    client = client_for(user)
    ApiKey.objects.filter(owner=user).update(revoked_at=timezone.now())

    # when it is used
    response = client.get("/api/v1/memories/")

    # then it is refused
    assert_error(response, 401, "authentication_failed", "Invalid API key.")


def test_key_of_an_inactive_owner_is_a_401(user):
    # given a key of alice, who is then deactivated
    client = client_for(user)
    user.is_active = False
    user.save()

    # when it is used
    response = client.get("/api/v1/memories/")

    # then it is refused
    assert_error(response, 401, "authentication_failed", "This key's owner is inactive.")


def test_valid_key_records_its_last_use(user):
    # given a fresh key
    client = client_for(user)
    assert ApiKey.objects.get(owner=user).last_used_at is None

    # when it is used
    response = client.get("/api/v1/memories/")

    # then it works and its last use is recorded
    assert response.status_code == 200
    assert ApiKey.objects.get(owner=user).last_used_at is not None


def test_unknown_api_path_is_a_json_404(api):
    # when a path that does not exist under /api/ is called
    response = api.get("/api/v1/nothing-here/")

    # then it is a JSON 404 in the error shape
    assert_error(response, 404, "not_found", "Not found.")
