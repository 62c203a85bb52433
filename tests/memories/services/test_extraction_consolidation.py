"""Session-end consolidation (`session_consolidate` and its job): extract → decide → write → episode,
once per session, with provenance and honest stats (seed 002 §7.4, DESIGN §4 "Session end")."""

import copy

import pytest

from memories.drafts import MemoryDraft
from memories.models import Memory, MemoryEvent, MemorySource
from memories.providers.llm_types import CandidateMemory
from memories.services.decisions import memory_write
from memories.services.extraction import (
    ExtractionStats,
    candidates_apply,
    extraction_job_process,
    session_consolidate,
)
from memories.tasks import extraction_job_run
from sessions.models import ChatSession, ConversationTurn, Episode, ExtractionJob
from sessions.services.sessions import session_end
from tests.engine import capture_events, conversation, end_and_consolidate, of_type, rows
from tests.factories import UserFactory
from tests.support import at_once, db_snapshot

FIRST = (
    "user: I prefer tea in the morning.",
    "assistant: Noted, tea it is.",
    "user: My favorite color is blue.",
    "assistant: Lovely.",
    "user: I live in Berlin.",
)


def _turn(session, sequence) -> ConversationTurn:
    return ConversationTurn.objects.get(session=session, sequence=sequence)


def test_first_consolidation_creates_memories_with_provenance(user, monkeypatch):
    # given a first conversation and no memories
    events = capture_events(monkeypatch)
    session = conversation(user, *FIRST)

    # when the session ends and is consolidated
    stats = end_and_consolidate(session)

    # then three memories exist, each from the turn that said it, at its importance
    assert rows(user) == [
        ("User prefers tea in the morning", "preference", "active", 0.6, 0),
        ("User's favorite color is blue", "preference", "active", 0.6, 0),
        ("User lives in Berlin", "fact", "active", 0.8, 0),
    ]
    for content, sequence in [
        ("User prefers tea in the morning", 1),
        ("User's favorite color is blue", 3),
        ("User lives in Berlin", 5),
    ]:
        memory = Memory.objects.get(content=content)
        turn = _turn(session, sequence)
        assert list(MemorySource.objects.filter(memory=memory).values_list("turn_id", flat=True)) == [turn.pk]
        assert (memory.source, memory.source_session_id, memory.observed_at) == (
            "extraction",
            session.pk,
            turn.created_at,
        )
        assert [(e.event_type, e.actor, e.session_id) for e in MemoryEvent.objects.filter(memory=memory)] == [
            ("add", "system:extraction", session.pk)
        ]
    # and the stats, the session counters and the extraction.completed event say the same
    assert [m["content"] for m in stats.added] == [
        "User prefers tea in the morning",
        "User's favorite color is blue",
        "User lives in Berlin",
    ]
    assert (stats.updated, stats.superseded, stats.reinforced, stats.forgotten, stats.skipped) == ([], [], [], [], "")
    session.refresh_from_db()
    assert (session.consolidated, session.memories_extracted) == (True, 3)
    assert session.consolidated_at is not None
    completed = of_type(events, "extraction.completed")
    assert completed == [{"session_id": str(session.pk), "kind": "session_end", **stats.as_dict()}]
    # and one episode spans the conversation
    episode = Episode.objects.get()
    assert (episode.session_id, episode.owner_id) == (session.pk, user.pk)
    assert (episode.started_at, episode.ended_at) == (_turn(session, 1).created_at, _turn(session, 5).created_at)
    assert episode.summary != ""


def test_named_speakers_replace_user_in_the_memory(user):
    # given a conversation in which the user is named Melanie
    session = conversation(
        user,
        "user: I prefer tea in the morning.",
        "assistant: Sure.",
        "user: My favorite color is blue.",
        speaker="Melanie",
    )

    # when it is consolidated
    end_and_consolidate(session)

    # then the memories say whose they are
    assert sorted(Memory.objects.values_list("content", flat=True)) == [
        "Melanie prefers tea in the morning",
        "Melanie's favorite color is blue",
    ]


def test_a_session_under_three_turns_is_skipped(user, monkeypatch):
    # given a two-turn session with something worth remembering
    events = capture_events(monkeypatch)
    session = conversation(user, "user: I live in Berlin.", "assistant: Nice city.")

    # when it is consolidated
    stats = end_and_consolidate(session)

    # then nothing is extracted: no memory, no episode, and the result says why
    assert stats.skipped == "fewer than 3 turns"
    assert (stats.added, stats.reinforced) == ([], [])
    assert Memory.objects.count() == 0
    assert Episode.objects.count() == 0
    session.refresh_from_db()
    assert (session.consolidated, session.memories_extracted) == (True, 0)
    assert [e["skipped"] for e in of_type(events, "extraction.completed")] == ["fewer than 3 turns"]


