"""DELETE /api/v1/memories/{id}/?purge=true: the memory leaves the history too (plain DELETE forgets)."""

import pytest
from django.core.management import call_command

from memories.drafts import MemoryDraft
from memories.models import CoreMemory, DailyDigest, EmbeddingCache, Memory, MemoryEvent, MemorySource
from memories.services.embeddings import _key
from memories.services.memories import memory_create
from memory_project.text import normalize
from tests.factories import ConversationTurnFactory

pytestmark = pytest.mark.django_db


def _written(api, content: str) -> str:
    response = api.post("/api/v1/memories/", {"content": content, "category": "fact"}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def _cache_rows(owner, text: str) -> int:
    return EmbeddingCache.objects.filter(key__in=[_key(m, owner.pk, normalize(text)) for m in ("hashing",)]).count()


def test_purge_removes_the_memory_its_history_and_quotes(api, user, django_capture_on_commit_callbacks):
    # given a memory with history, provenance, a digest entry and a MEMORY.md that quote it
    memory_id = _written(api, "My passport number is X1234567")
    assert api.patch(f"/api/v1/memories/{memory_id}/", {"importance": 0.9}, format="json").status_code == 200
    turn = ConversationTurnFactory(session__owner=user, content="my passport number is X1234567")
    MemorySource.objects.create(owner=user, memory_id=memory_id, turn=turn)
    kept_id = _written(api, "I like tea")
    DailyDigest.objects.create(
        owner=user,
        day="2026-01-01",
        entries=[{"type": "memory.add", "memory_id": memory_id, "content": "My passport number is X1234567"},
                 {"type": "memory.add", "memory_id": kept_id, "content": "I like tea"}],
    )  # fmt: skip
    CoreMemory.objects.create(owner=user, memory_md="### [ab12] fact\nMy passport number is X1234567\n\nI like tea")
    assert MemoryEvent.objects.filter(memory_id=memory_id).count() == 2
    cache_key = _key(
        EmbeddingCache.objects.values_list("model", flat=True).first(), user.pk, "My passport number is X1234567"
    )
    assert EmbeddingCache.objects.filter(key=cache_key).exists()

    # when it is deleted with purge=true
    with django_capture_on_commit_callbacks(execute=True):
        response = api.delete(f"/api/v1/memories/{memory_id}/?purge=true")

    # then the row, its history, its links and its cached embedding are gone, and its quotes too
    assert response.status_code == 204
    assert not Memory.objects.filter(pk=memory_id).exists()
    assert not MemoryEvent.objects.filter(memory_id=memory_id).exists()
    assert not MemorySource.objects.filter(memory_id=memory_id).exists()
    assert not EmbeddingCache.objects.filter(key=cache_key).exists()
    assert api.get(f"/api/v1/memories/{memory_id}/history/").status_code == 404
    digest = DailyDigest.objects.get(owner=user)
    assert [e["memory_id"] for e in digest.entries] == [kept_id]
    assert CoreMemory.objects.get(owner=user).memory_md == "### [ab12] fact\n[erased]\n\nI like tea"
    # and the other memory, its history and the turn are untouched
    assert MemoryEvent.objects.filter(memory_id=kept_id).count() == 1
    assert turn.__class__.objects.filter(pk=turn.pk).exists()


def test_delete_without_purge_forgets_and_keeps_the_history(api):
    memory_id = _written(api, "I like green tea")

    response = api.delete(f"/api/v1/memories/{memory_id}/")

    assert response.status_code == 204
    assert Memory.objects.get(pk=memory_id).status == "forgotten"
    assert [e["event_type"] for e in api.get(f"/api/v1/memories/{memory_id}/history/").json()["results"]] == [
        "add",
        "forget",
    ]


def test_purge_keeps_a_cached_embedding_another_memory_still_uses(api, user, other_user):
    # given the same text as a memory of the owner's other agent, and as another owner's memory
    memory_id = _written(api, "I like green tea")
    memory_create(owner=user, draft=MemoryDraft(content="I like green tea", agent="travel"), actor="test")
    memory_create(owner=other_user, draft=MemoryDraft(content="I like green tea"), actor="test")
    model = EmbeddingCache.objects.values_list("model", flat=True).first()

    api.delete(f"/api/v1/memories/{memory_id}/?purge=true")

    # then the owner's entry stays for the other agent's memory, and the other owner's is their own
    assert not Memory.objects.filter(pk=memory_id).exists()
    assert EmbeddingCache.objects.filter(key=_key(model, user.pk, "I like green tea")).exists()
    assert EmbeddingCache.objects.filter(key=_key(model, other_user.pk, "I like green tea")).exists()


def test_purge_of_another_owners_memory_is_a_404_and_changes_nothing(api, other_user):
    theirs = memory_create(owner=other_user, draft=MemoryDraft(content="Bob's secret"), actor="test")

    response = api.delete(f"/api/v1/memories/{theirs.pk}/?purge=true")

    assert response.status_code == 404
    assert Memory.objects.filter(pk=theirs.pk, status="active").exists()
    assert MemoryEvent.objects.filter(memory=theirs).count() == 1


def test_bad_purge_value_is_a_400(api):
    memory_id = _written(api, "I like green tea")

    response = api.delete(f"/api/v1/memories/{memory_id}/?purge=maybe")

    assert response.status_code == 400
    assert Memory.objects.get(pk=memory_id).status == "active"


def test_cli_hard_delete_purges(user, django_capture_on_commit_callbacks):
    memory = memory_create(owner=user, draft=MemoryDraft(content="delete me for good"), actor="test")

    with django_capture_on_commit_callbacks(execute=True):
        call_command("memory", "delete", str(memory.pk), "--owner", "alice", "--hard", "--yes")

    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not MemoryEvent.objects.filter(memory_id=memory.pk).exists()
