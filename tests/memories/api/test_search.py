"""POST /api/v1/search/ with the deterministic hashing embedder: words, scopes, shape, filters."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from memories.models import MemorySource
from memories.services.embeddings import embedding_get
from tests.factories import ChatSessionFactory, ConversationTurnFactory, MemoryFactory

RESULT_FIELDS = {"type", "id", "content", "score", "scores", "created_at", "session_id", "metadata", "source_turns"}
SCORE_FIELDS = {"relevance", "importance", "recency", "strength"}


def _search(api, **body) -> list[dict]:
    response = api.post("/api/v1/search/", body, format="json")
    assert response.status_code == 200, response.content
    payload = response.json()
    assert set(payload) >= {"results", "took_ms"}
    assert isinstance(payload["took_ms"], float)
    return payload["results"]


@pytest.fixture
def scene(user):
    """A session of turns and memories about different things, one memory tied to its turn."""
    session = ChatSessionFactory(owner=user, agent="")
    turns = {
        "pottery": ConversationTurnFactory(
            session=session,
            sequence=1,
            content="I signed up for a pottery class on Thursday evenings",
            metadata={"msg_id": 17, "tags": ["hobby", "陶艺"]},
        ),
        "budget": ConversationTurnFactory(
            session=session, sequence=2, content="The quarterly budget spreadsheet is due Friday"
        ),
        "garden": ConversationTurnFactory(session=session, sequence=3, content="Tomatoes are growing in the garden"),
    }
    memories = {
        "pottery": MemoryFactory(
            owner=user, content="Takes pottery classes on Thursdays", category="skill", source_session=session
        ),
        "coffee": MemoryFactory(owner=user, content="Drinks espresso without sugar", category="preference"),
        "rust": MemoryFactory(owner=user, content="Writes services in Rust", category="fact"),
    }
    MemorySource.objects.create(owner=user, memory=memories["pottery"], turn=turns["pottery"], position=0)
    return {"session": session, "turns": turns, "memories": memories}


def test_search_turns_finds_a_turn_by_its_words(api, scene):
    # when alice searches her turns for words of one of them
    results = _search(api, query="pottery class", scope="turns")

    # then that turn comes first, and only turns come back
    assert results[0]["id"] == str(scene["turns"]["pottery"].id)
    assert {r["type"] for r in results} == {"turn"}


def test_search_memories_scope_returns_only_memories(api, scene):
    # when alice searches her memories
    results = _search(api, query="espresso sugar", scope="memories")

    # then the matching memory comes first and no turn is returned
    assert results[0]["id"] == str(scene["memories"]["coffee"].id)
    assert {r["type"] for r in results} == {"memory"}


def test_default_scope_is_memories(api, scene):
    # when alice searches without a scope
    results = _search(api, query="pottery")

    # then only memories come back
    assert {r["type"] for r in results} == {"memory"}
    assert results[0]["id"] == str(scene["memories"]["pottery"].id)


def test_search_all_returns_memories_and_turns(api, scene):
    # when alice searches everything for a topic both a memory and a turn mention
    results = _search(api, query="pottery Thursday", scope="all", top_k=10)

    # then the turn about it comes first, then the turn right after it (a turn's neighbours are
    # lighter fields of its full text: a reply often holds the answer), then the memory about it,
    # above the turn two places away and the unrelated memories
    assert {r["type"] for r in results} == {"memory", "turn"}
    assert [r["id"] for r in results[:4]] == [
        str(scene["turns"]["pottery"].id),
        str(scene["turns"]["budget"].id),
        str(scene["memories"]["pottery"].id),
        str(scene["turns"]["garden"].id),
    ]


def test_result_shape_of_a_turn(api, scene):
    # when alice finds a turn
    turn = scene["turns"]["pottery"]
    result = _search(api, query="pottery class", scope="turns")[0]

    # then it carries the DESIGN §5 fields, its metadata exactly as sent, and no provenance
    assert set(result) >= RESULT_FIELDS
    assert result["type"] == "turn"
    assert result["id"] == str(turn.id)
    assert result["content"] == turn.content
    assert result["session_id"] == str(scene["session"].id)
    assert result["metadata"] == {"msg_id": 17, "tags": ["hobby", "陶艺"]}
    assert result["source_turns"] == []
    assert result["created_at"] == turn.created_at.isoformat().replace("+00:00", "Z")
    assert isinstance(result["score"], float)
    assert set(result["scores"]) >= SCORE_FIELDS


def test_result_shape_of_a_memory_with_its_source_turns(api, scene):
    # when alice finds a memory that came from a turn
    memory = scene["memories"]["pottery"]
    turn = scene["turns"]["pottery"]
    result = _search(api, query="pottery classes", scope="memories")[0]

    # then it carries the DESIGN §5 fields and its source turn with that turn's metadata
    assert set(result) >= RESULT_FIELDS
    assert result["type"] == "memory"
    assert result["id"] == str(memory.id)
    assert result["content"] == "Takes pottery classes on Thursdays"
    assert result["session_id"] == str(scene["session"].id)
    assert result["created_at"] == memory.created_at.isoformat().replace("+00:00", "Z")
    session_id = str(scene["session"].id)
    assert result["source_turns"] == [
        {"id": str(turn.id), "metadata": {"msg_id": 17, "tags": ["hobby", "陶艺"]}, "session_id": session_id}
    ]
    assert isinstance(result["metadata"], dict)
    assert set(result["scores"]) >= SCORE_FIELDS
    assert 0 < result["score"]


def test_results_are_sorted_by_score_and_limited_by_top_k(api, user):
    # given ten memories sharing a word
    for i in range(10):
        MemoryFactory(owner=user, content=f"kayak trip number {i}", importance=0.1 * (i % 5) + 0.1)

    # when alice asks for the top three
    results = _search(api, query="kayak", top_k=3)

    # then three come back, best first
    assert len(results) == 3
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)


def test_forgotten_memories_are_never_returned(api, user):
    # given a forgotten memory, and one deleted through the API, both matching the query
    forgotten = MemoryFactory(owner=user, content="Secret locker code is 4711", status="forgotten")
    deleted = MemoryFactory(owner=user, content="Locker code changed to 4711")
    api.delete(f"/api/v1/memories/{deleted.id}/")
    kept = MemoryFactory(owner=user, content="Gym locker is number 12")

    # when alice searches for them, in every scope
    for scope in ("memories", "all"):
        results = _search(api, query="locker code 4711", scope=scope, top_k=50)

        # then neither forgotten memory comes back
        ids = {r["id"] for r in results}
        assert str(forgotten.id) not in ids
        assert str(deleted.id) not in ids
        assert str(kept.id) in ids


def test_rejected_and_pending_memories_are_not_returned(api, user):
    # given a rejected and a pending-review memory matching the query
    rejected = MemoryFactory(owner=user, content="Volcano trip in Iceland", status="rejected")
    pending = MemoryFactory(owner=user, content="Volcano hike planned", status="pending_review")

    # when alice searches
    ids = {r["id"] for r in _search(api, query="volcano", top_k=50)}

    # then neither is returned
    assert str(rejected.id) not in ids
    assert str(pending.id) not in ids


def test_expired_memories_are_never_returned(api, user):
    # given an expired memory and a live one with the same words
    expired = MemoryFactory(
        owner=user, content="Parking spot B7 today", expires_at=timezone.now() - timedelta(minutes=1)
    )
    live = MemoryFactory(owner=user, content="Parking spot B7 tomorrow", expires_at=timezone.now() + timedelta(days=1))

    # when alice searches for them, with or without archived ones
    for include_archived in (True, False):
        results = _search(api, query="parking spot B7", top_k=50, include_archived=include_archived)

        # then only the live one comes back
        ids = [r["id"] for r in results]
        assert str(expired.id) not in ids
        assert str(live.id) in ids


def test_archived_is_found_but_ranked_below_an_otherwise_identical_active_one(api, user):
    # given an active and an archived memory with identical content, importance and time
    observed = datetime(2025, 1, 1, tzinfo=UTC)
    common = {"content": "Favourite mountain is Mont Blanc", "importance": 0.6, "observed_at": observed}
    archived = MemoryFactory(owner=user, status="archived", strength=0.15, **common)
    active = MemoryFactory(owner=user, status="active", strength=0.6, **common)

    # when alice searches for it
    results = _search(api, query="favourite mountain Mont Blanc", top_k=10)

    # then both come back, the active one first
    ids = [r["id"] for r in results]
    assert ids[:2] == [str(active.id), str(archived.id)]
    assert results[0]["score"] > results[1]["score"]


def test_archived_ranks_below_an_active_one_identical_in_everything_but_status(api, user):
    # given an active and an archived memory identical in content, importance, strength and time,
    # with ids chosen so that a plain tie-break on id would put the archived one first
    observed = datetime(2025, 1, 1, tzinfo=UTC)
    common = {"content": "Favourite lake is Lake Bled", "importance": 0.6, "strength": 0.6, "observed_at": observed}
    archived = MemoryFactory(owner=user, id="00000000-0000-4000-8000-000000000001", status="archived", **common)
    active = MemoryFactory(owner=user, id="ffffffff-ffff-4fff-bfff-ffffffffffff", status="active", **common)

    # when alice searches for it
    results = _search(api, query="favourite lake Bled", top_k=10)

    # then both come back, the archived one below the active one
    assert [r["id"] for r in results[:2]] == [str(active.id), str(archived.id)]


def test_include_archived_false_excludes_archived(api, user):
    # given an active and an archived memory about the same thing
    archived = MemoryFactory(owner=user, content="Old bike is a red Peugeot", status="archived", strength=0.15)
    active = MemoryFactory(owner=user, content="New bike is a blue Peugeot")

    # when alice searches without archived memories
    results = _search(api, query="Peugeot bike", include_archived=False, top_k=50)

    # then the archived one is left out
    ids = {r["id"] for r in results}
    assert str(archived.id) not in ids
    assert str(active.id) in ids


def test_category_filter_keeps_only_those_categories(api, user):
    # given memories about sushi in three categories
    pref = MemoryFactory(owner=user, content="Loves salmon sushi", category="preference")
    todo = MemoryFactory(owner=user, content="Book the sushi restaurant", category="todo")
    fact = MemoryFactory(owner=user, content="Sushi place closes at ten", category="fact")

    # when alice searches preferences and todos only
    results = _search(api, query="sushi", categories=["preference", "todo"], top_k=50)

    # then only those categories come back
    assert {r["id"] for r in results} == {str(pref.id), str(todo.id)}
    assert str(fact.id) not in {r["id"] for r in results}


def test_a_filter_reaches_a_lexical_match_ranked_below_a_whole_pool_of_others(api, user):
    # given more memories than a candidate pool whose words match the query better, all facts,
    # and one weaker match that is a preference
    for n in range(120):
        MemoryFactory(owner=user, content=f"Zanzibar zanzibar trip number {n}", category="fact")
    wanted = MemoryFactory(owner=user, content="Would like to see Zanzibar again, quietly", category="preference")

    # when alice searches preferences only
    results = _search(api, query="zanzibar", categories=["preference"], top_k=5)

    # then the preference is found, as the best lexical match among preferences
    assert [r["id"] for r in results] == [str(wanted.id)]
    assert results[0]["scores"]["lexical_rank"] == 1
    assert results[0]["scores"]["bm25"] > 0


def test_agent_filter(api, user):
    # given the same words in memories of two agents
    helper = MemoryFactory(owner=user, content="Helper knows the wifi password", agent="helper")
    default = MemoryFactory(owner=user, content="Default agent knows the wifi password", agent="")

    # when alice searches the helper's memories
    results = _search(api, query="wifi password", agent="helper", top_k=50)

    # then only the helper's come back
    assert [r["id"] for r in results] == [str(helper.id)]
    assert str(default.id) not in {r["id"] for r in results}


def test_a_small_owners_vector_candidates_are_the_exact_nearest_memories(api, user):
    # given thirty memories (an owner this small is searched exactly, not through the HNSW index)
    topics = ("sailing", "chess", "pottery", "jazz", "espresso", "kayak", "tomatoes", "rust", "budget", "dentist")
    memories = [MemoryFactory(owner=user, content=f"{t} note {n}") for t in topics for n in range(3)]

    # when alice searches for a phrase none of them contains
    results = _search(api, query="weekend plans with friends by the lake", top_k=30)

    # then every memory is a vector candidate, ranked by cosine similarity to the query, ties by id
    query = np.array(embedding_get(owner=user, text="weekend plans with friends by the lake"))
    similarity = {
        str(m.id): float(np.dot(query, m.embedding) / (np.linalg.norm(query) * np.linalg.norm(m.embedding)))
        for m in memories
    }
    by_rank = sorted(results, key=lambda r: r["scores"]["vector_rank"])
    assert [r["scores"]["vector_rank"] for r in by_rank] == list(range(1, 31))
    assert [r["id"] for r in by_rank] == sorted(similarity, key=lambda i: (-round(similarity[i], 6), i))
    assert [r["scores"]["similarity"] for r in by_rank] == pytest.approx(
        [similarity[r["id"]] for r in by_rank], abs=1e-6
    )


def _prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements ORDER BY prepare_time")
        return [row[0] for row in cursor.fetchall()]


def test_search_prepares_its_statements_once_and_answers_the_same_without_them(api, user, settings):
    # given memories, and a connection that has prepared nothing
    MemoryFactory(owner=user, content="Takes pottery classes on Thursdays", category="skill")
    MemoryFactory(owner=user, content="Drinks espresso without sugar", category="preference")
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    connection.connection._prepared.clear()

    # when alice searches twice with prepared statements, then once without
    first = _search(api, query="pottery on thursdays")
    prepared = _prepared_statements()
    second = _search(api, query="pottery on thursdays")
    settings.MEMORY_RETRIEVAL = {**settings.MEMORY_RETRIEVAL, "PREPARED_STATEMENTS": False}
    third = _search(api, query="pottery on thursdays")

    # then the first search prepared its statements (the API key's lookup, terms, corpus size,
    # vectors, BM25, sources), the second reused them, and all three answered the same
    assert "key_hash" in prepared[0]
    assert [("searchstats" in p, "count(*)" in p, "<=>" in p, "searchposting" in p) for p in prepared[1:5]] == [
        (True, False, False, False),
        (False, True, False, False),
        (False, False, True, False),
        (False, True, True, True),
    ]
    assert "memorysource" in prepared[5] and len(prepared) == 6
    assert _prepared_statements() == prepared
    assert [r["id"] for r in first] == [r["id"] for r in second] == [r["id"] for r in third]
    assert [r["score"] for r in first] == [r["score"] for r in second] == [r["score"] for r in third]
    assert len(first) == 2


def test_a_question_naming_a_speaker_lifts_that_speakers_turns(api, user):
    # given the same words said by two people, several times each
    session = ChatSessionFactory(owner=user)
    for n, speaker in enumerate(["Melanie", "Caroline", "Melanie", "Caroline"], 1):
        ConversationTurnFactory(session=session, sequence=n * 10, speaker=speaker, content="I went to a pottery class")

    # when alice asks about one of them by name
    results = _search(api, query="When did Caroline go to pottery?", scope="turns", top_k=4)

    # then that person's turns come first, each with the speaker boost, the other's with none
    assert [(r["speaker"], r["scores"]["speaker_boost"]) for r in results] == [
        ("Caroline", 0.15),
        ("Caroline", 0.15),
        ("Melanie", 0.0),
        ("Melanie", 0.0),
    ]


def test_search_with_no_match_returns_an_empty_list(api, user):
    # given no memory at all
    # when alice searches
    results = _search(api, query="anything at all", scope="all")

    # then the answer is an empty list
    assert results == []


SYNTAX_QUERIES = ["&|!():*", "'", "\\", "a & b | !c", "<->", "的", "the", "!!!", "a:*", "'; DROP TABLE x"]


@pytest.mark.parametrize("query", SYNTAX_QUERIES)
def test_search_with_query_syntax_characters_is_not_an_error(api, user, query):
    # given one memory
    MemoryFactory(owner=user, content="the cat sat on the mat")

    # when alice searches with characters that mean something to tsquery or SQL
    response = api.post("/api/v1/search/", {"query": query, "scope": "all"}, format="json")

    # then the search still answers
    assert response.status_code == 200
    assert isinstance(response.json()["results"], list)


def test_cjk_turn_is_found_by_cjk_words(api, user):
    # given a Chinese turn among others
    session = ChatSessionFactory(owner=user)
    target = ConversationTurnFactory(session=session, sequence=1, content="我下个月去北京出差")
    ConversationTurnFactory(session=session, sequence=2, content="今天天气很好")

    # when alice searches with words of it
    results = _search(api, query="北京出差", scope="turns")

    # then that turn comes first
    assert results[0]["id"] == str(target.id)
