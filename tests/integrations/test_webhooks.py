"""Outgoing webhooks: subscriptions through the REST API, signed deliveries, retries and the delivery log."""

import hashlib
import hmac
import json
import time
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from integrations.models import WebhookDelivery, WebhookSubscription
from integrations.services.webhook_scheduler import _Scheduler
from integrations.services.webhooks import webhook_delivery_attempt, webhook_subscription_create
from integrations.tasks import integrations_sweep
from memories.drafts import MemoryDraft
from memories.services.actions import memory_forget
from memories.services.decisions import memory_write
from memories.services.memories import memory_create, memory_update
from memory_project.exceptions import ServiceError
from tests.factories import UserFactory
from tests.fakes.webhook_receiver import WebhookReceiver

pytestmark = pytest.mark.django_db

SECRET = "whsec_test-secret-0123456789"
# Hosts Django's URLField accepts and httpx2 cannot encode (IDNA): a zero-width space, a lone U+3002.
ZERO_WIDTH_HOST_URL = "https://a\u200b.example.com/h"
FULL_STOP_HOST_URL = "https://\u3002.com/"


@pytest.fixture
def receiver():
    with WebhookReceiver(secret=SECRET) as server:
        yield server


def subscribe(api, url, **extra):
    response = api.post("/api/v1/webhooks/", {"url": url, "secret": SECRET, **extra}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_a_failed_delivery_is_retried_signed_and_logged_and_other_owners_never_reach_it(
    user, other_user, api, receiver, django_capture_on_commit_callbacks
):
    # given Alice's subscription to memory.added, and a receiver that fails its first request
    hook = subscribe(api, receiver.url, events=["memory.added"])
    receiver.answer(500)

    # when Alice and Bob each gain a memory
    with django_capture_on_commit_callbacks(execute=True):
        memory = memory_create(
            owner=user, draft=MemoryDraft(content="Prefers green tea", category="preference"), actor="t"
        )
        memory_create(owner=other_user, draft=MemoryDraft(content="Bob likes jazz"), actor="t")

    # then the receiver got Alice's event twice (500, then 200), correctly signed both times
    assert [(r.status, r.signature_ok) for r in receiver.requests] == [(500, True), (200, True)]
    first, retry = receiver.requests
    # the same event each time; only the time it was sent differs
    assert {**first.body, "timestamp": 0} == {**retry.body, "timestamp": 0}
    assert (
        retry.headers["x-memory-signature"]
        == "sha256=" + hmac.new(SECRET.encode(), retry.raw, hashlib.sha256).hexdigest()
    )
    assert retry.headers["x-memory-event"] == "memory.added"
    assert retry.headers["content-type"] == "application/json"
    delivery = WebhookDelivery.objects.get()
    assert retry.headers["x-memory-delivery"] == str(delivery.id)
    assert retry.body["event"] == "memory.added"
    assert retry.body["id"] == str(delivery.id)
    assert retry.body["subscription_id"] == hook["id"]
    assert retry.body["data"] == {
        "action": "added",
        "memory": {
            "id": str(memory.id),
            "content": "Prefers green tea",
            "category": "preference",
            "status": "active",
            "strength": 0.6,
        },
    }

    # and the delivery log shows two attempts, delivered
    log = api.get(f"/api/v1/webhooks/{hook['id']}/deliveries/").json()
    assert log["count"] == 1
    (entry,) = log["results"]
    assert (entry["event"], entry["status"], entry["attempts"], entry["last_status_code"]) == (
        "memory.added",
        "delivered",
        2,
        200,
    )
    assert entry["last_error"] == ""
    assert entry["delivered_at"] is not None
    assert [a["status_code"] for a in entry["attempt_log"]] == [500, 200]
    assert entry["attempt_log"][0]["error"].startswith("HTTP 500")

    # and Bob's event was never delivered to Alice's subscription
    assert all("Bob" not in r.raw.decode() for r in receiver.requests)
    assert WebhookDelivery.objects.filter(subscription_id=hook["id"]).count() == 1


def drink(owner, value: str):
    return memory_write(
        owner=owner,
        draft=MemoryDraft(
            content=f"User prefers {value} in the morning",
            category="preference",
            subject="drink preference",
            predicate="prefers",
            structured_data={"value": f"{value} in the morning"},
        ),
        actor="t",
    )


def test_memory_changes_map_to_webhook_events(user, receiver, django_capture_on_commit_callbacks):
    # given a subscription to every event
    webhook_subscription_create(owner=user, url=receiver.url, secret=SECRET)

    # when a memory is added, updated, superseded and forgotten
    with django_capture_on_commit_callbacks(execute=True):
        tea = drink(user, "tea").memory
        memory_update(memory=tea, actor="t", importance=0.9)
        drink(user, "coffee")  # a new value for the same slot supersedes the tea
        memory_forget(memory=tea, actor="t")

    # then each change reached the receiver as its webhook event, in order
    events = [(r.headers["x-memory-event"], r.body["data"].get("action")) for r in receiver.requests]
    assert events == [
        ("memory.added", "added"),
        ("memory.updated", "update"),
        ("memory.added", "added"),
        ("memory.superseded", "supersede"),
        ("memory.forgotten", "forget"),
    ]
    assert all(r.signature_ok for r in receiver.requests)


def test_extraction_completed_is_delivered(user, api, receiver, django_capture_on_commit_callbacks):
    hook = subscribe(api, receiver.url, events=["extraction.completed"])
    session = api.post("/api/v1/sessions/", {}, format="json").json()
    turns = [
        {"role": "user", "content": "I prefer green tea.", "speaker": "Alice"},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Good night."},
    ]
    with django_capture_on_commit_callbacks(execute=True):
        api.post(f"/api/v1/sessions/{session['id']}/turns/", {"turns": turns}, format="json")
        api.post(f"/api/v1/sessions/{session['id']}/end/", {}, format="json")

    (request,) = receiver.requests
    assert request.headers["x-memory-event"] == "extraction.completed"
    assert request.body["data"]["session_id"] == session["id"]
    assert [m["content"] for m in request.body["data"]["added"]] == ["Alice prefers green tea"]
    assert WebhookDelivery.objects.get(subscription_id=hook["id"]).status == "delivered"


def test_a_rolled_back_change_sends_nothing(user, receiver, django_capture_on_commit_callbacks):
    webhook_subscription_create(owner=user, url=receiver.url, secret=SECRET)

    with django_capture_on_commit_callbacks(execute=True):
        try:
            with transaction.atomic():
                memory_create(owner=user, draft=MemoryDraft(content="Never happened"), actor="t")
                raise RuntimeError("roll back")
        except RuntimeError:
            pass

    assert receiver.requests == []
    assert WebhookDelivery.objects.count() == 0


def test_a_receiver_that_keeps_failing_ends_failed_after_the_last_attempt(
    settings, user, receiver, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    webhook_subscription_create(owner=user, url=receiver.url, secret=SECRET, events=["memory.added"])
    receiver.answer(503, 503, 503, 503)

    with django_capture_on_commit_callbacks(execute=True):
        memory_create(owner=user, draft=MemoryDraft(content="Prefers green tea"), actor="t")

    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("failed", 3, 503)
    assert delivery.next_attempt_at is None
    assert len(receiver.requests) == 3


def test_an_unreachable_receiver_is_recorded_as_a_network_error(settings, user, django_capture_on_commit_callbacks):
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    with WebhookReceiver(secret=SECRET) as gone:
        url = gone.url  # a port nobody listens on once the server has stopped
    webhook_subscription_create(owner=user, url=url, secret=SECRET, events=["memory.added"])

    with django_capture_on_commit_callbacks(execute=True):
        memory_create(owner=user, draft=MemoryDraft(content="Prefers green tea"), actor="t")

    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("failed", 2, None)
    assert delivery.last_error.startswith("ConnectError")


def test_inactive_and_unsubscribed_events_are_not_delivered(user, receiver, django_capture_on_commit_callbacks):
    webhook_subscription_create(owner=user, url=receiver.url, secret=SECRET, events=["memory.forgotten"])
    inactive = webhook_subscription_create(owner=user, url=receiver.url, secret=SECRET)
    WebhookSubscription.objects.filter(pk=inactive.pk).update(active=False)

    with django_capture_on_commit_callbacks(execute=True):
        memory_create(owner=user, draft=MemoryDraft(content="Prefers green tea"), actor="t")

    assert receiver.requests == []
    assert WebhookDelivery.objects.count() == 0


def test_a_stored_url_the_http_client_cannot_encode_fails_its_attempt_and_backs_off(settings, monkeypatch, user):
    # given a subscription stored before its URL was checked (a zero-width space in the host), one
    # delivery due, a 10 s backoff and a clock that stands still
    settings.WEBHOOK_RETRY_BASE_SECONDS = 10
    now = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: now)
    hook = WebhookSubscription.objects.create(owner=user, url=ZERO_WIDTH_HOST_URL, secret=SECRET, events=[])
    delivery = WebhookDelivery.objects.create(
        subscription=hook, event="memory.added", payload={"id": "x", "data": {}}, next_attempt_at=now
    )

    # when it is attempted
    webhook_delivery_attempt(delivery_id=delivery.id)

    # then the attempt is recorded as failed with the client's reason, and both backoffs start
    delivery.refresh_from_db()
    hook.refresh_from_db()
    error = "InvalidURL: Invalid IDNA hostname: 'a\\u200b.example.com'"
    assert (delivery.status, delivery.attempts, delivery.last_status_code, delivery.last_error) == (
        "pending",
        1,
        None,
        error,
    )
    assert [(a["status_code"], a["error"]) for a in delivery.attempt_log] == [(None, error)]
    assert delivery.next_attempt_at == now + timedelta(seconds=10)
    assert (hook.failures, hook.retry_at) == (1, now + timedelta(seconds=10))

    # and neither another attempt nor a scheduler pass before then tries again: the scheduler sleeps
    # until the backoff ends
    webhook_delivery_attempt(delivery_id=delivery.id)
    assert _Scheduler()._dispatch_due() == 10.01
    delivery.refresh_from_db()
    assert (delivery.attempts, delivery.next_attempt_at) == (1, now + timedelta(seconds=10))


def test_a_stored_url_the_http_client_cannot_encode_ends_failed_after_the_last_attempt(
    settings, user, django_capture_on_commit_callbacks
):
    # given a subscription stored before its URL was checked (a host of only U+3002)
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    WebhookSubscription.objects.create(owner=user, url=FULL_STOP_HOST_URL, secret=SECRET, events=["memory.added"])

    # when a memory is added
    with django_capture_on_commit_callbacks(execute=True):
        memory_create(owner=user, draft=MemoryDraft(content="Prefers green tea"), actor="t")

    # then its delivery was retried, then given up, like any other failing one
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code, delivery.next_attempt_at) == (
        "failed",
        2,
        None,
        None,
    )
    assert delivery.last_error == "InvalidURL: Invalid IDNA hostname: '\u3002.com'"


