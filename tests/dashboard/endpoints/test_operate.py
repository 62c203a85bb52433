"""The dashboard's export download and "run lifecycle now": the API's files and runs, for the owner
the page looks at and no one else."""

import pytest
from django.test import Client

from memories.drafts import MemoryDraft
from memories.models import LifecycleRun
from memories.services.memories import memory_create
from memories.services.transfer import memory_export

pytestmark = pytest.mark.django_db


def _undated(text: str) -> str:
    """MEMORY.md says when it was written, to the second."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("<!-- Last updated:"))


def test_anonymous_requests_are_401():
    assert Client().get("/dashboard/api/export/").status_code == 401
    assert Client().post("/dashboard/api/lifecycle/run/").status_code == 401
    assert LifecycleRun.objects.count() == 0


@pytest.mark.parametrize(
    ("fmt", "name", "media_type"),
    [
        ("jsonl", "memories.jsonl", "application/x-ndjson"),
        ("memory-md", "MEMORY.md", "text/markdown"),
    ],
)
def test_the_export_is_the_apis_file(alice, bob, alice_client, fmt, name, media_type):
    memory_create(owner=alice, draft=MemoryDraft(content="Likes green tea", category="preference"), actor="test")
    memory_create(owner=bob, draft=MemoryDraft(content="Bob's own memory"), actor="test")
    response = alice_client.get("/dashboard/api/export/", {"format": fmt})
    assert response.status_code == 200
    assert response["Content-Type"].split(";")[0] == media_type
    assert response["Content-Disposition"] == f'attachment; filename="{name}"'
    body = response.content.decode()
    assert _undated(body) == _undated(memory_export(owner=alice, fmt=fmt))
    assert "Likes green tea" in body and "Bob's own memory" not in body


def test_staff_export_the_owner_they_look_at(alice, staff_client):
    memory_create(owner=alice, draft=MemoryDraft(content="Likes green tea"), actor="test")
    response = staff_client.get("/dashboard/api/export/", {"format": "jsonl", "owner": "alice"})
    assert response.content.decode() == memory_export(owner=alice, fmt="jsonl")


def test_an_unknown_format_is_a_400_naming_it(alice_client):
    response = alice_client.get("/dashboard/api/export/", {"format": "pdf"})
    assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid")
    assert "format" in response.json()["error"]["details"]


def test_run_lifecycle_now_runs_it_for_the_owner(alice, bob, alice_client):
    memory_create(owner=alice, draft=MemoryDraft(content="Likes green tea"), actor="test")
    response = alice_client.post("/dashboard/api/lifecycle/run/", {}, content_type="application/json")
    assert response.status_code == 200
    run = LifecycleRun.objects.get()
    assert (run.owner_id, run.trigger, run.status) == (alice.pk, "dashboard", "completed")
    assert response.json()["id"] == run.pk and response.json()["status"] == "completed"
    assert not LifecycleRun.objects.filter(owner=bob).exists()


def test_run_lifecycle_needs_the_csrf_token(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post("/dashboard/api/lifecycle/run/", {}, content_type="application/json")
    assert response.status_code == 403
    assert LifecycleRun.objects.count() == 0
