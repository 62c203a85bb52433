"""The BM25 statement on worker threads' own connections, beside the vector statement."""

import time

import pytest
from django.db import connection

from memories.selectors.retrieval import memory_search
from tests.memories.selectors.search.scene import pottery_owner
from tests.support import in_forked_child

pytestmark = pytest.mark.django_db(transaction=True)


def _other_backends_whose_last_statement_scored_bm25() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND query LIKE %s",
            ["%memories_searchposting%"],
        )
        return cursor.fetchone()[0]


def _ranking(response: dict) -> list[tuple]:
    return [(r["type"], r["id"], r["score"], r["scores"]["lexical_rank"]) for r in response["results"]]


def test_bm25_runs_on_a_worker_connection_and_ranks_exactly_as_on_one_connection(settings):
    # given an owner's memories and turns, committed
    owner = pottery_owner()

    # when the same search runs with the BM25 worker threads, then without them
    parallel = memory_search(owner=owner, query="pottery studio street", scope="all")
    assert _other_backends_whose_last_statement_scored_bm25() == 2
    settings.MEMORY_RETRIEVAL = {**settings.MEMORY_RETRIEVAL, "PARALLEL_WORKERS": 0}
    sequential = memory_search(owner=owner, query="pottery studio street", scope="all")

    # then two workers' connections scored the words (memories and turns, side by side) and both
    # rankings are the same, word matches included (the reply to the question right after it)
    assert _ranking(parallel) == _ranking(sequential)
    assert [r["content"] for r in parallel["results"][:3]] == [
        "Where is the pottery studio again?",
        "On Elm street, next to the bakery",
        "Pottery studio is on Elm street",
    ]
    assert sum(1 for r in parallel["results"] if r["scores"]["lexical_rank"]) == 4


def test_a_forked_child_searches_with_bm25_workers_of_its_own():
    # given a parent process whose two BM25 workers have run (memories and turns), and have been
    # handed back (their callbacks run just after the search has its results)
    owner = pottery_owner()
    memory_search(owner=owner, query="pottery", scope="all")
    time.sleep(0.2)

    def search() -> int:
        found = memory_search(owner=owner, query="pottery studio", scope="all")
        return 0 if found["results"][0]["scores"]["lexical_rank"] == 1 else 2

    # when it forks (as a prefork Celery worker does) and the child searches
    code = in_forked_child(search)

    # then the child's search finished, word matches included
    assert code == 0
