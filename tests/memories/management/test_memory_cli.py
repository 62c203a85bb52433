"""`manage.py memory …`: search, delete, stats, consolidate, export, import, reembed."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from memories.drafts import MemoryDraft
from memories.models import Memory, Status
from memories.services.embeddings import embedding_get
from memories.services.memories import memory_create
from memories.services.turn_embeddings import turn_embeddings
from sessions.models import ChatSession, ConversationTurn, Episode
from sessions.services.sessions import session_create, turn_append_many
from tests.factories import ConversationTurnFactory, MemoryFactory

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    return run_both(*args)[0]


def run_both(*args) -> tuple[str, str]:
    """stdout (the result) and stderr (progress and questions) of one command."""
    out, err = StringIO(), StringIO()
    call_command("memory", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_search_prints_a_table_of_the_best_matches(user, other_user):
    # given memories of two owners
    memory_create(
        owner=user, draft=MemoryDraft(content="Prefers green tea over coffee", category="preference"), actor="t"
    )
    memory_create(owner=user, draft=MemoryDraft(content="Lives in Porto"), actor="t")
    memory_create(
        owner=other_user, draft=MemoryDraft(content="Prefers green tea with honey", category="preference"), actor="t"
    )

    # when Alice's memories are searched
    output = run("search", "green tea", "--owner", "alice", "--top-k", "1")

    # then one row, hers, under the header
    lines = output.splitlines()
    assert lines[0].split() == ["#", "score", "type", "kind", "id", "content"]
    assert set(lines[1]) == {"-", " "}
    assert lines[2].split()[2:4] == ["memory", "preference/active"]
    assert lines[2].endswith("Prefers green tea over coffee")
    assert lines[3].startswith("1 result(s) in ")
    assert len(lines) == 4


def test_search_over_turns(user):
    session = session_create(owner=user)
    turn_append_many(
        session=session, turns=[{"role": "user", "content": "We hiked the Douro valley", "speaker": "Ana"}]
    )

    output = run("search", "Douro valley", "--owner", "alice", "--scope", "turns")

    row = output.splitlines()[2]
    assert row.split()[2:4] == ["turn", "turn/user"]
    assert row.endswith("We hiked the Douro valley")


def test_search_with_no_results(user):
    assert run("search", "anything", "--owner", "alice").startswith("No results for 'anything' (")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "tea", "--owner", "nobody"], "no such user: nobody"),
        (["search", "tea", "--owner", "alice", "--scope", "everything"], "argument --scope: invalid choice"),
        (["search", "tea", "--owner", "alice", "--top-k", "0"], "--top-k must be between 1 and 100"),
        (["search", "tea", "--owner", "alice", "--top-k", "many"], "argument --top-k: invalid int value"),
        (["search", "   ", "--owner", "alice"], "the query must be non-empty text"),
        (["search", "tea"], "the following arguments are required: --owner"),
        (["delete", "not-a-uuid", "--owner", "alice"], "not a memory id: not-a-uuid"),
        (["stats", "--owner", "nobody"], "no such user: nobody"),
        (["export", "--owner", "alice", "--format", "pdf", "--output", "x"], "argument --format: invalid choice"),
        (["reembed"], "one of the arguments --owner --all is required"),
        (["reembed", "--owner", "alice", "--all"], "argument --all: not allowed with argument --owner"),
        (["reembed", "--all", "--batch-size", "0"], "--batch-size must be at least 1"),
        (["consolidate", "--owner", "alice", "--session", "nope"], "not a session id: nope"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_arguments_are_a_command_error(user, args, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace("-", r"\-")):
        run(*args)


def test_delete_forgets_and_hard_delete_removes(user, other_user):
    # given two memories of Alice and one of Bob
    tea = memory_create(owner=user, draft=MemoryDraft(content="Prefers green tea"), actor="t")
    porto = memory_create(owner=user, draft=MemoryDraft(content="Lives in Porto"), actor="t")
    bobs = memory_create(owner=other_user, draft=MemoryDraft(content="Bob likes jazz"), actor="t")

    # when one is deleted (forgotten) and the other hard-deleted
    forgot = run("delete", str(tea.pk), "--owner", "alice")
    deleted = run("delete", str(porto.pk), "--owner", "alice", "--hard", "--yes")

    # then the first is kept as forgotten, with its history, and the second is gone
    assert forgot == f"Forgot memory {tea.pk}: Prefers green tea\n"
    assert deleted == f"Deleted memory {porto.pk} for good: Lives in Porto\n"
    tea.refresh_from_db()
    assert tea.status == Status.FORGOTTEN
    assert tea.events.last().event_type == "forget"
    assert not Memory.objects.filter(pk=porto.pk).exists()
    # and another owner's memory cannot be reached with Alice's name
    with pytest.raises(CommandError, match=f"no memory {bobs.pk} for alice"):
        run("delete", str(bobs.pk), "--owner", "alice")
    assert run("delete", str(tea.pk), "--owner", "alice") == f"Memory {tea.pk} was already forgotten.\n"


def test_stats(user, other_user):
    # given memories in two categories and states, sessions and a job
    MemoryFactory(owner=user, content="a", category="preference", strength=0.8)
    MemoryFactory(owner=user, content="b", category="preference", strength=0.4)
    MemoryFactory(owner=user, content="c", category="fact", strength=0.6, status="archived")
    MemoryFactory(owner=other_user, content="d", category="fact")
    session = session_create(owner=user)
    turn_append_many(session=session, turns=[{"role": "user", "content": "hi"}])
    ChatSession.objects.create(owner=user, status="ended", ended_at=timezone.now())

    output = run("stats", "--owner", "alice")

    lines = output.splitlines()
    assert lines[0] == "Memories of alice"
    assert lines[1].split() == ["category", "active", "archived", "total"]
    assert [line.split() for line in lines[3:6]] == [
        ["fact", "0", "1", "1"],
        ["preference", "2", "0", "2"],
        ["total", "2", "1", "3"],
    ]
    assert "Average strength (active):   0.600" in lines
    assert "Strong enough to pin:        1" in lines
    sessions_header = lines.index(next(line for line in lines if line.startswith("sessions")))
    assert lines[sessions_header + 2].split() == ["2", "1", "1", "0", "1", "1", "0"]
    assert lines[-3].split() == ["extraction", "queue", "pending", "running", "done", "failed"]
    assert lines[-1].split() == ["jobs", "0", "0", "0", "0"]


def test_consolidate_runs_ended_sessions_that_were_not(user, other_user):
    # given an ended, unconsolidated session of Alice with a preference (its job lost), and Bob's
    session = session_create(owner=user)
    turn_append_many(
        session=session,
        turns=[
            {"role": "user", "content": "I prefer green tea.", "speaker": "Alice"},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "Good night."},
        ],
    )
    ChatSession.objects.filter(pk=session.pk).update(status="ended", ended_at=timezone.now())
    bobs = ChatSession.objects.create(owner=other_user, status="ended", ended_at=timezone.now())

    # when Alice's sessions are consolidated
    output, progress = run_both("consolidate", "--owner", "alice")

    # then hers is, with its memory, and Bob's is not
    session.refresh_from_db()
    bobs.refresh_from_db()
    assert (session.consolidated, bobs.consolidated) == (True, False)
    assert list(Memory.objects.filter(owner=user).values_list("content", flat=True)) == ["Alice prefers green tea"]
    assert progress.endswith("100% 1/1\n")
    row = output.splitlines()[-1].split()
    assert row[:7] == [str(session.pk), "3", "done", "1", "0", "0", "0"]

    # and a second run has nothing to do
    assert run("consolidate", "--owner", "alice") == "No ended sessions are waiting for consolidation.\n"
    assert run("consolidate", "--owner", "alice", "--session", str(session.pk)) == (
        f"Session {session.pk} is already consolidated.\n"
    )


def test_consolidate_refuses_an_open_session(user):
    session = session_create(owner=user)
    with pytest.raises(CommandError, match=f"session {session.pk} is still open"):
        run("consolidate", "--owner", "alice", "--session", str(session.pk))


# --- export / import ---------------------------------------------------------------------------


def test_export_then_import_into_another_owner(user, other_user, tmp_path):
    # given Alice's memories
    memory_create(
        owner=user, draft=MemoryDraft(content="Prefers green tea over coffee", category="preference"), actor="t"
    )
    memory_create(owner=user, draft=MemoryDraft(content="Lives in Porto"), actor="t")
    target = tmp_path / "memories.jsonl"

    # when they are exported as JSONL and imported for Bob
    exported = run("export", "--owner", "alice", "--format", "jsonl", "--output", str(target))
    imported = run("import", str(target), "--owner", "bob")

    # then the file holds both, and Bob now has both, restored as they were (not through the merge decision)
    lines = target.read_text().splitlines()
    assert sorted(json.loads(line)["content"] for line in lines) == ["Lives in Porto", "Prefers green tea over coffee"]
    assert exported == f"Exported alice's memories as jsonl to {target} ({len(target.read_text())} characters)\n"
    assert target.stat().st_mode & 0o777 == 0o600
    bobs = Memory.objects.filter(owner=other_user)
    assert sorted(bobs.values_list("content", "source")) == [
        ("Lives in Porto", "agent_write"),
        ("Prefers green tea over coffee", "agent_write"),
    ]
    out = imported.splitlines()
    assert out[0] == "Imported memories.jsonl (jsonl) for bob"
    assert out[1].split() == [
        "entries",
        "added",
        "merged",
        "reinforced",
        "superseded",
        "unchanged",
        "skipped",
        "digests",
    ]
    assert out[3].split() == ["2", "2", "0", "0", "0", "0", "0", "0"]
    assert out[4] == "restored row for row: ids, statuses, strengths and times as exported"
    assert [p.name for p in tmp_path.iterdir()] == ["memories.jsonl"]


def test_export_memory_md_to_stdout(user):
    memory_create(
        owner=user, draft=MemoryDraft(content="Prefers green tea over coffee", category="preference"), actor="t"
    )
    output = run("export", "--owner", "alice", "--format", "memory-md", "--output", "-")
    assert "Prefers green tea over coffee" in output
    assert output.startswith("#")


def test_import_a_memory_md_file(user, tmp_path):
    source = tmp_path / "MEMORY.md"
    memory_create(
        owner=user, draft=MemoryDraft(content="Prefers green tea over coffee", category="preference"), actor="t"
    )
    source.write_text(run("export", "--owner", "alice", "--format", "memory-md", "--output", "-"))
    Memory.objects.all().delete()

    output = run("import", str(source), "--owner", "alice")

    assert output.splitlines()[0] == "Imported MEMORY.md (memory-md) for alice"
    assert list(Memory.objects.values_list("content", "category")) == [("Prefers green tea over coffee", "preference")]


def test_export_and_import_errors(user, tmp_path):
    with pytest.raises(CommandError, match=f"no such file: {tmp_path}/missing.md"):
        run("import", str(tmp_path / "missing.md"), "--owner", "alice")
    notes = tmp_path / "notes.txt"
    notes.write_text("just some words\n")
    with pytest.raises(CommandError, match=f"cannot import {notes}: cannot tell the format of this file"):
        run("import", str(notes), "--owner", "alice")
    with pytest.raises(CommandError, match="argument --format: invalid choice: 'pdf'"):
        run("import", str(notes), "--owner", "alice", "--format", "pdf")
    with pytest.raises(CommandError, match="no such directory"):
        run("export", "--owner", "alice", "--format", "jsonl", "--output", str(tmp_path / "no" / "x.jsonl"))
    with pytest.raises(CommandError, match="--output is a directory"):
        run("export", "--owner", "alice", "--format", "jsonl", "--output", str(tmp_path))
    with pytest.raises(CommandError, match="no such user: nobody"):
        run("export", "--owner", "nobody", "--format", "jsonl", "--output", str(tmp_path / "x.jsonl"))
    assert Memory.objects.count() == 0


# --- reembed -----------------------------------------------------------------------------------


def test_reembed_recomputes_memories_turns_and_episodes(user, other_user):
    # given rows of both owners whose vectors are stale
    stale = [1.0] + [0.0] * 383
    memory = MemoryFactory(owner=user, content="Prefers green tea", embedding=stale)
    bobs = MemoryFactory(owner=other_user, content="Bob likes jazz", embedding=stale)
    session = session_create(owner=user)
    turns = [
        ConversationTurnFactory(session=session, owner=user, sequence=i, content=text, speaker="Ana", embedding=stale)
        for i, text in enumerate(["We went to Porto", "It rained all day"], start=1)
    ]
    episode = Episode.objects.create(
        owner=user,
        session=session,
        summary="A rainy trip to Porto",
        started_at=timezone.now(),
        ended_at=timezone.now(),
        embedding=stale,
    )

    # when Alice's embeddings are recomputed
    output, progress = run_both("reembed", "--owner", "alice", "--batch-size", "1")

    # then hers match what ingest computes, Bob's are untouched, and the bar reached 100%
    memory.refresh_from_db()
    episode.refresh_from_db()
    bobs.refresh_from_db()
    assert list(memory.embedding) == pytest.approx(embedding_get(owner=user, text="Prefers green tea"), abs=1e-6)
    assert list(episode.embedding) == pytest.approx(embedding_get(owner=user, text="A rainy trip to Porto"), abs=1e-6)
    fresh = session_create(owner=other_user)
    expected = turn_embeddings(session=fresh, turns=[{"speaker": "Ana", "content": t.content} for t in turns])
    stored = [list(ConversationTurn.objects.get(pk=t.pk).embedding) for t in turns]
    assert stored[0] == pytest.approx(expected[0], abs=1e-6)
    assert stored[1] == pytest.approx(expected[1], abs=1e-6)
    assert list(bobs.embedding) == stale
    assert progress.endswith("[##############################] 100% 4/4\n")
    assert output.splitlines()[-1].split()[:3] == ["1", "2", "1"]


def test_reembed_refuses_a_provider_of_another_width(user, monkeypatch):
    from memories.services import reembed

    monkeypatch.setattr(reembed, "embedding_get_many", lambda *, texts, **_: [[0.1] * 512 for _ in texts])
    with pytest.raises(CommandError, match="returns 512 dimensions but the database stores 384"):
        run("reembed", "--all")
