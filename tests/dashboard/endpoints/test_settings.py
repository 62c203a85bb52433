"""Settings endpoints: keys and webhooks of the owner only, bad input refused with a reason."""

import json

import pytest
from django.test import Client

from integrations.models import WebhookSubscription
from memories.api.auth import ApiKeyAuthentication
from memories.models import ApiKey
from memories.services.api_keys import api_key_create

pytestmark = pytest.mark.django_db


def post(client, url, body):
    return client.post(url, json.dumps(body), content_type="application/json")


def test_anonymous_is_401_and_nothing_is_created():
    for url in ("/dashboard/api/keys/", "/dashboard/api/webhooks/"):
        assert Client().post(url, "{}", content_type="application/json").status_code == 401
    assert (ApiKey.objects.count(), WebhookSubscription.objects.count()) == (0, 0)


def test_a_created_key_authenticates_and_is_listed_without_its_secret(alice, alice_client):
    response = post(alice_client, "/dashboard/api/keys/", {"name": "bot"})
    assert response.status_code == 201
    raw = response.json()["raw"]
    user, key = ApiKeyAuthentication().authenticate_credentials(raw)
    assert (user, key.name) == (alice, "bot")
    listed = alice_client.get("/dashboard/api/keys/").json()["keys"]
    assert [k["name"] for k in listed] == ["bot"] and raw not in json.dumps(listed)


def test_revoking_is_once_and_only_for_the_owner(alice, bob_client, alice_client):
    key, _ = api_key_create(username="alice", name="bot")
    refused = post(bob_client, f"/dashboard/api/keys/{key.pk}/revoke/", {})
    assert (refused.status_code, refused.json()["error"]["code"]) == (404, "not_found")
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None
    first = post(alice_client, f"/dashboard/api/keys/{key.pk}/revoke/", {}).json()["key"]["revoked_at"]
    again = post(alice_client, f"/dashboard/api/keys/{key.pk}/revoke/", {}).json()["key"]["revoked_at"]
    assert first is not None and again == first


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "x" * 101}, "name: Ensure this field has no more than 100 characters."),
        ({"name": "a\x00b"}, "name: NUL bytes are not allowed in text."),
        ({"label": "bot"}, "label: Unknown field."),
    ],
)
def test_bad_key_requests_are_400(alice_client, body, message):
    response = post(alice_client, "/dashboard/api/keys/", body)
    assert (response.status_code, response.json()["error"]["message"]) == (400, message)
    assert ApiKey.objects.count() == 0


def test_webhooks_are_the_owners_and_bad_urls_are_refused(alice, bob_client, alice_client):
    bad = post(alice_client, "/dashboard/api/webhooks/", {"url": "ftp://example.com/x"})
    assert bad.status_code == 400 and bad.json()["error"]["message"].startswith("url:")
    created = post(
        alice_client, "/dashboard/api/webhooks/", {"url": "https://example.com/h", "events": ["memory.added"]}
    )
    assert created.status_code == 201 and created.json()["secret"].startswith("whsec_")
    hook = WebhookSubscription.objects.get(owner=alice)
    assert bob_client.delete(f"/dashboard/api/webhooks/{hook.pk}/").status_code == 404
    assert WebhookSubscription.objects.filter(pk=hook.pk).exists()
    assert alice_client.delete(f"/dashboard/api/webhooks/{hook.pk}/").status_code == 204
    assert not WebhookSubscription.objects.exists()


def test_settings_pages_show_only_the_owners_things(alice, bob, bob_client):
    api_key_create(username="alice", name="alice-key")
    WebhookSubscription.objects.create(owner=alice, url="https://alice.example/h", secret="s" * 20, events=[])
    for url in ("/settings/keys/", "/settings/webhooks/", "/settings/agents/"):
        page = bob_client.get(url)
        assert page.status_code == 200
        assert "alice-key" not in page.content.decode() and "alice.example" not in page.content.decode()
    hook = WebhookSubscription.objects.get(owner=alice)
    assert bob_client.get(f"/settings/webhooks/{hook.pk}/").status_code == 404
