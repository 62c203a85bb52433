"""BM25 collection statistics per owner: document count, average length and lexeme frequencies.

Search reads them instead of counting at query time (a count probe per query word cost ~50 ms
over 100,000 memories). They are refreshed off the query path, when missing or older than
MEMORY_RETRIEVAL["STATS_MAX_AGE_SECONDS"]; BM25 only needs approximate collection statistics,
so a search meanwhile uses the previous figures.
"""

import time
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memories.models import SearchCorpus, SearchStats
from memories.selectors.search.collection import TABLES, corpus_size
from memory_project.background import background_send

# Per process: when a refresh was last asked for, so a burst of searches asks once.
_requested: dict[tuple[int, str], float] = {}


def search_stats_requests_forget(*, owner_id: int) -> None:
    """Forget this process's refresh requests of an owner (erased: a new one starts from nothing)."""
    for key in [k for k in _requested if k[0] == owner_id]:
        _requested.pop(key, None)


def search_stats_refresh(*, owner_id: int, corpus: str, max_age_seconds: float | None = None) -> bool:
    """Recount the owner's statistics for one corpus in one transaction; False when skipped.

    Skipped when another refresh of the same owner and corpus holds the lock, or when the stored
    figures are younger than `max_age_seconds` (a second task for the same request does nothing).
    """
    table = TABLES[SearchCorpus(corpus)]
    owner_id = int(owner_id)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(hashtext('search-stats:' || %s), %s)", [corpus, owner_id])
        if not cursor.fetchone()[0]:
            return False
        if max_age_seconds is not None:
            fresh_since = timezone.now() - timedelta(seconds=max_age_seconds)
            if SearchStats.objects.filter(owner_id=owner_id, corpus=corpus, refreshed_at__gt=fresh_since).exists():
                return False
        documents, average_length = corpus_size(cursor, corpus=corpus, owner_id=owner_id)
        cursor.execute("DELETE FROM memories_lexemefrequency WHERE owner_id = %s AND corpus = %s", [owner_id, corpus])
        # ts_stat takes its document query as text; owner_id is an int, so the literal is safe.
        cursor.execute(
            "INSERT INTO memories_lexemefrequency (owner_id, corpus, lexeme, documents) "
            "SELECT %s, %s, word, ndoc FROM ts_stat(%s)",
            [owner_id, corpus, f"SELECT search_vector FROM {table} WHERE owner_id = {owner_id}"],
        )
        SearchStats.objects.update_or_create(
            owner_id=owner_id,
            corpus=corpus,
            defaults={
                "documents": documents,
                "average_length": average_length,
                "refreshed_at": timezone.now(),
            },
        )
    return True


def search_stats_request(*, owner_id: int, corpus: str) -> None:
    """Ask for a refresh off the query path, at most once per STATS_MAX_AGE_SECONDS per process."""
    # memories.tasks imports this module: the task is imported when a refresh is asked for.
    from memories.tasks import search_stats_refresh_task

    max_age = settings.MEMORY_RETRIEVAL["STATS_MAX_AGE_SECONDS"]
    key = (int(owner_id), str(corpus))
    now = time.monotonic()
    if now - _requested.get(key, -max_age) < max_age:
        return
    _requested[key] = now
    background_send(search_stats_refresh_task, int(owner_id), str(corpus), max_age)
