"""The one API-key lookup (REST, WebSocket and MCP authentication): one statement, the key and its owner."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memories.models import ApiKey
from memories.selectors.api_keys import api_key_get_active
from memories.services.api_keys import api_key_create, api_key_hash
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_an_active_key_comes_back_with_its_owner_as_the_orm_loads_them_in_one_statement():
    # given a key of alice that has been used
    alice = UserFactory(username="alice", first_name="Alice", is_staff=True)
    key, raw = api_key_create(username="alice", name="laptop")
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now())
    expected = ApiKey.objects.select_related("owner").get(pk=key.pk)

    # when it is looked up by its digest
    with CaptureQueriesContext(connection) as queries:
        found = api_key_get_active(key_hash=api_key_hash(raw))
        owner = found.owner

    # then every field of both rows is as the ORM reads them, and the owner came with the key
    assert len(queries) == 1
    assert [getattr(found, f.attname) for f in ApiKey._meta.concrete_fields] == [
        getattr(expected, f.attname) for f in ApiKey._meta.concrete_fields
    ]
    assert [getattr(owner, f.attname) for f in type(alice)._meta.concrete_fields] == [
        getattr(expected.owner, f.attname) for f in type(alice)._meta.concrete_fields
    ]
    assert (found.name, owner.username, owner.is_staff, found._state.adding) == ("laptop", "alice", True, False)


def test_a_revoked_or_unknown_key_is_none_and_an_inactive_owner_is_left_to_the_caller():
    # given a revoked key, a key of an inactive owner, and a digest no key has
    UserFactory(username="bob")
    revoked, revoked_raw = api_key_create(username="bob")
    ApiKey.objects.filter(pk=revoked.pk).update(revoked_at=timezone.now())
    UserFactory(username="carol", is_active=False)
    _, inactive_raw = api_key_create(username="carol")

    # when each is looked up
    found = [api_key_get_active(key_hash=api_key_hash(raw)) for raw in (revoked_raw, "mem_unknown", inactive_raw)]

    # then only the inactive owner's key is found, with its owner marked inactive
    assert found[:2] == [None, None]
    assert (found[2].owner.username, found[2].owner.is_active) == ("carol", False)
