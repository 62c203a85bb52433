"""The REST API: DRF, rate limits, login lockout, the OpenAPI schema, input limits."""

import re

from django.core.exceptions import ImproperlyConfigured

from memory_project.env import env_bool, env_float, env_int, env_str

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "memories.api.auth.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "memory_project.pagination.StandardPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "memory_project.api.schema.ServiceAutoSchema",
    "EXCEPTION_HANDLER": "memory_project.exceptions.api_exception_handler",
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "DEFAULT_THROTTLE_CLASSES": ["memory_project.throttling.ApiKeyRateThrottle"],
    # The client address is REMOTE_ADDR (set from a trusted proxy's X-Forwarded-For by
    # memory_project.proxies), never X-Forwarded-For as a client sent it.
    "NUM_PROXIES": 0,
}
# Rate limits (memory_project/throttling.py). The defaults stop guessing and runaway clients, not
# honest heavy use; THROTTLE_ENABLED=0 lifts them for benches and fuzzing.
THROTTLE_ENABLED = env_bool("THROTTLE_ENABLED", True)
API_KEY_THROTTLE_RATE = env_str("API_KEY_THROTTLE_RATE", "60000/min")
API_AUTH_FAILURE_RATE = env_str("API_AUTH_FAILURE_RATE", "20/min")
for _name, _rate in (
    ("API_KEY_THROTTLE_RATE", API_KEY_THROTTLE_RATE),
    ("API_AUTH_FAILURE_RATE", API_AUTH_FAILURE_RATE),
):
    if not re.fullmatch(r"[1-9]\d*/(s|sec|m|min|h|hour|d|day)", _rate):
        raise ImproperlyConfigured(f"{_name} must be a rate such as 100/min or 5/s, got {_rate!r}")
# Counters live in Redis when there is one (shared by every process), in the process otherwise.
THROTTLE_CACHE = "throttle"
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    THROTTLE_CACHE: (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": env_str("REDIS_URL"),
            # A request never waits long on a Redis that is down (the throttles then fail open).
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
        if env_str("REDIS_URL")
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "throttle"}
    ),
}

# Dashboard and admin login lockout (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords for one
# username from one address, that pair is locked out for LOGIN_LOCKOUT_MINUTES (429).
AXES_ENABLED = env_bool("LOGIN_LOCKOUT_ENABLED", True)
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10, minimum=1)
AXES_COOLOFF_TIME = env_float("LOGIN_LOCKOUT_MINUTES", 15, minimum=0.1) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "memory_project.throttling.login_client_address"
# Failed attempts are what a lockout needs; a row per successful login would only grow.
AXES_DISABLE_ACCESS_LOG = True
# No "AXES: BEGIN version …" banner in every command's and worker's output.
AXES_VERBOSE = False
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
SPECTACULAR_SETTINGS = {
    "TITLE": "Agent Memory Service API",
    "DESCRIPTION": "Long-term memory for LLM agents: sessions, turns, memories, hybrid search, context.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}

# Input limits (bad input is a 4xx with a reason, never a 500).
MAX_CONTENT_CHARS = env_int("MAX_CONTENT_CHARS", 32_000, minimum=100)
MAX_BULK_TURNS = env_int("MAX_BULK_TURNS", 1000, minimum=1)
MAX_TOP_K = env_int("MAX_TOP_K", 100, minimum=1)
MAX_PAGE_SIZE = 500
# Imports larger than this run as a background job with progress (the API answers 202 and the job
# to poll); smaller ones run in their request. About 100 JSONL entries, a few seconds of work.
MEMORY_IMPORT_SYNC_MAX_BYTES = env_int("MEMORY_IMPORT_SYNC_MAX_BYTES", 64 * 1024, minimum=0)
