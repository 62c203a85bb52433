"""Query-count budgets: list, detail, search and context endpoints must not grow with the data (no N+1).

Each test warms the endpoint up once (a key's last use is touched at most once a minute, embeddings
and corpus statistics are cached), measures it on a small data set, grows the data, and checks that
the count is the same and within the budget.
"""

from datetime import UTC, datetime

from django.db import connection
from django.test.utils import CaptureQueriesContext

from hotcache.services import hot_cache_invalidate
from memories.drafts import MemoryDraft
from memories.models import MemorySource
from memories.services.memories import memory_create, memory_update
from memory_project.background import background_process_attach
from sessions.models import Episode, Scratchpad
from tests.factories import ChatSessionFactory, ConversationTurnFactory, MemoryFactory


def _count(call) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = call()
    assert response.status_code == 200, response.content
    return len(captured.captured_queries)


def test_session_list_budget(api, user, django_assert_max_num_queries):
    # given two sessions, then twenty more
    for _ in range(2):
        ChatSessionFactory(owner=user)
    api.get("/api/v1/sessions/")
    small = _count(lambda: api.get("/api/v1/sessions/"))
    for _ in range(20):
        ChatSessionFactory(owner=user)

    # when the list is read
    with django_assert_max_num_queries(3):
        response = api.get("/api/v1/sessions/")

    # then the count did not grow with the rows
    assert response.json()["count"] == 22
    assert _count(lambda: api.get("/api/v1/sessions/")) == small


def test_turn_list_budget(api, user, django_assert_max_num_queries):
    # given a session with two turns, then forty more
    session = ChatSessionFactory(owner=user)
    for i in range(1, 3):
        ConversationTurnFactory(session=session, sequence=i)
    url = f"/api/v1/sessions/{session.id}/turns/"
    api.get(url)
    small = _count(lambda: api.get(url))
    for i in range(3, 43):
        ConversationTurnFactory(session=session, sequence=i)

    # when the turns are read
    with django_assert_max_num_queries(4):
        response = api.get(url)

    # then the count did not grow with the rows
    assert response.json()["count"] == 42
    assert _count(lambda: api.get(url)) == small


def test_memory_list_budget(api, user, django_assert_max_num_queries):
    # given two memories, then thirty more with sessions of their own
    for i in range(2):
        MemoryFactory(owner=user, content=f"memory {i}")
    api.get("/api/v1/memories/")
    small = _count(lambda: api.get("/api/v1/memories/"))
    for i in range(30):
        MemoryFactory(owner=user, content=f"more {i}", source_session=ChatSessionFactory(owner=user))

    # when the list is read
    with django_assert_max_num_queries(3):
        response = api.get("/api/v1/memories/")

    # then the count did not grow with the rows
    assert response.json()["count"] == 32
    assert _count(lambda: api.get("/api/v1/memories/")) == small


def test_memory_detail_budget_does_not_grow_with_source_turns(api, user, django_assert_max_num_queries):
    # given a memory with one source turn, then eleven more
    session = ChatSessionFactory(owner=user)
    memory = MemoryFactory(owner=user, content="Lives in Porto", source_session=session)
    turns = [ConversationTurnFactory(session=session, sequence=i) for i in range(1, 13)]
    MemorySource.objects.create(owner=user, memory=memory, turn=turns[0], position=0)
    url = f"/api/v1/memories/{memory.id}/"
    api.get(url)
    small = _count(lambda: api.get(url))
    for position, turn in enumerate(turns[1:], start=1):
        MemorySource.objects.create(owner=user, memory=memory, turn=turn, position=position)

    # when the detail is read
    with django_assert_max_num_queries(3):
        response = api.get(url)

    # then all twelve sources come back and the count did not grow
    assert len(response.json()["source_turns"]) == 12
    assert _count(lambda: api.get(url)) == small


def test_memory_history_budget(api, user, django_assert_max_num_queries):
    # given a memory with one event, then fifteen more
    memory = memory_create(owner=user, draft=MemoryDraft(content="Runs on Sundays"), actor="test")
    url = f"/api/v1/memories/{memory.id}/history/"
    api.get(url)
    small = _count(lambda: api.get(url))
    for i in range(15):
        memory = memory_update(memory=memory, actor="test", importance=round(0.05 * (i + 1), 2))

    # when the history is read
    with django_assert_max_num_queries(4):
        response = api.get(url)

    # then the count did not grow with the events
    assert response.json()["count"] == 16
    assert _count(lambda: api.get(url)) == small


def test_search_budget_does_not_grow_with_results(api, user, django_assert_max_num_queries):
    # given a few matching memories and turns, each memory with a source turn
    session = ChatSessionFactory(owner=user)
    body = {"query": "kayak trip", "scope": "all", "top_k": 100}

    def add(n: int, start: int):
        for i in range(start, start + n):
            turn = ConversationTurnFactory(session=session, sequence=i, content=f"kayak trip day {i}")
            memory = MemoryFactory(owner=user, content=f"kayak trip memory {i}", source_session=session)
            MemorySource.objects.create(owner=user, memory=memory, turn=turn, position=0)

    add(2, 1)
    api.post("/api/v1/search/", body, format="json")
    small = _count(lambda: api.post("/api/v1/search/", body, format="json"))
    add(30, 3)

    # when the search runs over many more results
    with django_assert_max_num_queries(12):
        response = api.post("/api/v1/search/", body, format="json")

    # then all results come back with their provenance, for the same number of queries
    results = response.json()["results"]
    assert len(results) == 64
    assert all(len(r["source_turns"]) == 1 for r in results if r["type"] == "memory")
    assert _count(lambda: api.post("/api/v1/search/", body, format="json")) == small


