"""BM25 collection statistics: counted per owner and corpus, read by search, refreshed off the query path."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import LexemeFrequency, SearchCorpus, SearchStats
from memories.services.search_stats import search_stats_refresh
from memory_project.background import background_drain
from tests.factories import ChatSessionFactory, ConversationTurnFactory, MemoryFactory

pytestmark = pytest.mark.usefixtures("fresh_stats_requests")


def _frequencies(owner, corpus=SearchCorpus.MEMORY) -> dict[str, int]:
    rows = LexemeFrequency.objects.filter(owner=owner, corpus=corpus).values_list("lexeme", "documents")
    return dict(rows)


def _search(api, query: str) -> list[dict]:
    response = api.post("/api/v1/search/", {"query": query, "top_k": 10}, format="json")
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_refresh_counts_documents_lengths_and_lexemes_of_that_owner_only(user, other_user):
    # given three memories of the user and one of another owner sharing a word
    MemoryFactory(owner=user, content="green tea mornings")
    MemoryFactory(owner=user, content="green coffee")
    MemoryFactory(owner=user, content="tea", status="forgotten")
    MemoryFactory(owner=other_user, content="green green zebra")

    # when the user's memory statistics are refreshed
    assert search_stats_refresh(owner_id=user.pk, corpus=SearchCorpus.MEMORY) is True

    # then every row of the user counts (search filters by status itself), nobody else's
    stats = SearchStats.objects.get(owner=user, corpus=SearchCorpus.MEMORY)
    assert stats.documents == 3
    assert stats.average_length == pytest.approx(2.0)
    assert _frequencies(user) == {"green": 2, "tea": 2, "morn": 1, "coffe": 1}
    assert not SearchStats.objects.filter(owner=other_user).exists()
    assert _frequencies(other_user) == {}


def test_refresh_replaces_the_previous_figures(user):
    # given statistics counted over one memory
    MemoryFactory(owner=user, content="kayak river")
    search_stats_refresh(owner_id=user.pk, corpus=SearchCorpus.MEMORY)

    # when another memory is written and the statistics refreshed again
    MemoryFactory(owner=user, content="river delta")
    search_stats_refresh(owner_id=user.pk, corpus=SearchCorpus.MEMORY)

    # then the figures are those of both memories, in one row per lexeme
    assert _frequencies(user) == {"kayak": 1, "river": 2, "delta": 1}
    assert SearchStats.objects.filter(owner=user).count() == 1
    assert SearchStats.objects.get(owner=user).documents == 2


def test_refresh_of_turns_counts_turns(user):
    # given two turns of the user
    session = ChatSessionFactory(owner=user)
    ConversationTurnFactory(session=session, content="The ferry leaves at noon")
    ConversationTurnFactory(session=session, content="Noon is too early")

    # when the turn statistics are refreshed
    search_stats_refresh(owner_id=user.pk, corpus=SearchCorpus.TURN)

    # then the turns are counted, and the memory corpus is untouched
    assert _frequencies(user, SearchCorpus.TURN) == {"ferri": 1, "leav": 1, "noon": 2, "earli": 1}
    assert SearchStats.objects.get(owner=user, corpus=SearchCorpus.TURN).documents == 2
    assert not SearchStats.objects.filter(owner=user, corpus=SearchCorpus.MEMORY).exists()


def test_refresh_with_a_max_age_skips_fresh_figures(user):
    # given statistics refreshed a moment ago
    MemoryFactory(owner=user, content="violin lessons")
    search_stats_refresh(owner_id=user.pk, corpus=SearchCorpus.MEMORY)
    before = SearchStats.objects.get(owner=user)
    MemoryFactory(owner=user, content="violin concert")

    # when a refresh that only wants figures older than a minute runs
    refreshed = search_stats_refresh(owner_id=user.pk, corpus=SearchCorpus.MEMORY, max_age_seconds=60)

    # then nothing changed
    assert refreshed is False
    after = SearchStats.objects.get(owner=user)
    assert (after.documents, after.refreshed_at) == (1, before.refreshed_at)
    assert _frequencies(user) == {"violin": 1, "lesson": 1}


def test_search_over_a_large_collection_matches_the_rarest_words_within_the_budget(api, user, settings):
    # given a collection larger than the match budget, with stored statistics
    settings.MEMORY_RETRIEVAL = {**settings.MEMORY_RETRIEVAL, "LEXICAL_MATCH_BUDGET": 3}
    common = [MemoryFactory(owner=user, content=f"apple orchard visit {n}") for n in range(4)]
    rare = MemoryFactory(owner=user, content="apple zebra crossing")
    search_stats_refresh(owner_id=user.pk, corpus=SearchCorpus.MEMORY)
    assert _frequencies(user)["appl"] == 5 and _frequencies(user)["zebra"] == 1

    # when the query names the rare word and the common one
    results = _search(api, "apple zebra")

    # then only the rare word is matched lexically (apple alone would exceed the budget)...
    lexical = {r["id"]: r["scores"]["lexical_rank"] for r in results}
    assert lexical[str(rare.pk)] == 1
    assert all(lexical.get(str(m.pk)) is None for m in common)
    # ...and the memory with the rare word comes first
    assert results[0]["id"] == str(rare.pk)


# The refresh runs on its own connection, so the scene must be committed.
@pytest.mark.django_db(transaction=True)
def test_search_without_statistics_on_a_large_collection_asks_for_them(api, user, settings):
    # given a collection larger than the match budget and no statistics yet
    settings.MEMORY_RETRIEVAL = {**settings.MEMORY_RETRIEVAL, "LEXICAL_MATCH_BUDGET": 2}
    for content in ("kiwi smoothie", "kiwi tart", "mango lassi"):
        MemoryFactory(owner=user, content=content)

    # when the user searches
    results = _search(api, "kiwi mango")

    # then the search is answered (counting the words itself) and the statistics arrive off its path
    assert len(results) == 3
    background_drain()
    assert SearchStats.objects.get(owner=user, corpus=SearchCorpus.MEMORY).documents == 3
    assert _frequencies(user) == {"kiwi": 2, "smoothi": 1, "tart": 1, "mango": 1, "lassi": 1}


# The refresh runs on its own connection, so the scene must be committed.
@pytest.mark.django_db(transaction=True)
def test_search_over_a_small_collection_asks_for_nothing(api, user):
    # given a collection within the match budget
    MemoryFactory(owner=user, content="plum jam")

    # when the user searches
    _search(api, "plum")
    background_drain()

    # then no statistics are stored (counting is cheap at this size)
    assert not SearchStats.objects.filter(owner=user).exists()


# The refresh runs on its own connection, so the scene must be committed.
@pytest.mark.django_db(transaction=True)
def test_stale_statistics_are_used_and_refreshed(api, user, settings):
    # given statistics older than the configured age, on a large collection
    settings.MEMORY_RETRIEVAL = {**settings.MEMORY_RETRIEVAL, "LEXICAL_MATCH_BUDGET": 1, "STATS_MAX_AGE_SECONDS": 60}
    MemoryFactory(owner=user, content="pear cider")
    MemoryFactory(owner=user, content="pear tart")
    search_stats_refresh(owner_id=user.pk, corpus=SearchCorpus.MEMORY)
    SearchStats.objects.filter(owner=user).update(refreshed_at=timezone.now() - timedelta(minutes=5))
    MemoryFactory(owner=user, content="pear brandy")

    # when the user searches
    _search(api, "pear cider")

    # then a refresh ran off the query path and counted the new memory
    background_drain()
    stats = SearchStats.objects.get(owner=user, corpus=SearchCorpus.MEMORY)
    assert stats.documents == 3
    assert timezone.now() - stats.refreshed_at < timedelta(minutes=1)
    assert _frequencies(user)["pear"] == 3