def test_the_job_of_a_short_session_records_the_skip(user):
    # given an ended two-turn session and its job
    session = conversation(user, "user: I live in Berlin.", "assistant: Nice city.")
    job = session_end(session=session)

    # when the job is processed
    extraction_job_process(job=job)

    # then it is done and its result says skipped, with zero counts
    job.refresh_from_db()
    assert job.status == "done"
    assert job.result == {
        "added": 0,
        "updated": 0,
        "superseded": 0,
        "reinforced": 0,
        "forgotten": 0,
        "skipped": "fewer than 3 turns",
    }
    assert Memory.objects.count() == 0


def test_consolidating_twice_changes_nothing_the_second_time(user, monkeypatch):
    # given a consolidated session
    session = conversation(user, *FIRST)
    end_and_consolidate(session)
    before = db_snapshot(user)
    events = capture_events(monkeypatch)

    # when it is consolidated again
    stats = session_consolidate(session=session)

    # then nothing changes: same rows, same strengths, same events, one episode, no new event
    assert stats.skipped == "already consolidated"
    assert (stats.added, stats.updated, stats.superseded, stats.reinforced) == ([], [], [], [])
    assert db_snapshot(user) == before
    assert Episode.objects.filter(session=session).count() == 1
    assert events == []


def test_a_manual_job_after_consolidation_changes_nothing(user):
    # given a consolidated session
    session = conversation(user, *FIRST)
    end_and_consolidate(session)
    before = db_snapshot(user)
    job = ExtractionJob.objects.create(owner=user, session=session, kind="manual", range_start=1, range_end=5)

    # when a manual re-consolidation job is processed
    extraction_job_process(job=job)

    # then the job is done with a skip and nothing else changed
    job.refresh_from_db()
    assert (job.status, job.result["skipped"], job.result["added"]) == ("done", "already consolidated", 0)
    after = db_snapshot(user)
    assert after["memories.Memory"] == before["memories.Memory"]
    assert after["memories.MemoryEvent"] == before["memories.MemoryEvent"]
    assert after["chat_sessions.Episode"] == before["chat_sessions.Episode"]


def test_running_the_session_end_job_twice_processes_it_once(user):
    # given an ended session whose job has been run
    session = conversation(user, *FIRST)
    job = session_end(session=session)
    assert extraction_job_run.run(str(job.pk)) == "done"
    before = db_snapshot(user)

    # when the same job message is delivered again
    outcome = extraction_job_run.run(str(job.pk))

    # then it is skipped and nothing changes
    assert outcome == "skipped"
    assert db_snapshot(user) == before
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("done", 1)
    assert job.result == {"added": 3, "updated": 0, "superseded": 0, "reinforced": 0, "forgotten": 0, "skipped": ""}


def test_a_memory_mentioned_in_several_sessions_grows_stronger(user):
    # given a first session about tea and a colour
    end_and_consolidate(conversation(user, *FIRST[:4]))
    assert rows(user) == [
        ("User prefers tea in the morning", "preference", "active", 0.6, 0),
        ("User's favorite color is blue", "preference", "active", 0.6, 0),
    ]

    # when a second and a third session mention tea again, each with something new
    second = end_and_consolidate(
        conversation(user, "user: I prefer tea in the morning.", "assistant: Still tea?", "user: I live in Berlin.")
    )
    third = end_and_consolidate(
        conversation(user, "user: I prefer tea in the morning.", "assistant: Of course.", "user: I like jazz.")
    )

    # then the memories accumulate and tea is reinforced each time (0.6 → 0.68 → 0.744)
    assert rows(user) == [
        ("User prefers tea in the morning", "preference", "active", 0.744, 2),
        ("User's favorite color is blue", "preference", "active", 0.6, 0),
        ("User lives in Berlin", "fact", "active", 0.8, 0),
        ("User likes jazz", "preference", "active", 0.6, 0),
    ]
    assert [m["content"] for m in second.reinforced] == ["User prefers tea in the morning"]
    assert [m["content"] for m in second.added] == ["User lives in Berlin"]
    assert [m["content"] for m in third.reinforced] == ["User prefers tea in the morning"]
    assert [m["content"] for m in third.added] == ["User likes jazz"]
    tea = Memory.objects.get(content="User prefers tea in the morning")
    assert tea.sources.count() == 3
    assert MemoryEvent.objects.filter(memory=tea, event_type="reinforce").count() == 2


