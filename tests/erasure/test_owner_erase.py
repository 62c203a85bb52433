"""Complete erasure: an owner filled through every write path is erased; nothing of theirs is left in
any table (enumerated from Django's models), file or Redis; the receipt counts what was there; the
other owner is untouched; erasing again is a no-op."""

import time

import pytest
from django.apps import apps
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model

from accesslog.services import access_log_flush
from analytics.services import request_stats_flush
from erasure.models import ErasureReceipt
from erasure.plan import erasure_plan, kept_with_account
from integrations.models import TelegramUpdate
from memories.models import EmbeddingCache
from memories.services.embeddings import _key, embedding_cache_clear_local, embedding_get
from memories.services.lifecycle import export_dir_for
from memories.services.turn_embeddings import turn_embedding_text
from memory_project.background import background_drain
from memory_project.text import normalize
from sessions.models import ConversationTurn
from tests.conftest import client_for
from tests.erasure.scene import SHARED_TEXT, WEBHOOK_SECRET, fill, owner_rows, reachable_models, snapshot, telegram_say
from tests.factories import UserFactory
from tests.fakes.telegram_server import FakeTelegramServer
from tests.fakes.webhook_receiver import WebhookReceiver

pytestmark = pytest.mark.django_db(transaction=True)

TELEGRAM_SECRET = "telegram-secret_for-erasure"
KEPT = {"auth.User", "memories.ApiKey"}


@pytest.fixture
def world(settings, tmp_path, attachment_dir):
    settings.OPENAI_API_KEY = ""
    settings.TELEGRAM_WEBHOOK_SECRET = TELEGRAM_SECRET
    settings.WEBHOOK_EAGER_IN_BACKGROUND = False
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]  # the local receiver
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0
    settings.MEMORY_EXPORT_DIR = str(tmp_path / "exports")
    with FakeTelegramServer() as bot, WebhookReceiver(secret=WEBHOOK_SECRET) as receiver:
        settings.TELEGRAM_API_BASE = bot.base_url
        settings.TELEGRAM_BOT_TOKEN = bot.token
        alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
        alice_api, bob_api = client_for(alice), client_for(bob)
        say = telegram_say(TELEGRAM_SECRET)
        fill(api=alice_api, user=alice, webhook_url=receiver.url, telegram_user_id=111, say=say, extra_text="(a)")
        fill(api=bob_api, user=bob, webhook_url=receiver.url, telegram_user_id=222, say=say, extra_text="(b)")
        # What is filled or counted after the requests (turn vectors with their cache entries, request
        # analytics, the access log of searches) is in place before the test looks.
        request_stats_flush()
        access_log_flush()
        background_drain()
        # A turn-vector fill that met a deadlock is retried on the background thread: wait for it.
        for _ in range(50):
            background_drain()
            if not ConversationTurn.objects.filter(embedding__isnull=True).exists():
                break
            time.sleep(0.1)
        background_drain()
        # A fill retried after a deadlock may take a turn's vector from the process cache and write
        # no row for it; the rows of the texts the test names are made sure of here.
        embedding_cache_clear_local()
        for owner, tag in ((alice, "(a)"), (bob, "(b)")):
            said = f"Remember that my sister Ana lives in Porto. {tag}"
            embedding_get(owner=owner, text=turn_embedding_text("", said))
        embedding_get(owner=bob, text=SHARED_TEXT)
        yield {
            "alice": alice,
            "bob": bob,
            "alice_api": alice_api,
            "bob_api": bob_api,
            "exports": tmp_path / "exports",
            "attachments": attachment_dir,
        }


def _cache_key(owner, text: str) -> str:
    model = EmbeddingCache.objects.values_list("model", flat=True).first()
    return _key(model, owner.pk, normalize(text))


def _files(folder) -> list:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_every_model_with_owner_data_is_in_the_plan():
    # given the models a chain of foreign keys leads from to a user, found here independently
    reachable = reachable_models()

    # when the erasure plans a full erasure of an owner
    plan = erasure_plan(owner_id=1)

    # then it deletes every one of them except what stays with the account
    planned = {m._meta.label for m in plan.models}
    kept = {m._meta.label for m in kept_with_account()}
    assert reachable - kept == planned
    assert "erasure.ErasureReceipt" not in reachable


