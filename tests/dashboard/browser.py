"""A real browser against a real ASGI server for the dashboard tests.

pytest-django's `live_server` serves WSGI only, so it cannot carry /ws/events/. Instead daphne runs
the project's ASGI application (HTTP and WebSocket) in a subprocess on the pytest test database; the
tests' rows are committed (transactional tests) so it sees them. Live events stay inside that
process (in-memory channel layer), which is where the requests that cause them run. Chromium comes
from Debian and Playwright drives it.
"""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import suppress
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PORTS = range(8140, 8150)
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
BUNDLE = ROOT / "frontend" / "dist" / "dashboard" / "app.js"


def free_port() -> int:
    for port in PORTS:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


def server_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "LLM_", "REDIS_URL", "DATABASE_URL", "EMBEDDED_PG", "CELERY_"))
    }
    env.update(
        EMBEDDING_PROVIDER="hashing",  # as in the test process: vectors written by either must agree
        DJANGO_SETTINGS_MODULE="memory_project.settings",
        MEMORY_DATA_DIR=str(settings.DATA_DIR),
        PYTHONUNBUFFERED="1",
        LOG_LEVEL="WARNING",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    name = connection.settings_dict["NAME"]
    if settings.EMBEDDED_DB:
        env.update(EMBEDDED_PG_DIR=str(settings.EMBEDDED_PG_DIR), EMBEDDED_PG_DATABASE=name)
    else:
        from urllib.parse import urlsplit, urlunsplit

        env["DATABASE_URL"] = urlunsplit(urlsplit(settings.DATABASE_URL)._replace(path=f"/{name}"))
    return env


class AsgiServer:
    def __init__(self, log_path: Path):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(self.port), "memory_project.asgi:application"],
            cwd=ROOT,
            env=server_env(),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"daphne exited with {self.proc.returncode}:\n{self.log()[-4000:]}")
            with suppress(OSError):
                with urllib.request.urlopen(f"{self.base}/healthz", timeout=2) as response:
                    if response.status == 200:
                        return
            time.sleep(0.2)
        raise AssertionError(f"daphne not ready in {timeout}s:\n{self.log()[-4000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()


def canvas_ink(page, selector: str) -> int:
    """Non-transparent pixels over every canvas matching `selector` (0 = nothing drawn)."""
    return page.evaluate(
        """(selector) => {
            let ink = 0;
            for (const canvas of document.querySelectorAll(selector)) {
                if (!canvas.width || !canvas.height) continue;
                const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
                for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) ink++;
            }
            return ink;
        }""",
        selector,
    )


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def log_in(page, base: str, username: str, password: str) -> None:
    """The way a person does: visit /, land on the login form, submit it."""
    page.goto(f"{base}/")
    page.wait_for_url(f"{base}/accounts/login/?next=/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("form button[type=submit]")
    page.wait_for_url(f"{base}/")
    wait_ready(page)


def wait_ready(page, live: bool = True) -> None:
    """The page's script ran (and, by default, its live socket is open)."""
    page.wait_for_selector("body[data-ready='1']")
    if live:
        page.wait_for_selector("#live-status[data-state='open']")
