"""Issue 12, findings 3 and 5: webhook SSRF, response bodies in the log, replay, and a dead endpoint
holding back everyone's deliveries in the embedded mode."""

import hashlib
import hmac
import json
import time

import pytest

from integrations.models import WebhookDelivery, WebhookSubscription
from integrations.services.webhook_targets import target_problem
from integrations.services.webhooks import webhook_subscription_create
from memories.drafts import MemoryDraft
from memories.services.memories import memory_create
from tests.factories import UserFactory
from tests.fakes.webhook_receiver import WebhookReceiver

pytestmark = pytest.mark.django_db

SECRET = "whsec_test-secret-0123456789"


@pytest.fixture
def receiver():
    with WebhookReceiver(secret=SECRET) as server:
        yield server


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hook",
        "http://10.0.0.1/hook",
        "http://localhost:9000/hook",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://192.168.1.20/hook",
        "http://172.16.0.5/hook",
        "http://100.64.0.1/hook",
        "http://224.0.0.1/hook",
        "http://0.0.0.0:8000/hook",
        "http://2130706433/hook",
    ],
)
def test_webhooks_to_loopback_private_link_local_and_multicast_targets_are_refused(settings, api, url):
    settings.WEBHOOK_ALLOWED_NETWORKS = []

    response = api.post("/api/v1/webhooks/", {"url": url, "secret": SECRET}, format="json")

    assert response.status_code == 400, response.content
    message = response.json()["error"]["message"]
    assert message.startswith("url: Webhooks are sent to public addresses only: ")
    assert WebhookSubscription.objects.count() == 0


def test_an_operators_allow_list_opens_a_private_network(settings, api):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["10.0.0.0/8"]

    assert target_problem("http://10.0.0.1/hook") is None
    assert target_problem("http://127.0.0.1/hook") == "127.0.0.1 is a loopback address"
    response = api.post("/api/v1/webhooks/", {"url": "http://10.0.0.1/hook", "secret": SECRET}, format="json")
    assert response.status_code == 201


def test_a_delivery_to_an_address_that_became_private_is_refused_at_connect_time(
    settings, user, receiver, django_capture_on_commit_callbacks
):
    # given a subscription stored while its receiver was allowed (or whose name now resolves locally)
    webhook_subscription_create(owner=user, url=receiver.url.replace("127.0.0.1", "localhost"), secret=SECRET)
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    settings.WEBHOOK_MAX_ATTEMPTS = 1

    # when an event is delivered
    with django_capture_on_commit_callbacks(execute=True):
        memory_create(owner=user, draft=MemoryDraft(content="Prefers green tea"), actor="t")

    # then nothing reached the local service and the log says why
    assert receiver.requests == []
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.last_status_code) == ("failed", None)
    assert delivery.last_error.startswith("ConnectError: refused: localhost resolves to ")
    assert "is a loopback address" in delivery.last_error


def test_the_delivery_log_keeps_status_and_timing_never_the_response_body(
    settings, user, api, receiver, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    hook = webhook_subscription_create(owner=user, url=receiver.url, secret=SECRET)
    receiver.answer_with(500, body=b"INTERNAL-ONLY: db_password=hunter2")

    with django_capture_on_commit_callbacks(execute=True):
        memory_create(owner=user, draft=MemoryDraft(content="Prefers green tea"), actor="t")

    log = api.get(f"/api/v1/webhooks/{hook.pk}/deliveries/").content.decode()
    assert "db_password" not in log and "INTERNAL-ONLY" not in log
    (entry,) = json.loads(log)["results"]
    assert entry["last_error"] == "HTTP 500"
    (attempt,) = entry["attempt_log"]
    assert (attempt["status_code"], attempt["error"]) == (500, "HTTP 500")
    assert isinstance(attempt["duration_ms"], int)


def test_a_redirect_is_never_followed(settings, user, receiver, django_capture_on_commit_callbacks):
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    webhook_subscription_create(owner=user, url=receiver.url, secret=SECRET)
    receiver.answer_with(302, headers={"Location": "http://10.0.0.1/internal"})

    with django_capture_on_commit_callbacks(execute=True):
        memory_create(owner=user, draft=MemoryDraft(content="Prefers green tea"), actor="t")

    assert [r.status for r in receiver.requests] == [302]
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.last_status_code, delivery.last_error) == ("failed", 302, "HTTP 302")


def test_each_attempt_signs_the_time_it_was_sent(user, receiver, django_capture_on_commit_callbacks):
    webhook_subscription_create(owner=user, url=receiver.url, secret=SECRET)
    before = int(time.time())

    with django_capture_on_commit_callbacks(execute=True):
        memory_create(owner=user, draft=MemoryDraft(content="Prefers green tea"), actor="t")

    (request,) = receiver.requests
    sent = request.body["timestamp"]
    assert before <= sent <= int(time.time())
    assert request.headers["x-memory-timestamp"] == str(sent)
    # the timestamp is inside the signed bytes: changing it breaks the signature
    forged = request.raw.replace(f'"timestamp":{sent}'.encode(), f'"timestamp":{sent + 600}'.encode())
    assert forged != request.raw
    expected = "sha256=" + hmac.new(SECRET.encode(), forged, hashlib.sha256).hexdigest()
    assert request.headers["x-memory-signature"] != expected


@pytest.mark.django_db(transaction=True)
def test_a_dead_endpoint_delays_only_its_own_deliveries_in_the_embedded_mode(settings):
    # given the embedded mode (no broker), a long backoff, Carol's endpoint failing every request and
    # Dave's healthy
    settings.WEBHOOK_EAGER_IN_BACKGROUND = True
    settings.WEBHOOK_RETRY_BASE_SECONDS = 120
    carol, dave = UserFactory(username="carol"), UserFactory(username="dave")
    with WebhookReceiver(secret=SECRET) as dead, WebhookReceiver(secret=SECRET) as healthy:
        dead.answer(*[503] * 20)
        dead_hook = webhook_subscription_create(owner=carol, url=dead.url, secret=SECRET, events=["memory.added"])
        webhook_subscription_create(owner=dave, url=healthy.url, secret=SECRET, events=["memory.added"])

        # when Carol gains three memories, then Dave one
        for n in range(3):
            memory_create(owner=carol, draft=MemoryDraft(content=f"Carol fact {n}"), actor="t")
        memory_create(owner=dave, draft=MemoryDraft(content="Dave likes jazz"), actor="t")

        # then Dave's delivery arrives while Carol's endpoint backs off
        deadline = time.monotonic() + 15
        mine = WebhookDelivery.objects.filter(subscription__owner=dave, status="delivered")
        while time.monotonic() < deadline and not mine.exists():
            time.sleep(0.05)
        assert [r.body["data"]["memory"]["content"] for r in healthy.requests] == ["Dave likes jazz"]
        delivered = WebhookDelivery.objects.get(subscription__owner=dave)
        assert (delivered.status, delivered.attempts) == ("delivered", 1)
        # and the dead endpoint was tried once for its first delivery; the others wait for its backoff
        assert len(dead.requests) == 1
        carols = WebhookDelivery.objects.filter(subscription=dead_hook).order_by("created_at")
        assert [(d.status, d.attempts) for d in carols] == [("pending", 1), ("pending", 0), ("pending", 0)]
        dead_hook.refresh_from_db()
        assert dead_hook.failures == 1