def test_erasure_removes_every_row_file_and_key_of_the_owner_and_nothing_else(world, settings):
    alice, bob, api = world["alice"], world["bob"], world["alice_api"]
    # given both owners filled through every write path
    before = owner_rows(alice.pk)
    expected = {label: len(pks) for label, pks in before.items() if label not in KEPT}
    for label in (
        "memories.Memory",
        "memories.MemoryEvent",
        "memories.MemorySource",
        "memories.Entity",
        "memories.MemoryEntity",
        "memories.CoreMemory",
        "memories.DailyDigest",
        "memories.LifecycleRun",
        "memories.SearchStats",
        "memories.LexemeFrequency",
        "memories.SearchPosting",
        "memories.EventRule",
        "chat_sessions.ChatSession",
        "chat_sessions.ConversationTurn",
        "chat_sessions.Episode",
        "chat_sessions.Scratchpad",
        "chat_sessions.ExtractionJob",
        "integrations.WebhookSubscription",
        "integrations.WebhookDelivery",
        "integrations.TelegramLink",
        "integrations.TelegramLinkCode",
        "attachments.Attachment",
        "memory_groups.MemoryGroup",
        "memory_groups.MemoryGroupMember",
    ):
        assert expected.get(label, 0) > 0, f"the fill wrote no {label}"
    bob_before = snapshot(bob.pk)
    alice_exports = export_dir_for(world["exports"], username="alice")
    bob_exports = export_dir_for(world["exports"], username="bob")
    alice_files, bob_files = _files(alice_exports), _files(bob_exports)
    assert len(alice_files) >= 3 and len(bob_files) >= 3
    alice_attachments = _files(world["attachments"] / str(alice.pk))
    bob_attachments = _files(world["attachments"] / str(bob.pk))
    assert (len(alice_attachments), len(bob_attachments)) == (1, 1)
    own_text = "Remember that my sister Ana lives in Porto. (a)"
    alice_key = _cache_key(alice, turn_embedding_text("", own_text))
    shared_key = _cache_key(bob, SHARED_TEXT)
    bob_key = _cache_key(bob, turn_embedding_text("", "Remember that my sister Ana lives in Porto. (b)"))
    assert EmbeddingCache.objects.filter(key__in=[alice_key, bob_key]).count() == 2
    cache_rows = EmbeddingCache.objects.count()
    pending_updates = TelegramUpdate.objects.filter(payload__message__from__id=111).count()
    quoting_log = LogEntry.objects.filter(user__username="admin-staff").count()
    assert (pending_updates, quoting_log) == (1, 2)

    # when alice erases her data
    response = api.delete("/api/v1/data/?confirm=alice")

    # then the receipt counts exactly what was there, per kind, and verifies
    assert response.status_code == 200, response.content
    receipt = response.json()
    erased_cache = cache_rows - EmbeddingCache.objects.count()
    assert erased_cache > 0
    assert receipt["counts"] == {
        **expected,
        "memories.EmbeddingCache": erased_cache,
        "integrations.TelegramUpdate": 1,
        "admin.LogEntry": 1,
        "export_files": len(alice_files),
        "attachment_files": 1,
    }
    assert receipt["total"] == sum(receipt["counts"].values())
    assert (receipt["noop"], receipt["verified"]) == (False, True)
    assert (receipt["agent"], receipt["owner_id"]) == (None, alice.pk)
    # and nothing of alice is left in any table but her account and its keys
    after = owner_rows(alice.pk)
    assert set(after) == KEPT
    assert after["auth.User"] == {alice.pk}
    # nor in the embedding cache (her own texts; a text bob wrote as well stays), the Telegram
    # queue, the admin's history, or her export folder
    assert not EmbeddingCache.objects.filter(key=alice_key).exists()
    assert EmbeddingCache.objects.filter(key=bob_key).exists()
    assert EmbeddingCache.objects.filter(key=shared_key).exists()
    assert not TelegramUpdate.objects.filter(payload__message__from__id=111).exists()
    assert LogEntry.objects.filter(user__username="admin-staff").count() == 1
    assert _files(alice_exports) == []
    assert _files(world["attachments"] / str(alice.pk)) == []
    # and the receipt keeps no content of hers: only counts, time, scope and the digest
    stored = ErasureReceipt.objects.get(pk=receipt["id"])
    assert set(stored.counts) == set(receipt["counts"]) and "Porto" not in str(stored.__dict__)
    # and bob is untouched
    assert snapshot(bob.pk) == bob_before
    assert _files(bob_exports) == bob_files
    assert _files(world["attachments"] / str(bob.pk)) == bob_attachments
    assert world["bob_api"].get("/api/v1/memories/").json()["count"] > 0

    # when she erases again
    again = api.delete("/api/v1/data/?confirm=alice")

    # then it is a no-op that returns the same receipt
    assert again.status_code == 200
    assert {**again.json(), "noop": False} == receipt and again.json()["noop"] is True
    assert ErasureReceipt.objects.filter(owner_id=alice.pk).count() == 1
    assert set(owner_rows(alice.pk)) == KEPT
    assert snapshot(bob.pk) == bob_before


def test_agent_erasure_removes_only_that_agents_namespace(world):
    alice, api = world["alice"], world["alice_api"]
    # given alice's memories and sessions under the default agent and under "coach"
    coach_memories = apps.get_model("memories.Memory").objects.filter(owner=alice, agent="coach")
    default_before = apps.get_model("memories.Memory").objects.filter(owner=alice, agent="").count()
    assert coach_memories.exists() and default_before > 0

    # when she erases the "coach" agent only
    response = api.delete("/api/v1/data/?confirm=alice&agent=coach")

    # then the coach's memories, sessions and turns are gone, the rest is kept
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["agent"] == "coach" and body["counts"]["memories.Memory"] >= 1
    assert not coach_memories.exists()
    assert not apps.get_model("chat_sessions.ChatSession").objects.filter(owner=alice, agent="coach").exists()
    assert apps.get_model("memories.Memory").objects.filter(owner=alice, agent="").count() == default_before
    assert api.get("/api/v1/webhooks/").json()["count"] == 1


def test_erasure_needs_the_owners_name_as_confirmation(world):
    alice, api = world["alice"], world["alice_api"]
    before = snapshot(alice.pk)

    response = api.delete("/api/v1/data/?confirm=bob")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "confirmation_required"
    assert snapshot(alice.pk) == before
    assert not ErasureReceipt.objects.exists()


def test_erasure_with_the_account_leaves_nothing_but_the_receipt(world):
    alice = world["alice"]

    response = world["alice_api"].delete("/api/v1/data/?confirm=alice&account=true")

    assert response.status_code == 200
    assert response.json()["counts"]["auth.User"] == 1 and response.json()["account_deleted"] is True
    assert owner_rows(alice.pk) == {}
    assert not get_user_model().objects.filter(username="alice").exists()
    assert ErasureReceipt.objects.filter(owner_id=alice.pk).count() == 1
