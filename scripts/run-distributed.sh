#!/usr/bin/env bash
# Distributed mode on one machine: the web tier (`manage.py serve`: gunicorn with WEB_CONCURRENCY
# uvicorn worker processes), a Celery worker and Celery beat, sharing Redis and one database.
# Ctrl-C or SIGTERM stops them all, and the embedded PostgreSQL they shared.
#
#   REDIS_URL     broker and channel layer (default redis://127.0.0.1:6379/0)
#   DATABASE_URL  a PostgreSQL with pgvector; unset, the embedded one in .data/ is shared by all three
#   HOST, PORT    where the web tier listens (default 127.0.0.1:8000)
#   WORKER_CONCURRENCY  worker processes (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"
export HOST="${HOST:-127.0.0.1}" PORT="${PORT:-8000}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1

if ! "$BIN/python" -c 'import os, redis; redis.Redis.from_url(os.environ["REDIS_URL"], socket_connect_timeout=3).ping()' 2>/dev/null; then
  echo "Redis is not reachable at $REDIS_URL (start one, e.g. 'redis-server', or set REDIS_URL)" >&2
  exit 1
fi

# Once, before the worker and beat start: beat's scheduler tables must exist, and three processes
# migrating at once would race.
"$BIN/python" manage.py migrate --noinput

pids=()
stop_all() {
  trap - INT TERM EXIT
  if [ ${#pids[@]} -gt 0 ]; then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  fi
  # The embedded PostgreSQL stops with its last user, but a Celery pool child leaves without
  # unregistering: drop such dead users and stop it (nothing happens with DATABASE_URL set).
  "$BIN/python" -m memory_project.embedded_pg.stop || true
}
trap stop_all INT TERM EXIT

"$BIN/celery" -A memory_project worker -l INFO --concurrency="${WORKER_CONCURRENCY:-2}" -n "worker-$$@%h" &
pids+=($!)
"$BIN/celery" -A memory_project beat -l INFO --pidfile= --schedule "${MEMORY_DATA_DIR:-.data}/celerybeat-schedule" &
pids+=($!)
"$BIN/python" manage.py serve --host "$HOST" --port "$PORT" &
pids+=($!)

# One of them ending (a crash, or Ctrl-C) ends the others too.
set +e
wait -n "${pids[@]}"
status=$?
stop_all
exit "$status"
