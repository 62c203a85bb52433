"""Staff erase owners from the shell (`manage.py erase`) and from the admin (a user action)."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from erasure.models import ErasureReceipt
from memories.drafts import MemoryDraft
from memories.models import Memory
from memories.services.memories import memory_create
from sessions.models import ChatSession
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_command_erases_and_prints_the_receipt(user, other_user):
    memory_create(owner=user, draft=MemoryDraft(content="alice likes tea"), actor="test")
    memory_create(owner=user, draft=MemoryDraft(content="alice runs", agent="coach"), actor="test")
    ChatSession.objects.create(owner=user)
    memory_create(owner=other_user, draft=MemoryDraft(content="bob likes coffee"), actor="test")
    out = StringIO()

    call_command("erase", "--owner", "alice", "--yes", stdout=out)

    receipt = json.loads(out.getvalue())
    assert receipt["counts"]["memories.Memory"] == 2
    assert receipt["counts"]["chat_sessions.ChatSession"] == 1
    assert receipt["counts"]["memories.MemoryEvent"] == 2
    assert (receipt["requested_by"], receipt["verified"], receipt["noop"]) == ("cli", True, False)
    assert not Memory.objects.filter(owner=user).exists()
    assert Memory.objects.filter(owner=other_user).count() == 1


def test_command_agent_scope_and_second_run_is_a_noop(user):
    memory_create(owner=user, draft=MemoryDraft(content="alice likes tea"), actor="test")
    memory_create(owner=user, draft=MemoryDraft(content="alice runs", agent="coach"), actor="test")
    first = StringIO()
    call_command("erase", "--owner", "alice", "--agent", "coach", "--yes", stdout=first)
    second, errors = StringIO(), StringIO()

    call_command("erase", "--owner", "alice", "--agent", "coach", "--yes", stdout=second, stderr=errors)

    assert json.loads(first.getvalue())["counts"]["memories.Memory"] == 1
    assert json.loads(second.getvalue()) == {**json.loads(first.getvalue()), "noop": True}
    assert "Nothing left to erase" in errors.getvalue()
    assert list(Memory.objects.filter(owner=user).values_list("content", flat=True)) == ["alice likes tea"]
    assert ErasureReceipt.objects.count() == 1


def test_command_refuses_without_yes_when_not_interactive(user, monkeypatch):
    memory_create(owner=user, draft=MemoryDraft(content="alice likes tea"), actor="test")
    monkeypatch.setattr("sys.stdin", StringIO("y\n"))

    with pytest.raises(CommandError, match="--yes"):
        call_command("erase", "--owner", "alice")

    assert Memory.objects.filter(owner=user).count() == 1


def test_command_verifies_receipts_and_notices_an_edited_one(user):
    call_command("erase", "--owner", "alice", "--yes", stdout=StringIO())
    receipt = ErasureReceipt.objects.get()
    out = StringIO()
    call_command("erase", "--verify", str(receipt.pk), stdout=out)
    assert json.loads(out.getvalue())["verified"] is True

    ErasureReceipt.objects.filter(pk=receipt.pk).update(total=receipt.total + 1)

    with pytest.raises(CommandError, match="does not match"):
        call_command("erase", "--verify", str(receipt.pk), stdout=StringIO())


def test_admin_action_asks_then_erases(user, other_user, django_capture_on_commit_callbacks):
    memory_create(owner=user, draft=MemoryDraft(content="alice likes tea"), actor="test")
    memory_create(owner=other_user, draft=MemoryDraft(content="bob likes coffee"), actor="test")
    staff = UserFactory(username="root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(staff)
    form = {"action": "erase_owner_data", "_selected_action": [str(user.pk)]}

    asked = client.post("/admin/auth/user/", form)

    assert asked.status_code == 200 and b"Yes, erase their data" in asked.content
    assert Memory.objects.filter(owner=user).count() == 1

    with django_capture_on_commit_callbacks(execute=True):
        done = client.post("/admin/auth/user/", {**form, "confirmed": "yes"}, follow=True)

    assert done.status_code == 200
    assert not Memory.objects.filter(owner=user).exists()
    assert Memory.objects.filter(owner=other_user).count() == 1
    assert ErasureReceipt.objects.get().requested_by == "admin:root"


def test_receipts_api_lists_only_the_owners_receipts(api, other_api, user):
    api.delete("/api/v1/data/?confirm=alice")
    other_api.delete("/api/v1/data/?confirm=bob")

    listed = api.get("/api/v1/erasure/receipts/").json()

    assert listed["count"] == 1 and listed["results"][0]["owner_id"] == user.pk
    receipt_id = listed["results"][0]["id"]
    assert api.get(f"/api/v1/erasure/receipts/{receipt_id}/").json()["verified"] is True
    bob_receipt = other_api.get("/api/v1/erasure/receipts/").json()["results"][0]["id"]
    assert api.get(f"/api/v1/erasure/receipts/{bob_receipt}/").status_code == 404


class _Terminal(StringIO):
    """Standard input as a person at a terminal types it."""

    def isatty(self):
        return True


def test_command_asks_on_stderr_so_that_stdout_is_only_the_receipt(user, monkeypatch):
    # given alice's memory and a person at the terminal who answers yes
    memory_create(owner=user, draft=MemoryDraft(content="alice likes tea"), actor="test")
    monkeypatch.setattr("sys.stdin", _Terminal("y\n"))
    out, err = StringIO(), StringIO()

    # when the erase runs without --yes
    call_command("erase", "--owner", "alice", stdout=out, stderr=err)

    # then the question went to stderr and stdout is the receipt alone, as JSON
    assert err.getvalue() == "Erase all data of every agent of alice? [y/N] "
    assert json.loads(out.getvalue())["counts"]["memories.Memory"] == 1
    assert not Memory.objects.filter(owner=user).exists()


def test_command_answered_no_erases_nothing(user, monkeypatch):
    memory_create(owner=user, draft=MemoryDraft(content="alice likes tea"), actor="test")
    monkeypatch.setattr("sys.stdin", _Terminal("n\n"))
    out = StringIO()

    with pytest.raises(CommandError, match="not confirmed; nothing was changed"):
        call_command("erase", "--owner", "alice", stdout=out, stderr=StringIO())

    assert out.getvalue() == ""
    assert Memory.objects.filter(owner=user).count() == 1
    assert ErasureReceipt.objects.count() == 0
