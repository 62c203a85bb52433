"""memory_search outside a transaction: the BM25 statement runs on a worker thread's own connection."""

import os
import signal
import time

import pytest
from django.db import connection, transaction

from memories.models import SearchCorpus
from memories.selectors.retrieval import memory_search
from memories.services.search_stats import search_stats_refresh
from tests.factories import ChatSessionFactory, ConversationTurnFactory, MemoryFactory, UserFactory

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


def _scene():
    owner = UserFactory(username="carol")
    MemoryFactory(owner=owner, content="Takes pottery classes on Thursdays", category="skill")
    MemoryFactory(owner=owner, content="Pottery studio is on Elm street", category="fact")
    MemoryFactory(owner=owner, content="Drinks espresso without sugar", category="preference")
    session = ChatSessionFactory(owner=owner)
    ConversationTurnFactory(session=session, sequence=1, content="Where is the pottery studio again?")
    ConversationTurnFactory(session=session, sequence=2, content="On Elm street, next to the bakery")
    return owner


def test_bm25_runs_on_a_worker_connection_and_ranks_exactly_as_on_one_connection(settings):
    # given an owner's memories and turns, committed
    owner = _scene()

    # when the same search runs with the BM25 worker threads, then without them
    parallel = memory_search(owner=owner, query="pottery studio street", scope="all", record_access=False)
    assert _other_backends_whose_last_statement_scored_bm25() == 2
    settings.MEMORY_RETRIEVAL = {**settings.MEMORY_RETRIEVAL, "PARALLEL_WORKERS": 0}
    sequential = memory_search(owner=owner, query="pottery studio street", scope="all", record_access=False)

    # then two workers' connections scored the words (memories and turns, side by side) and both
    # rankings are the same, word matches included
    assert _ranking(parallel) == _ranking(sequential)
    assert [r["content"] for r in parallel["results"][:2]] == [
        "Where is the pottery studio again?",
        "Pottery studio is on Elm street",
    ]
    assert sum(1 for r in parallel["results"] if r["scores"]["lexical_rank"]) == 4


def test_inside_a_transaction_the_search_sees_its_uncommitted_writes():
    # given a committed owner
    owner = UserFactory(username="dave")

    with transaction.atomic():
        # when a memory is written and searched for before the transaction commits
        MemoryFactory(owner=owner, content="Kayak rental opens at nine")
        found = memory_search(owner=owner, query="kayak rental", record_access=False)

        # then the search found it by its words (on the caller's connection, not a worker's)
        assert [r["content"] for r in found["results"]] == ["Kayak rental opens at nine"]
        assert found["results"][0]["scores"]["lexical_rank"] == 1


def test_stored_statistics_give_the_same_bm25_as_counting_when_nothing_changed_since():
    # given an owner's memories, searched before any statistics were stored (frequencies counted)
    owner = _scene()
    counted = memory_search(owner=owner, query="pottery studio on elm street", record_access=False)

    # when the statistics are stored and the same search runs again (frequencies read from them)
    search_stats_refresh(owner_id=owner.pk, corpus=SearchCorpus.MEMORY)
    stored = memory_search(owner=owner, query="pottery studio on elm street", record_access=False)

    # then the word scores and the ranking are the same
    assert [(r["id"], r["scores"]["bm25"], r["score"]) for r in stored["results"]] == [
        (r["id"], r["scores"]["bm25"], r["score"]) for r in counted["results"]
    ]
    assert [r["scores"]["lexical_rank"] for r in stored["results"]] == [1, 2, None]


def test_a_forked_child_searches_with_bm25_workers_of_its_own():
    # given a parent process whose two BM25 workers have run (memories and turns), and have been
    # handed back (their callbacks run just after the search has its results)
    owner = _scene()
    memory_search(owner=owner, query="pottery", scope="all", record_access=False)
    time.sleep(0.2)

    # when it forks (as a prefork Celery worker does) and the child searches
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            # The child opens its own connection; the parent's socket is left alone (kept, never
            # closed here), and a hang ends the child after 20 s.
            parent_connection = connection.connection  # noqa: F841
            connection.connection = None
            signal.alarm(20)
            found = memory_search(owner=owner, query="pottery studio", scope="all", record_access=False)
            code = 0 if found["results"][0]["scores"]["lexical_rank"] == 1 else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)

    # then the child's search finished, word matches included
    assert os.waitstatus_to_exitcode(status) == 0
