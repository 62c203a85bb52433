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


def not_found(request, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse({"error": {"code": "not_found", "message": "Not found.", "details": None}}, status=404)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def server_error(request):
    if request.path.startswith("/api/"):
        return JsonResponse(
            {"error": {"code": "server_error", "message": "Internal error.", "details": None}}, status=500
        )
    from django.views.defaults import server_error as default

    return default(request)