def test_mixed_session_stats_equal_the_actual_changes(user, monkeypatch):
    # given memories from a first session
    end_and_consolidate(
        conversation(
            user,
            "user: I prefer tea in the morning.",
            "assistant: Noted.",
            "user: My favorite color is blue.",
            "assistant: Nice.",
            "user: I like jazz.",
        )
    )
    tea = Memory.objects.get(content="User prefers tea in the morning")
    color = Memory.objects.get(content="User's favorite color is blue")
    jazz = Memory.objects.get(content="User likes jazz")
    last_event = MemoryEvent.objects.order_by("-id").values_list("id", flat=True).first()
    events = capture_events(monkeypatch)

    # when a second session changes, repeats, forgets and adds at once
    session = conversation(
        user,
        "user: Actually I now prefer coffee in the morning.",
        "assistant: Coffee then.",
        "user: My favorite color is blue.",
        "user: Forget that I like jazz",
        "user: I live in Berlin.",
    )
    job = session_end(session=session)
    stats = extraction_job_process(job=job)

    # then each kind of change happened exactly once
    coffee = Memory.objects.get(content="User prefers coffee in the morning")
    berlin = Memory.objects.get(content="User lives in Berlin")
    assert rows(user) == [
        ("User prefers tea in the morning", "preference", "archived", 0.3, 0),
        ("User's favorite color is blue", "preference", "active", 0.68, 1),
        ("User likes jazz", "preference", "forgotten", 0.6, 0),
        ("User prefers coffee in the morning", "preference", "active", 0.7, 0),
        ("User lives in Berlin", "fact", "active", 0.8, 0),
    ]
    # and the stats name exactly those memories
    assert [(m["id"], m.get("previous_id")) for m in stats.superseded] == [(str(coffee.pk), str(tea.pk))]
    assert [m["id"] for m in stats.reinforced] == [str(color.pk)]
    assert [m["id"] for m in stats.forgotten] == [str(jazz.pk)]
    assert [m["id"] for m in stats.added] == [str(berlin.pk)]
    assert stats.updated == []
    # and the history written in this session agrees with them, event for event
    new_events = MemoryEvent.objects.filter(id__gt=last_event).order_by("id")
    assert sorted((e.event_type, e.memory_id) for e in new_events) == sorted(
        [
            ("supersede", tea.pk),
            ("add", coffee.pk),
            ("reinforce", color.pk),
            ("forget", jazz.pk),
            ("add", berlin.pk),
        ]
    )
    # and so do the job result, the session counter and the published event
    job.refresh_from_db()
    assert job.result == {"added": 1, "updated": 0, "superseded": 1, "reinforced": 1, "forgotten": 1, "skipped": ""}
    assert ChatSession.objects.get(pk=session.pk).memories_extracted == 2
    assert of_type(events, "extraction.completed") == [
        {"session_id": str(session.pk), "kind": "session_end", **stats.as_dict()}
    ]


def test_the_same_turns_consolidated_after_turn_level_extraction_are_not_counted_again(user):
    # given a turn-level extraction that already stored the explicit memory of turn 1
    from memories.services.extraction import turn_extract

    session = conversation(
        user,
        "user: Remember that my sister Ana lives in Porto",
        "assistant: I will remember that.",
        "user: Thanks, that is all for today.",
    )
    turn_job = ExtractionJob.objects.get(session=session, kind="turn", range_start=1)
    turn_extract(job=turn_job)
    ana = Memory.objects.get()
    events_before = MemoryEvent.objects.count()

    # when the session is consolidated (re-reading turn 1)
    stats = end_and_consolidate(session)

    # then the memory is neither reinforced nor reported as a change
    ana.refresh_from_db()
    assert (ana.strength, ana.hit_count) == (0.9, 0)
    assert (stats.added, stats.updated, stats.superseded, stats.reinforced) == ([], [], [], [])
    assert MemoryEvent.objects.count() == events_before


@pytest.mark.django_db(transaction=True)
def test_two_workers_consolidating_one_session_at_once_write_one_set_of_memories():
    # given an ended session (its own job not dispatched) and two workers
    owner = UserFactory(username="carol")
    session = conversation(owner, *FIRST)
    ChatSession.objects.filter(pk=session.pk).update(status="ended")

    def consolidate():
        return session_consolidate(session=ChatSession.objects.get(pk=session.pk))

    # when both consolidate it at the same time
    results, errors = at_once(consolidate, consolidate, timeout=60)

    # then one did the work and the other found it done
    assert errors == []
    assert sorted(r.skipped for r in results) == ["", "already consolidated"]
    assert sorted(len(r.added) for r in results) == [0, 3]
    assert Memory.objects.filter(owner=owner).count() == 3
    assert MemoryEvent.objects.filter(owner=owner).count() == 3
    assert Episode.objects.filter(session=session).count() == 1
    assert all(m.hit_count == 0 for m in Memory.objects.filter(owner=owner))


