from django.conf import settings
from django.db import connection
from django.http import JsonResponse


def healthz(request):
    return JsonResponse({"status": "ok"})


def readyz(request):
    checks = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
        checks["database"] = "ok" if row else "pgvector extension missing"
    except Exception as exc:
        checks["database"] = f"error: {exc.__class__.__name__}"
    if settings.REDIS_URL:
        try:
            import redis

            redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2).ping()
            checks["broker"] = "ok"
        except Exception as exc:
            checks["broker"] = f"error: {exc.__class__.__name__}"
    else:
        checks["broker"] = "in-process (embedded mode)"
    ready = all(v == "ok" or v.startswith("in-process") for v in checks.values())
    return JsonResponse({"status": "ready" if ready else "not ready", "checks": checks}, status=200 if ready else 503)


# Paths whose errors are JSON in the API's shape, whatever raised them (Django itself included).
JSON_PREFIXES = ("/api/", "/dashboard/api/")


def _json_error(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message, "details": None}}, status=status)


def wants_json(request) -> bool:
    return request.path.startswith(JSON_PREFIXES)


def not_found(request, exception=None):
    if wants_json(request):
        return _json_error(404, "not_found", "Not found.")
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def server_error(request):
    if wants_json(request):
        return _json_error(500, "server_error", "Internal error.")
    from django.views.defaults import server_error as default

    return default(request)


def bad_request(request, exception=None):
    if wants_json(request):
        return _json_error(400, "bad_request", "Bad request.")
    from django.views.defaults import bad_request as default

    return default(request, exception)


def permission_denied(request, exception=None):
    if wants_json(request):
        return _json_error(403, "permission_denied", "You do not have permission to do this.")
    from django.views.defaults import permission_denied as default

    return default(request, exception)


def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW: the dashboard's scripts get the API's JSON error, pages Django's page."""
    if wants_json(request):
        return _json_error(403, "csrf_failed", f"CSRF verification failed: {reason}".strip())
    from django.views.csrf import csrf_failure as default

    return default(request, reason=reason)
