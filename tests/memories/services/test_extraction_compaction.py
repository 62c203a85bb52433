"""Short-term compaction (seed 003 §4.2): past SESSION_MAX_MESSAGES or SESSION_SHORT_TERM_TOKENS, the
older half of the unsummarised turns folds into the rolling summary and is extracted right away."""

from memories.models import Memory, MemoryEvent
from memories.services.extraction import extraction_job_process, session_compact
from sessions.models import ChatSession, ConversationTurn, ExtractionJob
from sessions.services.sessions import session_create, turn_append_many
from tests.engine import end_and_consolidate, rows
from tests.support import db_snapshot

TURNS = [
    {"role": "user", "content": "I prefer tea in the morning."},
    {"role": "assistant", "content": "Tea in the morning, noted."},
    {"role": "user", "content": "I live in Berlin."},
    {"role": "assistant", "content": "Berlin is a fine city."},
    {"role": "user", "content": "My favorite color is blue."},
    {"role": "assistant", "content": "Blue, noted."},
    {"role": "user", "content": "I like jazz."},
    {"role": "assistant", "content": "Jazz it is."},
]


def _compaction_jobs(session) -> list[tuple[int, int]]:
    return list(
        ExtractionJob.objects.filter(session=session, kind="compaction")
        .order_by("range_start", "range_end")
        .values_list("range_start", "range_end")
    )


def test_no_compaction_within_the_limits(user, settings):
    # given limits of 8 messages and plenty of tokens
    settings.SESSION_MAX_MESSAGES = 8
    session = session_create(owner=user)

    # when 8 turns arrive
    turn_append_many(session=session, turns=TURNS)

    # then nothing is compacted
    assert _compaction_jobs(session) == []


def test_past_the_message_limit_the_older_half_is_compacted(user, settings):
    # given a limit of 6 messages
    settings.SESSION_MAX_MESSAGES = 6
    session = session_create(owner=user)

    # when 8 turns arrive
    turn_append_many(session=session, turns=TURNS)

    # then one compaction job covers the older half, turns 1 to 4
    assert _compaction_jobs(session) == [(1, 4)]

    # and when the job runs
    job = ExtractionJob.objects.get(session=session, kind="compaction")
    extraction_job_process(job=job)

    # then the older half is in the rolling summary and its memories are stored from those turns
    session.refresh_from_db()
    assert session.summarized_through == 4
    assert "tea in the morning" in session.rolling_summary.lower()
    assert "jazz" not in session.rolling_summary.lower()
    assert rows(user) == [
        ("User prefers tea in the morning", "preference", "active", 0.6, 0),
        ("User lives in Berlin", "fact", "active", 0.8, 0),
    ]
    berlin = Memory.objects.get(content="User lives in Berlin")
    assert list(berlin.sources.values_list("turn__sequence", flat=True)) == [3]
    job.refresh_from_db()
    assert (job.status, job.result["added"], job.result["skipped"]) == ("done", 2, "")


def test_the_token_limit_triggers_compaction_too(user, settings):
    # given a generous message limit but a small short-term token budget
    settings.SESSION_MAX_MESSAGES = 200
    settings.SESSION_SHORT_TERM_TOKENS = 200
    session = session_create(owner=user)
    long_turn = "I am describing my week in detail. " * 12  # about 100 tokens

    # when three long turns arrive
    turn_append_many(session=session, turns=[{"role": "user", "content": long_turn}] * 3)

    # then the first one is compacted
    assert _compaction_jobs(session) == [(1, 1)]


def test_further_turns_before_the_job_runs_do_not_queue_it_twice(user, settings):
    # given 8 turns past a limit of 6, not yet compacted
    settings.SESSION_MAX_MESSAGES = 6
    session = session_create(owner=user)
    turn_append_many(session=session, turns=TURNS)

    # when one more turn arrives (9 unsummarised: the older half is still turns 1 to 4)
    turn_append_many(session=session, turns=[{"role": "user", "content": "ok"}])

    # then there is still one compaction job
    assert _compaction_jobs(session) == [(1, 4)]