def test_cold_search_budget(api, user, django_assert_max_num_queries):
    # given memories and turns, and a query never embedded before
    session = ChatSessionFactory(owner=user)
    for i in range(1, 11):
        ConversationTurnFactory(session=session, sequence=i, content=f"canoe {i}")
        MemoryFactory(owner=user, content=f"canoe memory {i}")
    api.get("/api/v1/memories/")

    # when the search runs cold (embedding and corpus statistics computed)
    with django_assert_max_num_queries(16):
        response = api.post("/api/v1/search/", {"query": "canoe river", "scope": "all"}, format="json")

    # then it is served
    assert len(response.json()["results"]) == 10


def test_context_budget_does_not_grow_with_pinned_or_recalled_memories(api, user, django_assert_max_num_queries):
    # given a scratchpad and two strong memories, then twenty more strong and weak ones (the rows are
    # written directly, so the hot cache is told of the change as memory.changed would tell it)
    Scratchpad.objects.create(owner=user, current_focus="Trip planning")
    for i in range(2):
        MemoryFactory(owner=user, content=f"Likes hiking trail {i}", strength=0.9)
    url = "/api/v1/context/?query=hiking trail"
    api.get(url)
    hot_cache_invalidate(owner_id=user.pk)
    small = _count(lambda: api.get(url))
    cached = _count(lambda: api.get(url))
    for i in range(20):
        MemoryFactory(owner=user, content=f"Pinned hiking fact {i}", strength=0.9)
        MemoryFactory(owner=user, content=f"Weak hiking fact {i}", strength=0.3)
    hot_cache_invalidate(owner_id=user.pk)

    # when the context is built
    with django_assert_max_num_queries(12):
        response = api.get(url)

    # then it pins the maximum and recalls more, for the same number of queries
    kinds = [m["kind"] for m in response.json()["memories"]]
    assert kinds.count("pinned") == 20
    assert kinds.count("recalled") == 3
    hot_cache_invalidate(owner_id=user.pk)
    assert _count(lambda: api.get(url)) == small
    # and a context served from the hot cache costs fewer queries than one built from the tables
    assert cached < small


def test_episode_list_budget(api, user, django_assert_max_num_queries):
    # given twenty episodes
    for i in range(20):
        session = ChatSessionFactory(owner=user, status="ended")
        Episode.objects.create(
            owner=user,
            session=session,
            summary=f"episode {i}",
            started_at=datetime(2024, 1, 1, tzinfo=UTC),
            ended_at=datetime(2024, 1, 2, tzinfo=UTC),
        )
    api.get("/api/v1/episodes/")

    # when they are listed
    with django_assert_max_num_queries(3):
        response = api.get("/api/v1/episodes/")

    # then all are there
    assert response.json()["count"] == 20


def test_metrics_budget(api, user, django_assert_max_num_queries):
    # given memories, sessions and turns
    session = ChatSessionFactory(owner=user)
    for i in range(1, 21):
        MemoryFactory(owner=user, content=f"metric memory {i}")
        ConversationTurnFactory(session=session, sequence=i)
    api.get("/api/v1/metrics/")

    # when the metrics are read
    with django_assert_max_num_queries(9):
        response = api.get("/api/v1/metrics/")

    # then they count everything
    assert response.json()["memories"]["total"] == 20
    assert response.json()["turns"] == 20


def test_turn_post_budget(api, user, settings):
    # given an open session of a web worker attached to the background process (the job is only
    # stored), warmed up by one turn (the key's last use and the owner's event rules are cached);
    # the lag bound's check (one query a second at most) is off
    settings.BACKGROUND_MAX_LAG_SECONDS = 0
    background_process_attach()
    try:
        session = ChatSessionFactory(owner=user)
        reply = {"role": "assistant", "content": "Noted, thanks."}
        api.post(f"/api/v1/sessions/{session.id}/turns/", reply, format="json")
        statement = {"role": "user", "content": "Remember that my sister Lucia lives in Porto."}

        # when a reply and then a statement that queues an extraction are posted
        with CaptureQueriesContext(connection) as replied:
            first = api.post(f"/api/v1/sessions/{session.id}/turns/", reply, format="json")
        with CaptureQueriesContext(connection) as stated:
            second = api.post(f"/api/v1/sessions/{session.id}/turns/", statement, format="json")
    finally:
        background_process_attach(False)

    # then: the key, the session, the locked session, the insert and the session's counters (plus
    # the transaction's savepoint pair; the compaction check reads the locked row's counters); the
    # statement adds its job (one insert: its turn is new, so there is no job to look up first)
    assert (first.status_code, second.status_code) == (201, 201)
    assert len(replied.captured_queries) == 7
    assert len(stated.captured_queries) == 8
