"""web.checks: the request threads and the connections kept beside them fit in the pool."""

from django.core.checks import Warning

from web.checks import web_connection_budget


def test_the_default_threads_fit_in_the_pool(settings):
    # given the shipped defaults: 8 request threads, 2 BM25 threads, a pool of 16
    settings.WEB_THREADS = 8
    settings.DB_POOL_MAX_SIZE = 16
    settings.MEMORY_RETRIEVAL = {**settings.MEMORY_RETRIEVAL, "PARALLEL_WORKERS": 2}

    # when the checks run, then nothing is said
    assert web_connection_budget(None) == []


def test_more_request_threads_than_the_pool_holds_is_a_warning(settings):
    # given 14 request threads, 2 BM25 threads and the background thread, for a pool of 16
    settings.WEB_THREADS = 14
    settings.DB_POOL_MAX_SIZE = 16
    settings.MEMORY_RETRIEVAL = {**settings.MEMORY_RETRIEVAL, "PARALLEL_WORKERS": 2}

    # when the checks run
    problems = web_connection_budget(None)

    # then one warning names the three figures and what to change
    assert problems == [
        Warning(
            "WEB_THREADS (14) plus the 3 connections kept by search's BM25 threads and the background thread "
            "exceed DB_POOL_MAX_SIZE (16).",
            hint="Lower WEB_THREADS or raise DB_POOL_MAX_SIZE.",
            id="web.W001",
        )
    ]


def test_without_a_pool_there_is_no_budget(settings):
    # given connections opened per request (DB_POOL=0)
    settings.DB_POOL = False
    settings.WEB_THREADS = 64
    settings.DB_POOL_MAX_SIZE = 16

    # when the checks run, then nothing is said
    assert web_connection_budget(None) == []
