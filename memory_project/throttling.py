"""Rate limits for the REST API (DRF throttles), kept cheap and generous (issue 12).

- Per API key: API_KEY_THROTTLE_RATE (default 60000/min, far above what honest heavy use on one key
  reaches; it stops runaway clients, not load tests).
- Failed authentication per client address: API_AUTH_FAILURE_RATE (default 20/min). A client that
  keeps presenting wrong keys gets 429 for the rest of the window, its valid keys included, so keys
  cannot be guessed at speed.
- THROTTLE_ENABLED=0 lifts both (benches, fuzzing); the dashboard's login lockout (django-axes) has
  its own switch, LOGIN_LOCKOUT_ENABLED.

DRF's SimpleRateThrottle keeps every request time of the window in a cached list and rewrites it on
each request, so a high limit costs a large read and write per call; these count requests in fixed
windows with one atomic increment instead.
"""

import logging
import time

from django.conf import settings
from django.core.cache import caches
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

logger = logging.getLogger(__name__)


def client_address(request) -> str:
    """The client's address as the server (or memory_project.proxies behind a trusted proxy) saw it.

    Never X-Forwarded-For as sent: a client could name any address and escape its limit.
    """
    meta = getattr(request, "META", request)
    return meta.get("REMOTE_ADDR") or "unknown"


def login_client_address(request) -> str | None:
    """The same address for django-axes' login lockout (None when a request has none, as in tests)."""
    meta = getattr(request, "META", None) or {}
    return meta.get("REMOTE_ADDR") or None


class _FixedWindow:
    """`limit` events per `period` seconds per key, counted in the throttle cache."""

    def __init__(self, scope: str, rate: str):
        self.scope = scope
        self.limit, self.period = SimpleRateThrottle.parse_rate(None, rate)

    def _key(self, ident: str, now: float) -> tuple[str, float]:
        window = int(now // self.period)
        return f"throttle:{self.scope}:{ident}:{window}", (window + 1) * self.period - now

    def count(self, ident: str, *, add: int = 0) -> tuple[int, float]:
        key, remaining = self._key(ident, time.time())
        try:
            return self._count(key, remaining, add)
        except Exception:
            # Redis down (a broker outage): limits fail open rather than fail every request.
            logger.warning("rate-limit counters unavailable; not limiting", exc_info=True)
            return 0, remaining

    def _count(self, key: str, remaining: float, add: int) -> tuple[int, float]:
        cache = caches[settings.THROTTLE_CACHE]
        if add:
            if cache.add(key, add, timeout=int(self.period) + 1):
                return add, remaining
            try:
                return cache.incr(key, add), remaining
            except ValueError:  # expired between add and incr
                cache.set(key, add, timeout=int(self.period) + 1)
                return add, remaining
        return cache.get(key, 0), remaining


class ApiKeyRateThrottle(BaseThrottle):
    """Requests per API key (or per dashboard user on session-authenticated API calls)."""

    def allow_request(self, request, view):
        if not settings.THROTTLE_ENABLED or not request.user or not request.user.is_authenticated:
            return True
        key = request.auth
        ident = f"key:{key.pk}" if hasattr(key, "prefix") else f"user:{request.user.pk}"
        window = _FixedWindow("api_key", settings.API_KEY_THROTTLE_RATE)
        count, self._wait = window.count(ident, add=1)
        return count <= window.limit

    def wait(self):
        return getattr(self, "_wait", None)


def auth_failure_wait(request) -> float | None:
    """Seconds this client must wait before presenting a key again, or None when it may."""
    if not settings.THROTTLE_ENABLED:
        return None
    window = _FixedWindow("auth_failure", settings.API_AUTH_FAILURE_RATE)
    count, remaining = window.count(client_address(request))
    return remaining if count >= window.limit else None


def auth_failure_record(request) -> None:
    if settings.THROTTLE_ENABLED:
        _FixedWindow("auth_failure", settings.API_AUTH_FAILURE_RATE).count(client_address(request), add=1)
