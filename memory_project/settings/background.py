"""Background work (Celery, the periodic schedule) and live events (Channels)."""

from celery.schedules import crontab

from memory_project.env import env_float, env_int, env_str
from memory_project.settings.core import TIME_ZONE

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
# The sessions.tasks.extraction_jobs_sweep and turn_embeddings_sweep tasks live in memories.tasks
# under those names (already stored in beat's PeriodicTask rows).
CELERY_BEAT_SCHEDULE = {
    "extraction-jobs-sweep": {"task": "sessions.tasks.extraction_jobs_sweep", "schedule": PERIODIC_SWEEP_SECONDS},
    "sessions-idle-end": {"task": "sessions.tasks.sessions_idle_end", "schedule": PERIODIC_SWEEP_SECONDS},
    # Webhook deliveries and Telegram updates whose message was lost (broker down, worker killed).
    "integrations-sweep": {"task": "integrations.tasks.integrations_sweep", "schedule": PERIODIC_SWEEP_SECONDS},
    # Background imports whose message or worker was lost.
    "import-jobs-sweep": {"task": "memories.tasks.import_jobs_sweep", "schedule": PERIODIC_SWEEP_SECONDS},
    # Turns stored without a vector whose fill was lost (memories.services.turn_embeddings).
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
