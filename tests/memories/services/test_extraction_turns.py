"""Turn-level extraction (seed 001): user turns of 30+ characters enqueue a job, at most 5 per session;
an explicit "remember …" / "forget …" / "记住…" / "忘掉…" always does and is acted on at once."""

import pytest

from memories.drafts import MemoryDraft
from memories.models import Memory, MemoryEvent
from memories.selectors.retrieval import memory_search
from memories.services.decisions import memory_write
from memories.services.extraction import turn_extract
from sessions.models import ChatSession, ExtractionJob
from sessions.services.sessions import session_create, turn_append_many
from tests.engine import conversation, end_and_consolidate, event_types
from tests.support import db_snapshot

LONG = "I have been thinking about moving to a new flat"  # 47 characters


def _jobs(session) -> list[int]:
    return list(
        ExtractionJob.objects.filter(session=session, kind="turn")
        .order_by("range_start")
        .values_list("range_start", flat=True)
    )


def test_at_most_five_turn_jobs_per_session_for_long_user_turns(user):
    # given a session
    session = session_create(owner=user)

    # when eight long user turns arrive, each followed by a long assistant reply
    turns = []
    for i in range(8):
        turns.append({"role": "user", "content": f"{LONG}, number {i}"})
        turns.append({"role": "assistant", "content": f"That sounds like a big decision, number {i}"})
    turn_append_many(session=session, turns=turns)

    # then only the first five user turns got a job, each covering exactly its turn
    assert _jobs(session) == [1, 3, 5, 7, 9]
    assert all(
        (j.range_start, j.status, j.owner_id) == (j.range_end, "pending", user.pk)
        for j in ExtractionJob.objects.filter(session=session)
    )
    assert ChatSession.objects.get(pk=session.pk).turn_extractions == 5

    # and later long turns get none
    turn_append_many(session=session, turns=[{"role": "user", "content": f"{LONG}, once more"}])
    assert _jobs(session) == [1, 3, 5, 7, 9]


def test_the_allowance_is_shared_across_requests(user):
    # given a session that already used three of its five turn jobs
    session = session_create(owner=user)
    turn_append_many(session=session, turns=[{"role": "user", "content": f"{LONG} {i}"} for i in range(3)])

    # when three more long user turns arrive in another request
    turn_append_many(session=session, turns=[{"role": "user", "content": f"{LONG} {i}"} for i in range(3, 6)])

    # then only two of them got a job
    assert _jobs(session) == [1, 2, 3, 4, 5]


def test_short_and_non_user_turns_get_no_job(user):
    # given a session
    session = session_create(owner=user)

    # when short user turns (29 characters and less), and long assistant, system and tool turns arrive
    turn_append_many(
        session=session,
        turns=[
            {"role": "user", "content": "x" * 29},
            {"role": "user", "content": "   " + "y" * 28 + "   "},
            {"role": "user", "content": "ok"},
            {"role": "assistant", "content": LONG},
            {"role": "system", "content": LONG},
            {"role": "tool", "content": LONG, "tool_name": "search"},
        ],
    )

    # then no turn job exists and the allowance is untouched
    assert _jobs(session) == []
    assert ChatSession.objects.get(pk=session.pk).turn_extractions == 0


def test_a_user_turn_of_exactly_thirty_characters_gets_a_job(user):
    # given a session
    session = session_create(owner=user)

    # when a 30-character user turn arrives
    turn_append_many(session=session, turns=[{"role": "user", "content": "z" * 30}])

    # then it has a job
    assert _jobs(session) == [1]


@pytest.mark.parametrize(
    "content",
    [
        "Remember I'm vegan",
        "remember: no calls before 9",
        "Please remember my PIN hint",
        "Forget that I like jazz",
        "记住我喜欢绿茶",
        "请忘掉我的旧地址",
        "忘记我住在北京",
    ],
)
def test_an_explicit_request_always_gets_a_job_and_uses_no_allowance(user, content):
    # given a session whose five turn jobs are used up
    session = session_create(owner=user)
    turn_append_many(session=session, turns=[{"role": "user", "content": f"{LONG} {i}"} for i in range(5)])

    # when a short explicit request arrives
    turn_append_many(session=session, turns=[{"role": "user", "content": content}])

    # then it gets a job all the same, and the allowance count does not move
    assert _jobs(session) == [1, 2, 3, 4, 5, 6]
    assert ChatSession.objects.get(pk=session.pk).turn_extractions == 5


def test_remember_in_the_middle_of_a_sentence_is_not_a_command(user):
    # given a session
    session = session_create(owner=user)

    # when a short turn only mentions remembering
    turn_append_many(session=session, turns=[{"role": "user", "content": "I can't remember it"}])

    # then it gets no job
    assert _jobs(session) == []


def test_remember_that_stores_an_explicit_memory_from_its_turn(user):
    # given a turn asking to remember something, and its job
    session = conversation(user, "assistant: Anything else?", "user: Remember that my sister Ana lives in Porto")
    job = ExtractionJob.objects.get(session=session, kind="turn")
    assert (job.range_start, job.range_end) == (2, 2)

    # when the turn job runs
    stats = turn_extract(job=job)

    # then one explicit, permanent, high memory is stored, from that turn, with its people and places
    memory = Memory.objects.get()
    turn = session.turns.get(sequence=2)
    assert memory.content == "User's sister Ana lives in Porto"
    assert (memory.source, memory.category, memory.retention, memory.expires_at) == (
        "user_explicit",
        "fact",
        "permanent",
        None,
    )
    assert (memory.importance, memory.strength, memory.status) == (0.9, 0.9, "active")
    assert list(memory.sources.values_list("turn_id", flat=True)) == [turn.pk]
    assert memory.source_session_id == session.pk
    assert sorted(memory.entities.values_list("name", flat=True)) == ["Ana", "Porto"]
    assert [m["content"] for m in stats.added] == ["User's sister Ana lives in Porto"]


