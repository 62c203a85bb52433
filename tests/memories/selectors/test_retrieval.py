"""memory_search: hybrid ranking over memories and turns, reading only."""

import pytest
from django.db import transaction

from memories.models import Memory
from memories.selectors.retrieval import memory_search
from memory_project.background import background_drain
from tests.factories import MemoryFactory, UserFactory
from tests.memories.selectors.search.scene import pottery_owner

pytestmark = pytest.mark.django_db(transaction=True)


def test_inside_a_transaction_the_search_sees_its_uncommitted_writes():
    # given a committed owner
    owner = UserFactory(username="dave")

    with transaction.atomic():
        # when a memory is written and searched for before the transaction commits
        MemoryFactory(owner=owner, content="Kayak rental opens at nine")
        found = memory_search(owner=owner, query="kayak rental")

        # then the search found it by its words (on the caller's connection, not a worker's)
        assert [r["content"] for r in found["results"]] == ["Kayak rental opens at nine"]
        assert found["results"][0]["scores"]["lexical_rank"] == 1


def test_a_search_records_nothing_and_names_the_statistics_it_wants(settings):
    # given an owner past the match budget without stored statistics
    settings.MEMORY_RETRIEVAL = {**settings.MEMORY_RETRIEVAL, "LEXICAL_MATCH_BUDGET": 2}
    owner = pottery_owner()

    # when the selector searches
    found = memory_search(owner=owner, query="pottery studio", scope="all")
    background_drain()

    # then it names the corpora whose statistics want a refresh, and counted no memory as used
    assert found["stale_corpora"] == ["memory"]
    assert len(found["results"]) == 5
    assert sorted(Memory.objects.filter(owner=owner).values_list("access_count", flat=True)) == [0, 0, 0]


def test_without_decay_the_score_is_relevance_and_importance_only():
    # given an archived, faded memory and an active one, equally relevant
    owner = UserFactory(username="erin")
    MemoryFactory(owner=owner, content="Kayak rental opens at nine", importance=0.9, strength=0.2, status="archived")
    MemoryFactory(owner=owner, content="Kayak rental closes at six", importance=0.3)

    # when the search ranks without decay
    found = memory_search(owner=owner, query="kayak rental", use_decay=False)

    # then the archived one wins on importance, each score being relevance and importance weighted
    assert [r["content"] for r in found["results"]] == ["Kayak rental opens at nine", "Kayak rental closes at six"]
    for result in found["results"]:
        scores = result["scores"]
        weighted = 0.6 * scores["relevance"] + 0.25 * scores["importance"]
        assert result["score"] == pytest.approx(weighted, abs=1e-6)
