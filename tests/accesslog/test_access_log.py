"""The per-query access log (seed 000 §5.2): which call returned which memories, at which rank."""

import time
from datetime import timedelta

import pytest
from django.core.checks import run_checks
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accesslog import services
from accesslog.models import QueryLog, QueryLogHit
from accesslog.services import access_log_apply, access_log_flush, access_log_prune, access_log_record
from memory_project.background import background_drain
from tests.dashboard.conftest import logged_in
from tests.factories import MemoryFactory


def _scene(user):
    return [
        MemoryFactory(owner=user, content="Drinks green tea every morning", strength=0.3),
        MemoryFactory(owner=user, content="Green tea gives her a headache after noon", strength=0.3),
        MemoryFactory(owner=user, content="Rides a red bike to work", strength=0.3),
    ]


def _log(api, **params) -> list[dict]:
    response = api.get("/api/v1/access-log/", params)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_a_search_is_logged_with_each_memory_at_its_rank(api, user):
    # given three memories
    _scene(user)

    # when alice searches
    found = api.post("/api/v1/search/", {"query": "green tea", "top_k": 3}, format="json").json()["results"]

    # then the log holds the call, and its memories in the order and with the scores of the answer
    (call,) = _log(api)
    assert (call["kind"], call["query"], call["agent"], call["results"]) == ("search", "green tea", None, len(found))
    assert call["memories"] == [
        {"memory_id": r["id"], "rank": rank, "score": r["score"]} for rank, r in enumerate(found, start=1)
    ]


def test_context_and_tool_calls_are_logged_too(api, user):
    # given a pinned memory and a weak one the query recalls
    pinned = MemoryFactory(owner=user, content="Lives in Lisbon", strength=0.9)
    recalled = MemoryFactory(owner=user, content="Drinks green tea every morning", strength=0.3)

    # when alice's agent asks for its context and runs the search tool
    block = api.get("/api/v1/context/", {"query": "green tea"}).json()
    tool = api.post("/api/v1/tools/search_memory/", {"query": "green tea"}, format="json").json()

    # then both calls are logged, newest first, with their memories in the order they were given
    tool_call, context_call = _log(api)
    assert (context_call["kind"], context_call["agent"]) == ("context", None)
    assert [(m["memory_id"], m["rank"]) for m in context_call["memories"]] == [
        (m["id"], rank) for rank, m in enumerate(block["memories"], start=1)
    ]
    assert {m["memory_id"] for m in context_call["memories"]} >= {str(pinned.pk)}
    assert (tool_call["kind"], tool_call["agent"]) == ("tool", "")
    assert [m["memory_id"] for m in tool_call["memories"]] == [r["id"] for r in tool["results"]]
    assert str(recalled.pk) in [m["memory_id"] for m in tool_call["memories"]]


def test_recording_runs_no_query_and_writes_in_batches(user, settings):
    # given batches of three calls
    settings.ACCESS_LOG_FLUSH_ENTRIES = 3
    settings.ACCESS_LOG_FLUSH_SECONDS = 3600
    memory = MemoryFactory(owner=user)
    result = [{"type": "memory", "id": str(memory.pk), "score": 0.5}]

    # when two calls are recorded
    with CaptureQueriesContext(connection) as queries:
        for _ in range(2):
            access_log_record(owner_id=user.pk, kind="search", query="q", agent=None, results=result)

    # then nothing was written nor queried on the query path
    assert len(queries) == 0
    assert QueryLog.objects.count() == 0

    # and the third call sends the batch of three at once
    access_log_record(owner_id=user.pk, kind="search", query="q", agent=None, results=result)
    assert services._buffer.pending() == []
    background_drain()


