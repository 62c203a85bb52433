"""BM25 collection figures: stored per owner, or counted at query time."""

import pytest

from memories.models import SearchCorpus
from memories.selectors.retrieval import memory_search
from memories.services.search_stats import search_stats_refresh
from tests.memories.selectors.search.scene import pottery_owner

pytestmark = pytest.mark.django_db(transaction=True)


def test_stored_statistics_give_the_same_bm25_as_counting_when_nothing_changed_since():
    # given an owner's memories, searched before any statistics were stored (frequencies counted)
    owner = pottery_owner()
    counted = memory_search(owner=owner, query="pottery studio on elm street")

    # when the statistics are stored and the same search runs again (frequencies read from them)
    search_stats_refresh(owner_id=owner.pk, corpus=SearchCorpus.MEMORY)
    stored = memory_search(owner=owner, query="pottery studio on elm street")

    # then the word scores and the ranking are the same
    assert [(r["id"], r["scores"]["bm25"], r["score"]) for r in stored["results"]] == [
        (r["id"], r["scores"]["bm25"], r["score"]) for r in counted["results"]
    ]
    assert [r["scores"]["lexical_rank"] for r in stored["results"]] == [1, 2, None]