def test_compacting_twice_changes_nothing(user, settings):
    # given a compacted session
    settings.SESSION_MAX_MESSAGES = 6
    session = session_create(owner=user)
    turn_append_many(session=session, turns=TURNS)
    job = ExtractionJob.objects.get(session=session, kind="compaction")
    session_compact(job=job)
    before = db_snapshot(user)

    # when the same compaction runs again
    stats = session_compact(job=job)

    # then it is skipped and nothing changed
    assert stats.skipped == "already compacted"
    assert db_snapshot(user) == before


def test_session_end_after_compaction_does_not_repeat_the_compacted_memories(user, settings):
    # given a compacted session
    settings.SESSION_MAX_MESSAGES = 6
    session = session_create(owner=user)
    turn_append_many(session=session, turns=TURNS)
    session_compact(job=ExtractionJob.objects.get(session=session, kind="compaction"))
    compacted = {m.pk: (m.strength, m.hit_count) for m in Memory.objects.all()}
    events = MemoryEvent.objects.count()

    # when the session ends and is consolidated
    stats = end_and_consolidate(ChatSession.objects.get(pk=session.pk))

    # then only the newer half adds memories; the compacted ones are neither repeated nor reinforced
    assert [m["content"] for m in stats.added] == ["User's favorite color is blue", "User likes jazz"]
    assert stats.reinforced == []
    assert {m.pk: (m.strength, m.hit_count) for m in Memory.objects.filter(pk__in=compacted)} == compacted
    assert Memory.objects.count() == 4
    assert MemoryEvent.objects.count() == events + 2


def test_overlapping_compactions_summarise_each_turn_once(user, settings):
    # given two compaction jobs queued before either ran: turns 1–4, then 1–8 after more turns came
    settings.SESSION_MAX_MESSAGES = 6
    session = session_create(owner=user)
    turn_append_many(session=session, turns=TURNS)
    turn_append_many(session=session, turns=[{"role": "user", "content": f"Filler message {i}."} for i in range(8)])
    assert _compaction_jobs(session) == [(1, 4), (1, 8)]
    first, second = (ExtractionJob.objects.get(session=session, kind="compaction", range_end=end) for end in (4, 8))

    # when the smaller one runs first, then the larger one
    session_compact(job=first)
    after_first = ChatSession.objects.get(pk=session.pk).rolling_summary
    session_compact(job=second)

    # then the second only adds turns 5 to 8: nothing of turns 1 to 4 is summarised twice
    session.refresh_from_db()
    assert session.summarized_through == 8
    assert session.rolling_summary.startswith(after_first + "\n\n")
    added = session.rolling_summary[len(after_first) :].lower()
    assert "tea" not in added
    assert "berlin" not in added
    assert "jazz" in added


def test_compaction_leaves_the_row_counting_only_the_newer_turns(user, settings):
    # given 8 turns past a limit of 6, then 2 more before the job runs
    settings.SESSION_MAX_MESSAGES = 6
    session = session_create(owner=user)
    turn_append_many(session=session, turns=TURNS)
    turn_append_many(session=session, turns=[{"role": "user", "content": "ok"}] * 2)
    tokens = {t.sequence: t.token_count for t in ConversationTurn.objects.filter(session=session)}
    assert ChatSession.objects.get(pk=session.pk).unsummarized_tokens == sum(tokens.values())

    # when turns 1 to 4 are compacted (the job queued by the first post)
    session_compact(job=ExtractionJob.objects.get(session=session, kind="compaction", range_end=4))

    # then the row counts the tokens of turns 5 to 10 only
    session.refresh_from_db()
    assert (session.summarized_through, session.unsummarized_tokens) == (4, sum(tokens[n] for n in range(5, 11)))


def test_the_token_limit_counts_from_the_last_compaction(user, settings):
    # given a session whose first long turn was compacted under a 200-token budget
    settings.SESSION_SHORT_TERM_TOKENS = 200
    session = session_create(owner=user)
    long_turn = "I am describing my week in detail. " * 12  # about 100 tokens
    turn_append_many(session=session, turns=[{"role": "user", "content": long_turn}] * 3)
    session_compact(job=ExtractionJob.objects.get(session=session, kind="compaction"))

    # when one more long turn arrives (turns 2 to 4 unsummarised: about 300 tokens)
    turn_append_many(session=session, turns=[{"role": "user", "content": long_turn}])

    # then the older half of those is queued: turn 2 (3 turns // 2 = 1, after turn 1)
    assert _compaction_jobs(session) == [(1, 1), (2, 2)]
