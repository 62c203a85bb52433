#!/usr/bin/env bash
# The whole suite: migration check, lint, then pytest on the embedded PostgreSQL + pgvector.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

bash scripts/install-system.sh

$BIN/python manage.py makemigrations --check --dry-run
$BIN/ruff check .
$BIN/ruff format --check .

set +e
$BIN/python -m pytest "$@"
status=$?
set -e
# pytest exits 5 when it collected no tests: that is a failure here, never a pass.
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests" >&2
  exit 1
fi
exit "$status"
