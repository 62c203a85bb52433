# The two commands of the README: `make run` and `make test`. Both install what they need.
SHELL := /bin/bash
PY ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat requirements.txt requirements-dev.txt 2>/dev/null | sha1sum | cut -c1-12)
PORT ?= 8000
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: run test lint fmt bench install

install: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	rm -f $(VENV)/.installed-*
	touch $@

run: $(STAMP) frontend
	PORT=$(PORT) $(BIN)/python manage.py serve

test: $(STAMP) frontend
	bash scripts/test.sh

# Dashboard assets: `npm ci` when the lockfile changes, a rebuild when a source changes.
FRONTEND_STAMP := frontend/node_modules/.installed-$(shell cat frontend/package-lock.json 2>/dev/null | sha1sum | cut -c1-12)
FRONTEND_SOURCES := frontend/build.mjs frontend/package.json $(shell find frontend/src -type f 2>/dev/null)

.PHONY: frontend
frontend: frontend/dist/.built

$(FRONTEND_STAMP): frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	rm -f frontend/node_modules/.installed-*
	touch $@

frontend/dist/.built: $(FRONTEND_STAMP) $(FRONTEND_SOURCES)
	cd frontend && npm run build
	touch $@

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

fmt: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Web, a Celery worker and Celery beat as separate processes on Redis (REDIS_URL, default
# redis://127.0.0.1:6379/0) and the embedded or given (DATABASE_URL) database; Ctrl-C stops all.
.PHONY: run-distributed
run-distributed: $(STAMP)
	PORT=$(PORT) bash scripts/run-distributed.sh

bench: $(STAMP)
	$(BIN)/python bench/search_latency.py