def test_a_turn_job_extracts_only_its_own_turn(user):
    # given two user statements in a row; the job is for the second
    session = conversation(user, "user: My favorite color is blue.", "user: Remember that my sister Ana lives in Porto")
    job = ExtractionJob.objects.get(session=session, kind="turn")

    # when the job runs (reading the turn before as context)
    turn_extract(job=job)

    # then only the second turn's memory is stored
    assert list(Memory.objects.values_list("content", flat=True)) == ["User's sister Ana lives in Porto"]


def test_a_turn_job_run_twice_changes_nothing_the_second_time(user):
    # given a turn job that has run
    session = conversation(user, "user: Remember that my sister Ana lives in Porto")
    job = ExtractionJob.objects.get(session=session, kind="turn")
    turn_extract(job=job)
    before = db_snapshot(user)

    # when it runs again
    stats = turn_extract(job=job)

    # then nothing changed and nothing is reported
    assert db_snapshot(user) == before
    assert (stats.added, stats.updated, stats.superseded, stats.reinforced, stats.forgotten) == ([], [], [], [], [])


def test_a_turn_job_for_a_missing_turn_is_skipped(user):
    # given a job over a turn that does not exist
    session = conversation(user, "user: hi")
    job = ExtractionJob.objects.create(owner=user, session=session, kind="turn", range_start=7, range_end=7)

    # when it runs
    stats = turn_extract(job=job)

    # then it says so and writes nothing
    assert stats.skipped == "turn not found"
    assert Memory.objects.count() == 0


def test_forget_in_a_turn_forgets_the_best_match_once(user):
    # given three memories
    jazz, classical, lisbon = (
        memory_write(owner=user, draft=MemoryDraft(content=text, category="preference"), actor="test").memory
        for text in ("User likes jazz", "User likes classical music", "User lives in Lisbon")
    )
    session = conversation(
        user, "user: Forget that I like jazz", "assistant: Done, forgotten.", "user: Thanks, bye for now."
    )
    job = ExtractionJob.objects.get(session=session, kind="turn", range_start=1)

    # when the turn job runs
    stats = turn_extract(job=job)

    # then jazz is forgotten with a forget event, and the others are untouched
    assert [m["id"] for m in stats.forgotten] == [str(jazz.pk)]
    jazz.refresh_from_db()
    assert jazz.status == "forgotten"
    assert event_types(jazz) == ["add", "forget"]
    forget = MemoryEvent.objects.get(memory=jazz, event_type="forget")
    assert (forget.actor, forget.session_id) == ("system:extraction", session.pk)
    for other in (classical, lisbon):
        other.refresh_from_db()
        assert (other.status, event_types(other)) == ("active", ["add"])
    # and search never returns it
    found = memory_search(owner=user, query="jazz", top_k=10)["results"]
    assert str(jazz.pk) not in {r["id"] for r in found}

    # and when the session ends, re-reading that turn forgets nothing more
    end_stats = end_and_consolidate(session)
    assert end_stats.forgotten == []
    assert sorted(Memory.objects.values_list("content", "status")) == [
        ("User likes classical music", "active"),
        ("User likes jazz", "forgotten"),
        ("User lives in Lisbon", "active"),
    ]
    assert MemoryEvent.objects.filter(event_type="forget").count() == 1


@pytest.mark.django_db(transaction=True)
def test_remember_through_the_api_is_stored_before_the_session_ends(api, user):
    # given an open session
    session_id = api.post("/api/v1/sessions/", {}, format="json").json()["id"]

    # when the user's turn asks to remember something
    response = api.post(
        f"/api/v1/sessions/{session_id}/turns/",
        {"role": "user", "content": "Remember that my sister Ana lives in Porto"},
        format="json",
    )

    # then the memory exists as soon as the turn is stored (the job ran after commit)
    assert response.status_code == 201
    memory = Memory.objects.get(owner=user)
    assert (memory.content, memory.source, memory.strength) == (
        "User's sister Ana lives in Porto",
        "user_explicit",
        0.9,
    )
    job = ExtractionJob.objects.get(session_id=session_id, kind="turn")
    assert (job.status, job.result["added"]) == ("done", 1)

    # and ending the session (two more turns) neither duplicates nor reinforces it
    api.post(
        f"/api/v1/sessions/{session_id}/turns/",
        {"turns": [{"role": "assistant", "content": "Noted."}, {"role": "user", "content": "Thanks!"}]},
        format="json",
    )
    assert api.post(f"/api/v1/sessions/{session_id}/end/").status_code == 202
    end_job = ExtractionJob.objects.get(session_id=session_id, kind="session_end")
    assert end_job.status == "done"
    assert (end_job.result["added"], end_job.result["reinforced"]) == (0, 0)
    memory.refresh_from_db()
    assert (memory.strength, memory.hit_count) == (0.9, 0)
    assert Memory.objects.filter(owner=user).count() == 1
