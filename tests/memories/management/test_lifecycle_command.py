"""`manage.py lifecycle`."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memories.models import LifecycleRun
from tests.factories import MemoryFactory, UserFactory


def test_command_runs_one_owner_and_prints_counts(user, tmp_path):
    # given a memory
    MemoryFactory(owner=user, content="Likes tea")
    out = StringIO()

    # when the command runs for alice with an export directory
    call_command("lifecycle", owner="alice", export_dir=str(tmp_path), stdout=out)

    # then it printed each step with its counts and wrote the files
    text = out.getvalue()
    assert text.startswith("alice: run ")
    assert " completed in " in text.splitlines()[0]
    for name in (
        "drain",
        "dedup",
        "decay",
        "thresholds",
        "expire",
        "attachments",
        "compress",
        "digests",
        "exports",
        "cap",
    ):
        assert f"  {name} " in text
    assert "files=3" in text
    assert (tmp_path / "alice" / "MEMORY.md").exists()
    assert LifecycleRun.objects.get(owner=user).trigger == "command"


def test_command_all_runs_every_owner_with_memories(user, other_user):
    # given memories for alice and bob, and a user with nothing
    MemoryFactory(owner=user)
    MemoryFactory(owner=other_user)
    UserFactory(username="carol")
    out = StringIO()

    # when the command runs for all
    call_command("lifecycle", "--all", stdout=out)

    # then alice and bob got a run, carol did not
    assert sorted(LifecycleRun.objects.values_list("owner__username", flat=True)) == ["alice", "bob"]


def test_command_needs_a_known_owner(db):
    with pytest.raises(CommandError, match="no such user: nobody"):
        call_command("lifecycle", owner="nobody", stdout=StringIO())