@pytest.mark.django_db(transaction=True)
def test_a_full_batch_is_written_off_the_query_path(user, settings):
    # given batches of two calls
    settings.ACCESS_LOG_FLUSH_ENTRIES = 2
    settings.ACCESS_LOG_FLUSH_SECONDS = 3600
    memory = MemoryFactory(owner=user)
    result = [{"type": "turn", "id": "x"}, {"type": "memory", "id": str(memory.pk), "score": 0.25}]

    # when two calls are recorded and the background has run
    for query in ("first", "second"):
        access_log_record(owner_id=user.pk, kind="search", query=query, agent="", results=result)
    background_drain()

    # then both are stored, the memory at rank 2 (behind a turn)
    assert sorted(QueryLog.objects.values_list("query", "results")) == [("first", 2), ("second", 2)]
    assert list(QueryLogHit.objects.values_list("memory_id", "rank", "score")) == [(memory.pk, 2, 0.25)] * 2


def test_a_batch_applied_twice_is_written_once(user):
    # given a batch of one call
    memory = MemoryFactory(owner=user)
    access_log_record(
        owner_id=user.pk, kind="search", query="q", agent=None, results=[{"id": str(memory.pk), "score": 1.0}]
    )

    entries = services._take()

    # when it is applied twice (a task retried)
    assert access_log_apply(entries=entries) == 1
    assert access_log_apply(entries=entries) == 0

    # then the call and its hit are there once
    assert (QueryLog.objects.count(), QueryLogHit.objects.count()) == (1, 1)


def test_another_owners_memory_and_deleted_memories_are_never_logged(user, other_user):
    # given a result naming one of bob's memories and one of alice's since deleted
    bobs = MemoryFactory(owner=other_user)
    gone = MemoryFactory(owner=user)
    mine = MemoryFactory(owner=user)
    results = [{"id": str(bobs.pk)}, {"id": str(gone.pk)}, {"id": str(mine.pk)}]
    access_log_record(owner_id=user.pk, kind="search", query="q", agent=None, results=results)
    gone.delete()

    # when the batch is written
    access_log_flush(inline=True)

    # then only alice's remaining memory is logged, at its rank
    assert list(QueryLogHit.objects.values_list("owner_id", "memory_id", "rank")) == [(user.pk, mine.pk, 3)]


def test_calls_answered_before_an_erasure_are_not_written_after_it(api, user):
    # given a call logged but not yet written, then alice's data erased
    memory = MemoryFactory(owner=user)
    results = [{"id": str(memory.pk)}]
    access_log_record(owner_id=user.pk, kind="search", query="q", agent=None, results=results)

    pending = services._buffer.pending()
    assert api.delete(f"/api/v1/data/?confirm={user.username}").status_code == 200

    # when that call reaches the database (from another process's batch, say)
    written = access_log_apply(entries=pending)

    # then nothing of it is written, and the erasure emptied this process's buffer
    assert written == 0
    assert QueryLog.objects.filter(owner=user).count() == 0
    assert services._buffer.pending() == []


def test_calls_older_than_the_retention_are_pruned(user, settings):
    # given calls logged 31 and 29 days ago, kept 30 days
    settings.ACCESS_LOG_RETENTION_DAYS = 30
    memory = MemoryFactory(owner=user)
    now = timezone.now()
    for days in (31, 29):
        access_log_record(
            owner_id=user.pk, kind="search", query=f"{days}", agent=None, results=[{"id": str(memory.pk)}]
        )

    entries = services._take()
    entries[0][6] = (now - timedelta(days=31)).isoformat()
    entries[1][6] = (now - timedelta(days=29)).isoformat()
    access_log_apply(entries=entries)

    # when the prune runs
    pruned = access_log_prune(now=now)

    # then the older call and its hit are gone, the newer kept
    assert pruned == 1
    assert list(QueryLog.objects.values_list("query", flat=True)) == ["29"]
    assert QueryLogHit.objects.count() == 1


def test_zero_days_records_nothing(api, user, settings):
    # given the log turned off
    settings.ACCESS_LOG_RETENTION_DAYS = 0
    _scene(user)

    # when alice searches
    api.post("/api/v1/search/", {"query": "green tea"}, format="json")

    # then nothing is logged
    assert _log(api) == []


