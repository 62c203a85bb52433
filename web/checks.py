from django.conf import settings
from django.core.checks import Warning, register


@register()
def web_connection_budget(app_configs, **kwargs):
    """Each request thread borrows a pooled connection for its request, beside the connections
    search's BM25 threads and the background thread keep: a pool smaller than all of them makes
    requests wait for one, and answer 503 after DB_POOL_TIMEOUT."""
    if not settings.DB_POOL:
        return []
    kept = settings.MEMORY_RETRIEVAL["PARALLEL_WORKERS"] + 1
    if settings.WEB_THREADS + kept <= settings.DB_POOL_MAX_SIZE:
        return []
    return [
        Warning(
            f"WEB_THREADS ({settings.WEB_THREADS}) plus the {kept} connections kept by search's BM25 threads and "
            f"the background thread exceed DB_POOL_MAX_SIZE ({settings.DB_POOL_MAX_SIZE}).",
            hint="Lower WEB_THREADS or raise DB_POOL_MAX_SIZE.",
            id="web.W001",
        )
    ]
