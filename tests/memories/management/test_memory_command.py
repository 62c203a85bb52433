"""`manage.py memory …` as a shell user sees it (issue 14): the result on stdout, questions, progress and logs
on stderr, a confirmation before a hard delete."""

import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memories.drafts import MemoryDraft
from memories.models import Memory, MemoryEvent
from memories.services.memories import memory_create
from tests.integration.harness import ROOT, command_env


class _Terminal(StringIO):
    def isatty(self):
        return True


@pytest.mark.django_db
def test_hard_delete_refuses_without_yes_when_not_interactive(user, monkeypatch):
    memory = memory_create(owner=user, draft=MemoryDraft(content="User likes tea"), actor="test")
    monkeypatch.setattr("sys.stdin", StringIO("y\n"))

    with pytest.raises(CommandError, match="--yes"):
        call_command("memory", "delete", str(memory.pk), "--owner", "alice", "--hard", stdout=StringIO())

    assert Memory.objects.filter(pk=memory.pk, status="active").count() == 1


@pytest.mark.django_db
def test_hard_delete_asks_on_stderr_and_a_no_keeps_the_memory(user, monkeypatch):
    memory = memory_create(owner=user, draft=MemoryDraft(content="User likes tea"), actor="test")
    monkeypatch.setattr("sys.stdin", _Terminal("no\n"))
    out, err = StringIO(), StringIO()

    with pytest.raises(CommandError, match="not confirmed"):
        call_command("memory", "delete", str(memory.pk), "--owner", "alice", "--hard", stdout=out, stderr=err)

    assert err.getvalue() == f"Delete memory {memory.pk} and its history for good? [y/N] "
    assert out.getvalue() == ""
    assert MemoryEvent.objects.filter(memory_id=memory.pk).count() == 1


@pytest.mark.django_db
def test_hard_delete_with_yes_deletes_without_asking(user):
    memory = memory_create(owner=user, draft=MemoryDraft(content="User likes tea"), actor="test")
    out, err = StringIO(), StringIO()

    call_command("memory", "delete", str(memory.pk), "--owner", "alice", "--hard", "--yes", stdout=out, stderr=err)

    assert out.getvalue() == f"Deleted memory {memory.pk} for good: User likes tea\n"
    assert err.getvalue() == ""
    assert not Memory.objects.filter(pk=memory.pk).exists()


@pytest.mark.django_db
def test_a_soft_delete_needs_no_confirmation(user):
    memory = memory_create(owner=user, draft=MemoryDraft(content="User likes tea"), actor="test")
    out = StringIO()

    call_command("memory", "delete", str(memory.pk), "--owner", "alice", stdout=out)

    assert out.getvalue() == f"Forgot memory {memory.pk}: User likes tea\n"
    assert Memory.objects.get(pk=memory.pk).status == "forgotten"


@pytest.mark.django_db
def test_reembed_draws_its_progress_on_stderr_and_prints_the_table_on_stdout(user):
    for n in range(3):
        memory_create(owner=user, draft=MemoryDraft(content=f"User fact number {n}"), actor="test")
    out, err = StringIO(), StringIO()

    call_command("memory", "reembed", "--owner", "alice", stdout=out, stderr=err)

    assert err.getvalue().endswith(f"\rreembed    [{'#' * 30}] 100% 3/3\n")
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["memories", "turns", "episodes", "seconds"]
    assert lines[2].split()[:3] == ["3", "0", "0"]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_command_run_from_the_shell_prints_its_result_and_no_log_lines(user):
    memory_create(owner=user, draft=MemoryDraft(content="User likes tea"), actor="test")

    done = subprocess.run(
        [sys.executable, "manage.py", "memory", "stats", "--owner", "alice"],
        cwd=ROOT,
        env=command_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "Memories of alice"
    assert done.stderr == ""


@pytest.mark.django_db
def test_link_entities_links_memories_written_before_linking_existed(user, other_user):
    # given memories stored without entities (as rows written before every path linked them)
    from memories.models import MemoryEntity
    from tests.factories import MemoryFactory

    lisbon = MemoryFactory(owner=user, content="Lives near the Alfama district in Lisbon")
    MemoryFactory(owner=user, content="Prefers green tea")
    theirs = MemoryFactory(owner=other_user, content="Works at Google")
    out, err = StringIO(), StringIO()

    # when alice's are linked, twice
    call_command("memory", "link-entities", "--owner", "alice", stdout=out, stderr=err)
    again = StringIO()
    call_command("memory", "link-entities", "--owner", "alice", stdout=again, stderr=StringIO())

    # then her Lisbon memory is linked, bob's untouched, and the second run adds nothing
    assert sorted(MemoryEntity.objects.filter(memory=lisbon).values_list("entity__name", flat=True)) == [
        "Alfama",
        "Lisbon",
    ]
    assert not MemoryEntity.objects.filter(memory=theirs).exists()
    assert out.getvalue().splitlines()[2].split() == ["2", "2", "2"]
    assert again.getvalue().splitlines()[2].split() == ["2", "2", "0"]
    assert err.getvalue().endswith("100% 2/2\n")
