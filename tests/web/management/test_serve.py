"""`manage.py serve`: the banner, and as a shell user sees it: only the banner on stdout, a prompt stop on SIGTERM."""

import os
import signal
import subprocess
import sys

import pytest

from tests.integration.harness import ROOT, answers_health, command_env, free_port, wait_until
from web.management.commands.serve import banner_lines


def test_the_banner_sends_people_to_the_dashboard_login_not_the_admin():
    lines = banner_lines(host="127.0.0.1", port=8000, credentials=("pw-1", "mem_key"))
    assert lines == [
        "Agent memory service on http://127.0.0.1:8000/",
        "Dashboard login: demo / pw-1  (http://127.0.0.1:8000/accounts/login/)",
        "Django admin: http://127.0.0.1:8000/admin/",
        "API docs: http://127.0.0.1:8000/api/docs/",
        "Demo API key: mem_key",
        'Try: curl -s -H "Authorization: Token mem_key" http://127.0.0.1:8000/api/v1/memories/',
    ]


def test_without_the_demo_owner_the_banner_is_only_the_address():
    assert banner_lines(host="0.0.0.0", port=9000, credentials=None) == ["Agent memory service on http://0.0.0.0:9000/"]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_serve_prints_only_the_banner_on_stdout_and_stops_on_sigterm():
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--no-demo", "--workers", "1", "--port", str(port)],
        cwd=ROOT,
        env=command_env(LOG_LEVEL="WARNING"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_until(
            lambda: server.poll() is not None or answers_health(f"http://127.0.0.1:{port}"), 180, message="healthz"
        )
        assert server.poll() is None, server.stderr.read()

        server.send_signal(signal.SIGTERM)
        out, _ = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()

    assert server.returncode == 0
    assert out == f"Agent memory service on http://127.0.0.1:{port}/\n"