# --- REST API ----------------------------------------------------------------------------------


def test_webhook_api_create_list_delete(api):
    created = api.post(
        "/api/v1/webhooks/", {"url": "https://hooks.example.com/memory", "description": "CRM sync"}, format="json"
    )
    assert created.status_code == 201
    body = created.json()
    assert set(body) == {"id", "url", "events", "description", "active", "created_at", "secret"}
    assert body["events"] == [
        "memory.added",
        "memory.updated",
        "memory.forgotten",
        "memory.superseded",
        "extraction.completed",
    ]
    assert body["secret"].startswith("whsec_") and len(body["secret"]) > 30
    assert (body["url"], body["description"], body["active"]) == ("https://hooks.example.com/memory", "CRM sync", True)

    listed = api.get("/api/v1/webhooks/").json()
    assert listed["count"] == 1
    assert "secret" not in listed["results"][0]
    assert listed["results"][0]["id"] == body["id"]

    assert api.delete(f"/api/v1/webhooks/{body['id']}/").status_code == 204
    assert api.get("/api/v1/webhooks/").json()["count"] == 0
    assert api.delete(f"/api/v1/webhooks/{body['id']}/").status_code == 404


def test_another_owners_webhook_is_a_404(user, api, other_api):
    hook = subscribe(api, "https://hooks.example.com/memory")

    assert other_api.get(f"/api/v1/webhooks/{hook['id']}/").status_code == 404
    assert other_api.get(f"/api/v1/webhooks/{hook['id']}/deliveries/").status_code == 404
    assert other_api.delete(f"/api/v1/webhooks/{hook['id']}/").status_code == 404
    assert other_api.get("/api/v1/webhooks/").json()["count"] == 0
    assert WebhookSubscription.objects.filter(pk=hook["id"]).exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "url"),
        ({"url": "not a url"}, "url"),
        ({"url": "ftp://example.com/x"}, "url"),
        ({"url": "https://example.com/\x00"}, "url"),
        ({"url": "https://example.com/x", "events": []}, "events"),
        ({"url": "https://example.com/x", "events": ["memory.exploded"]}, "events"),
        ({"url": "https://example.com/x", "events": "memory.added"}, "events"),
        ({"url": "https://example.com/x", "secret": "short"}, "secret"),
        ({"url": "https://example.com/x", "colour": "blue"}, "colour"),
    ],
)
def test_bad_webhook_input_is_400(api, body, field):
    response = api.post("/api/v1/webhooks/", json.loads(json.dumps(body)), format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"].startswith(f"{field}:")
    assert WebhookSubscription.objects.count() == 0


@pytest.mark.parametrize(
    ("url", "shown"), [(ZERO_WIDTH_HOST_URL, "'a\\u200b.example.com'"), (FULL_STOP_HOST_URL, "'\u3002.com'")]
)
def test_a_url_whose_host_the_http_client_cannot_encode_is_400(api, url, shown):
    response = api.post("/api/v1/webhooks/", {"url": url, "secret": SECRET}, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == (
        f"url: Webhooks cannot be sent to this URL: Invalid IDNA hostname: {shown}."
    )
    assert WebhookSubscription.objects.count() == 0


def test_the_service_refuses_a_url_whose_host_the_http_client_cannot_encode(user):
    with pytest.raises(ServiceError) as refused:
        webhook_subscription_create(owner=user, url=ZERO_WIDTH_HOST_URL, secret=SECRET)

    assert (refused.value.code, refused.value.message) == (
        "invalid_url",
        "Webhooks cannot be sent to this URL: Invalid IDNA hostname: 'a\\u200b.example.com'.",
    )
    assert WebhookSubscription.objects.count() == 0


def test_webhook_api_needs_a_key(client):
    assert client.get("/api/v1/webhooks/").status_code in (401, 403)


def test_the_sweep_resends_deliveries_whose_message_was_lost(user, receiver):
    # given a pending delivery whose retry time passed long ago (its broker message was lost)
    hook = webhook_subscription_create(owner=user, url=receiver.url, secret=SECRET)
    lost = WebhookDelivery.objects.create(
        subscription=hook,
        event="memory.added",
        payload={"id": "x", "event": "memory.added", "data": {}},
        next_attempt_at=timezone.now() - timedelta(hours=1),
    )

    # when the sweep runs
    result = integrations_sweep.apply().get()

    # then it was sent and delivered
    assert result == {"webhook_deliveries": 1, "telegram_updates": 0}
    lost.refresh_from_db()
    assert (lost.status, lost.attempts) == ("delivered", 1)
    assert [r.headers["x-memory-delivery"] for r in receiver.requests] == [str(lost.id)]


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_deliveries_run_beside_the_request(settings, receiver):
    # given the embedded mode's default: deliveries in a background thread
    settings.WEBHOOK_EAGER_IN_BACKGROUND = True
    owner = UserFactory(username="carol")
    webhook_subscription_create(owner=owner, url=receiver.url, secret=SECRET, events=["memory.added"])
    receiver.answer(500)

    # when a memory is added (and committed)
    memory_create(owner=owner, draft=MemoryDraft(content="Prefers green tea"), actor="t")

    # then the delivery succeeds on its second attempt, off this thread
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not WebhookDelivery.objects.filter(status="delivered").exists():
        time.sleep(0.05)
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("delivered", 2)
    assert [r.status for r in receiver.requests] == [500, 200]
