"""Each REST request is counted with its kind, owner and agent; other paths are not."""

import pytest

from analytics.models import RequestDaily
from analytics.services import request_stats_flush
from memory_project.background import background_drain
from tests.conftest import client_for
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def quiet(settings):
    settings.REQUEST_ANALYTICS_FLUSH_SECONDS = 3600
    request_stats_flush()
    background_drain()
    RequestDaily.objects.all().delete()


def counted() -> dict:
    request_stats_flush(inline=True)
    return {
        (r.owner.username, r.agent, r.kind): (r.count, r.errors) for r in RequestDaily.objects.select_related("owner")
    }


def test_api_requests_are_counted_by_kind_and_agent(api):
    api.post("/api/v1/memories/", {"content": "Likes tea", "agent": "bot"}, format="json")
    api.post("/api/v1/memories/", {"content": "Likes coffee"}, format="json")
    api.post("/api/v1/search/", {"query": "tea", "agent": "bot"}, format="json")
    api.post("/api/v1/search/", {"query": ""}, format="json")  # refused: still a search, and an error
    api.get("/api/v1/context/?query=tea&agent=bot")
    api.post("/api/v1/tools/search_memory/", {"query": "tea"}, format="json")
    api.get("/api/v1/memories/")
    assert counted() == {
        ("alice", "bot", "add"): (1, 0),
        ("alice", "", "add"): (1, 0),
        ("alice", "bot", "search"): (1, 0),
        ("alice", "", "search"): (2, 1),
        ("alice", "bot", "context"): (1, 0),
        ("alice", "", "other"): (1, 0),
    }


def test_unauthenticated_dashboard_and_disabled_requests_are_not_counted(settings, api, client):
    client.get("/api/v1/memories/")  # no key: 401, no owner to count for
    client.get("/healthz")
    user = UserFactory(username="carol")
    client.force_login(user)
    client.get("/dashboard/api/memories/")
    settings.REQUEST_ANALYTICS = False
    api.get("/api/v1/memories/")
    assert counted() == {}


def test_staff_acting_for_an_owner_are_counted_for_that_owner(user):
    staff = UserFactory(username="root", is_staff=True)
    client_for(staff).post("/api/v1/search/?owner=alice", {"query": "tea"}, format="json")
    assert counted() == {("alice", "", "search"): (1, 0)}


def test_an_agent_postgresql_cannot_hold_is_counted_as_none_and_the_batch_keeps_every_owner(api):
    # Given another owner's search waiting in the same buffer
    client_for(UserFactory(username="bob")).post("/api/v1/search/", {"query": "tea", "agent": "bot"}, format="json")

    # When a request names its agent with a NUL byte, and another with a lone surrogate
    nul = api.get("/api/v1/context/?query=tea&agent=%00")
    surrogate = api.post("/api/v1/search/", '{"query": "tea", "agent": "\\ud800"}', content_type="application/json")

    # Then both are refused, counted without an agent, and the batch is written whole
    assert (nul.status_code, surrogate.status_code) == (400, 400)
    assert counted() == {
        ("bob", "bot", "search"): (1, 0),
        ("alice", "", "context"): (1, 1),
        ("alice", "", "search"): (1, 1),
    }