class ScriptedLLM:
    """A provider whose extraction is given by the test (summaries come from the heuristic one)."""

    name = "scripted"

    def __init__(self, candidates):
        from memories.extraction.provider import HeuristicProvider

        self.candidates = candidates
        self.existing_seen: list[list[str]] = []
        self._heuristic = HeuristicProvider()

    def extract(self, *, turns, existing):
        self.existing_seen.append(list(existing))
        return [copy.deepcopy(c) for c in self.candidates]

    def summarize_episode(self, *, turns):
        return self._heuristic.summarize_episode(turns=turns)


def test_every_kind_of_change_is_counted_once_and_re_reading_counts_nothing(user, monkeypatch):
    # given one memory for each decision to come
    def seed(content, **kwargs):
        return memory_write(owner=user, draft=MemoryDraft(content=content, **kwargs), actor="test").memory

    tennis = seed("User plays tennis on Mondays", category="fact")
    tea = seed(
        "User prefers tea in the morning",
        category="preference",
        subject="drink preference",
        predicate="prefers",
        structured_data={"value": "tea in the morning"},
    )
    color = seed("User's favorite color is blue", category="preference")
    jazz = seed("User likes jazz", category="preference")
    session = conversation(user, *(f"user: statement number {i}" for i in range(1, 6)))
    llm = ScriptedLLM(
        [
            CandidateMemory("User plays tennis on Mondays and Fridays", "fact", 0.6, source_sequences=[1]),
            CandidateMemory(
                "User prefers coffee in the morning",
                "preference",
                0.6,
                subject="drink preference",
                predicate="prefers",
                value="coffee in the morning",
                source_sequences=[2],
            ),
            CandidateMemory("User's favorite color is blue", "preference", 0.6, source_sequences=[3]),
            CandidateMemory("User likes jazz", "preference", 0.6, action="forget", source_sequences=[4]),
            CandidateMemory("User lives in Berlin", "fact", 0.8, source_sequences=[5]),
        ]
    )
    monkeypatch.setattr("memories.services.extraction.get_llm", lambda: llm)
    job = session_end(session=session)
    last_event = MemoryEvent.objects.order_by("-id").values_list("id", flat=True).first()

    # when the session is consolidated
    stats = extraction_job_process(job=job)

    # then each decision was taken once, on the memory it concerns
    coffee = Memory.objects.get(content="User prefers coffee in the morning")
    berlin = Memory.objects.get(content="User lives in Berlin")
    assert [m["id"] for m in stats.updated] == [str(tennis.pk)]
    assert [(m["id"], m["previous_id"]) for m in stats.superseded] == [(str(coffee.pk), str(tea.pk))]
    assert [m["id"] for m in stats.reinforced] == [str(color.pk)]
    assert [m["id"] for m in stats.forgotten] == [str(jazz.pk)]
    assert [m["id"] for m in stats.added] == [str(berlin.pk)]
    assert sorted(MemoryEvent.objects.filter(id__gt=last_event).values_list("event_type", "memory_id")) == sorted(
        [
            ("merge", tennis.pk),
            ("supersede", tea.pk),
            ("add", coffee.pk),
            ("reinforce", color.pk),
            ("forget", jazz.pk),
            ("add", berlin.pk),
        ]
    )
    job.refresh_from_db()
    assert job.result == {"added": 1, "updated": 1, "superseded": 1, "reinforced": 1, "forgotten": 1, "skipped": ""}
    # and a provider other than the heuristic was shown the existing memories
    assert set(llm.existing_seen[0]) == {
        "User plays tennis on Mondays",
        "User prefers tea in the morning",
        "User's favorite color is blue",
        "User likes jazz",
    }

    # and when the same turns are read again (a compaction or turn job over them), nothing changes
    before = db_snapshot(user)
    again = ExtractionStats()
    candidates_apply(
        session=session, turns=list(session.turns.order_by("sequence")), candidates=llm.candidates, stats=again
    )
    assert again.as_dict() == ExtractionStats().as_dict()
    assert db_snapshot(user) == before


def test_a_negated_statement_in_a_later_session_supersedes_the_old_one(user, monkeypatch):
    # given a session in which the user likes jazz
    end_and_consolidate(conversation(user, "user: I like jazz.", "assistant: Nice.", "user: Thanks."))
    likes = Memory.objects.get(content="User likes jazz")
    events = capture_events(monkeypatch)

    # when a later session says the opposite
    stats = end_and_consolidate(
        conversation(user, "user: I don't like jazz anymore.", "assistant: Understood.", "user: Thanks.")
    )

    # then the new statement supersedes the old one, which is halved and archived, and a contradiction is
    # published
    [superseding] = stats.superseded
    dislikes = Memory.objects.get(pk=superseding["id"])
    assert superseding["previous_id"] == str(likes.pk)
    assert dislikes.content == "User doesn't like jazz"
    likes.refresh_from_db()
    assert (likes.strength, likes.status) == (0.3, "archived")
    assert [e["old"]["id"] for e in of_type(events, "memory.contradiction")] == [str(likes.pk)]