def test_the_retention_setting_is_checked(settings):
    settings.ACCESS_LOG_RETENTION_DAYS = -1
    assert [e.id for e in run_checks() if e.id.startswith("accesslog")] == ["accesslog.E001"]
    settings.ACCESS_LOG_RETENTION_DAYS = 5000
    assert [e.id for e in run_checks() if e.id.startswith("accesslog")] == ["accesslog.W001"]
    settings.ACCESS_LOG_RETENTION_DAYS = 30
    assert [e.id for e in run_checks() if e.id.startswith("accesslog")] == []


def test_the_export_is_the_owners_only_and_filters_by_memory(api, other_api, user, other_user):
    # given two searches of alice, one finding the bike
    tea, _, bike = _scene(user)
    api.post("/api/v1/search/", {"query": "green tea", "top_k": 2}, format="json")
    api.post("/api/v1/search/", {"query": "red bike", "top_k": 1}, format="json")

    # when alice filters by her bike memory, and bob reads the log
    bikes = _log(api, memory_id=str(bike.pk))
    bobs = _log(other_api)
    bob_filtered = _log(other_api, memory_id=str(tea.pk))

    # then alice sees the one call, bob nothing of hers
    assert [c["query"] for c in bikes] == ["red bike"]
    assert (bobs, bob_filtered) == ([], [])
    # and a bad filter is a 400 naming it
    response = api.get("/api/v1/access-log/", {"kind": "nope"})
    assert response.status_code == 400 and "kind" in response.content.decode()


def test_a_time_filter_outside_the_storable_years_is_a_400_as_in_search(api, user):
    # given one logged search
    _scene(user)
    api.post("/api/v1/search/", {"query": "green tea", "top_k": 1}, format="json")

    # when the log, and search, are filtered from a time that is year 0 in UTC
    response = api.get("/api/v1/access-log/", {"since": "0001-01-01T00:00:00+14:00"})
    searched = api.post("/api/v1/search/", {"query": "tea", "since": "0001-01-01T00:00:00+14:00"}, format="json")

    # then both refuse it alike, and a filter in range still finds the call
    assert (response.status_code, searched.status_code) == (400, 400)
    assert response.json()["error"]["details"] == {"since": ["Datetime value out of range."]}
    assert searched.json()["error"]["details"] == response.json()["error"]["details"]
    assert [c["query"] for c in _log(api, since="2000-01-01T00:00:00Z")] == ["green tea"]


def test_the_memory_page_says_how_many_queries_saw_it(api, user):
    # given two searches returning alice's tea memory, the last ranking it first
    tea, _, _ = _scene(user)
    api.post("/api/v1/search/", {"query": "red bike", "top_k": 3}, format="json")
    api.post("/api/v1/search/", {"query": "drinks green tea every morning", "top_k": 3}, format="json")

    # when she opens its page in the dashboard
    page = logged_in(user).get(f"/memories/{tea.pk}/")

    # then it says it was seen by two queries, with the last one
    assert page.status_code == 200
    html = page.content.decode()
    last = QueryLog.objects.filter(owner=user).latest("at").at.astimezone(timezone.get_current_timezone())
    assert f"Seen by 2 queries, last: {last:%Y-%m-%d %H:%M} (search “drinks green tea every morning”, rank 1)" in html


def test_a_call_after_a_quiet_spell_waits_for_its_batch_and_the_export_reads_it(api, user):
    # given a process whose last batch left an hour ago
    _scene(user)
    services._buffer._since = time.monotonic() - 3600

    # when alice searches
    api.post("/api/v1/search/", {"query": "red bike", "top_k": 1}, format="json")

    # then the call waits in the buffer (not sent on its own), and the export writes it before reading
    assert len(services._buffer.pending()) == 1
    assert [c["query"] for c in _log(api)] == ["red bike"]
    assert services._buffer.pending() == []
