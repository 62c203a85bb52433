"""The OpenAPI schema against the running service: schemathesis with every response-conformance check.

Starts the service (`manage.py serve` on a free port, on a dedicated database of the embedded
PostgreSQL, "bench_api_schema", created and migrated if missing) or targets one with --base-url,
creates an API key for a new owner, and runs schemathesis against /api/schema/: every operation
(import and export included), examples, coverage, fuzzing and stateful phases, positive and
negative data, with these checks:

- not_a_server_error            any 5xx is a failure (bad input must be a 4xx with a reason);
- status_code_conformance       every status the service answers is documented;
- content_type_conformance      every Content-Type it answers is documented for that status;
- response_headers_conformance  documented response headers are present and valid;
- response_schema_conformance   every body validates against the documented schema.

It prints the failures per check, the number of responses with a 5xx status (read from the HAR
record of every request), the operations covered and the number of requests, and exits non-zero
when any check failed. Throttling is lifted for the started service (THROTTLE_ENV below); pass
the same (THROTTLE_ENABLED=0) to a service you start yourself.

Usage:
    .venv/bin/python bench/api_schema_check.py                      # defaults: seed 1, 100 examples
    .venv/bin/python bench/api_schema_check.py --max-examples 20 --seed 7
    .venv/bin/python bench/api_schema_check.py --base-url http://127.0.0.1:8000 --api-key KEY
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATABASE = "bench_api_schema"
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
)
# The service's throttles would turn a fuzz run into a run of 429s; the started service gets them off.
THROTTLE_ENV = {"THROTTLE_ENABLED": "0"}
DEFAULT_REPORT_DIR = REPO / "bench" / "results" / "api_schema_check"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def service_env(embedding: str) -> dict:
    env = {**os.environ, **THROTTLE_ENV}
    env.update(
        EMBEDDED_PG_DATABASE=DATABASE,
        EMBEDDING_PROVIDER=embedding,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        LOG_LEVEL=env.get("LOG_LEVEL", "WARNING"),
    )
    return env


def wait_healthy(base_url: str, process: subprocess.Popen | None, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise SystemExit(f"the service exited with status {process.returncode} before it answered")
        try:
            with urllib.request.urlopen(f"{base_url}/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise SystemExit(f"{base_url}/healthz did not answer within {timeout:.0f} s")


def create_key(env: dict, owner: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", "createapikey", owner, "--name", "api_schema_check"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


def run_schemathesis(args, base_url: str, key: str, report_dir: Path) -> int:
    command = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "run",
        f"{base_url}/api/schema/",
        "--header",
        f"Authorization: Token {key}",
        "--checks",
        ",".join(CHECKS),
        "--mode",
        "all",
        "--phases",
        args.phases,
        "--max-examples",
        str(args.max_examples),
        "--seed",
        str(args.seed),
        "--workers",
        str(args.workers),
        "--request-timeout",
        "60",
        "--report",
        "json,har",
        "--report-dir",
        str(report_dir),
        "--report-json-path",
        str(report_dir / "report.json"),
        "--report-har-path",
        str(report_dir / "requests.har"),
        "--output-truncate",
        "true",
    ]
    with open(report_dir / "schemathesis.log", "w") as log:
        return subprocess.run(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, check=False).returncode


def summarise(report_dir: Path) -> dict:
    report = json.loads((report_dir / "report.json").read_text())
    har = json.loads((report_dir / "requests.har").read_text())
    statuses = Counter(entry["response"]["status"] for entry in har["log"]["entries"])
    failures = {f"{item['code']} {item['title']}": item["count"] for item in report["failures"]}
    return {
        "failures_by_check": failures,
        "failures": sum(failures.values()),
        "errors": len(report["errors"]),
        "server_errors": sum(count for status, count in statuses.items() if status >= 500),
        "requests": sum(statuses.values()),
        "statuses": dict(sorted(statuses.items())),
        "operations": report["operations"],
        "test_cases": report["test_cases"]["generated"],
        "seconds": round(report["running_time"], 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="a running service (default: start one on a free port)")
    parser.add_argument("--api-key", help="with --base-url: a key to use (default: createapikey here)")
    parser.add_argument("--max-examples", type=int, default=100, help="test cases per operation and phase")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--phases", default="examples,coverage,fuzzing,stateful")
    parser.add_argument("--embedding", default="hashing", choices=("hashing", "local"))
    parser.add_argument("--report-dir", type=Path, default=DEFAULT_REPORT_DIR)
    args = parser.parse_args()

    args.report_dir.mkdir(parents=True, exist_ok=True)
    env = service_env(args.embedding)
    process = None
    base_url = (args.base_url or "").rstrip("/")
    if not base_url:
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        service_log = open(args.report_dir / "service.log", "w")  # noqa: SIM115 (open while the service runs)
        process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--no-demo", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=service_log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_healthy(base_url, process)
        # A new owner per run: earlier runs' rows never change what this one sees.
        owner = f"schema-check-{datetime.now(UTC):%Y%m%d%H%M%S}"
        # A service given by --base-url keeps its data where this environment points (DATABASE_URL or
        # the embedded default), so the key is created there, not in the bench database.
        key = args.api_key or create_key(env if process is not None else dict(os.environ), owner)
        print(f"schemathesis against {base_url}/api/schema/ (seed {args.seed}, {args.max_examples} examples)")
        exit_code = run_schemathesis(args, base_url, key, args.report_dir)
    finally:
        if process is not None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
    figures = summarise(args.report_dir)
    operations = figures["operations"]
    print(f"operations covered: {operations['tested']} of {operations['total']}")
    print(f"test cases: {figures['test_cases']}, requests: {figures['requests']} in {figures['seconds']} s")
    print(f"responses by status: {figures['statuses']}")
    print(f"server errors (5xx responses): {figures['server_errors']}")
    print("failures per check:")
    for check, count in sorted(figures["failures_by_check"].items()) or [("none", 0)]:
        print(f"  {check}: {count}")
    print(f"failures: {figures['failures']}, errors: {figures['errors']}")
    (args.report_dir / "summary.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(f"details: {args.report_dir / 'schemathesis.log'}")
    clean = figures["failures"] == 0 and figures["server_errors"] == 0 and figures["errors"] == 0
    return 0 if clean and exit_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
