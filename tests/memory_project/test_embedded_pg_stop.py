"""Issue 12, finding 8: stopping run-distributed stops the embedded PostgreSQL, even when one of
its users (a Celery pool child) left without unregistering."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(code_or_module: list[str], data_dir: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "EMBEDDED_PG_DIR": str(data_dir),
        "DJANGO_SETTINGS_MODULE": "memory_project.settings",
        "DATABASE_URL": "",
    }
    return subprocess.run(
        [sys.executable, *code_or_module], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def postmaster_running(data_dir: Path) -> bool:
    pid_file = data_dir / "postmaster.pid"
    if not pid_file.exists():
        return False
    pid = int(pid_file.read_text().split()[0])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_the_stop_step_stops_a_server_whose_last_user_died_without_unregistering(tmp_path):
    data_dir = tmp_path / "pg"
    # given a server started by a process that then left with os._exit, as a pool child does
    started = run(
        [
            "-c",
            "import django, os; django.setup()\n"
            "from django.conf import settings\n"
            "from memory_project.embedded_pg.server import embedded_server\n"
            "embedded_server(settings.EMBEDDED_PG_DIR)\n"
            "os._exit(0)",
        ],
        data_dir,
    )
    assert started.returncode == 0, started.stderr
    assert postmaster_running(data_dir)
    assert len(json.loads((data_dir / ".handle_pids.json").read_text())) == 1

    # when run-distributed's stop step runs
    stopped = run(["-m", "memory_project.embedded_pg.stop"], data_dir)

    # then the server is gone
    assert stopped.returncode == 0, stopped.stderr
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and postmaster_running(data_dir):
        time.sleep(0.2)
    assert not postmaster_running(data_dir)
    assert json.loads((data_dir / ".handle_pids.json").read_text()) == []


def test_run_distributed_runs_the_stop_step_when_it_stops():
    script = (ROOT / "scripts" / "run-distributed.sh").read_text()
    stop_all = script[script.index("stop_all() {") : script.index("trap stop_all")]
    assert '"$BIN/python" -m memory_project.embedded_pg.stop' in stop_all
