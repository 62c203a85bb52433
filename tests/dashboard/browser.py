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
TIMEOUT_MS = 20_000
VIEWPORT = {"width": 1440, "height": 900}
NARROW = {"width": 390, "height": 844}
BUNDLE = ROOT / "frontend" / "dist" / "dashboard" / "app.js"


def free_port() -> int:
    # An ephemeral port from the kernel: a fixed range collided with other checkouts testing at once,
    # whose server then answered this suite's health check.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
            [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(self.port), "web.asgi:application"],
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


def person(username: str, **fields):
    """A user whose password the server can check: it hashes with the project's own hashers, not
    the fast one the rest of the suite uses."""
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    from tests.dashboard.conftest import PASSWORD
    from tests.factories import UserFactory

    hasher = PBKDF2PasswordHasher()
    user = UserFactory(username=username, **fields)
    user.password = hasher.encode(PASSWORD, hasher.salt())
    user.save(update_fields=["password"])
    return user


class Watch:
    """Everything a page does that a test must refuse: dialogs, script errors, outside requests."""

    def __init__(self, base: str):
        self.base = base
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.outside: list[str] = []
        # Confirmations the test means to accept, by a part of their message, in order.
        self.expected: list[str] = []

    def accept_next(self, part_of_message: str) -> None:
        self.expected.append(part_of_message)

    def attach(self, page):
        page.set_default_timeout(TIMEOUT_MS)

        def on_dialog(dialog):
            if self.expected and self.expected[0] in dialog.message:
                self.expected.pop(0)
                dialog.accept()
                return
            self.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on(
            "request",
            lambda request: (
                None
                if request.url.startswith((self.base, "data:", "ws://127.0.0.1", "blob:"))
                else self.outside.append(request.url)
            ),
        )
        return page

    def check(self):
        assert self.expected == [], f"confirmations never asked: {self.expected}"
        assert self.dialogs == [], self.dialogs
        assert self.errors == [], self.errors
        assert self.outside == [], self.outside


def boxes(page, selector: str) -> list[dict]:
    """The bounding boxes of the visible elements matching `selector` (x, y, width, height, name)."""
    return page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)]
            .filter((n) => n.getClientRects().length && getComputedStyle(n).visibility !== "hidden")
            .map((n) => {
                const r = n.getBoundingClientRect();
                const name = n.id ? `#${n.id}` : `${n.tagName.toLowerCase()}.${[...n.classList].join(".")}`;
                return { name: `${name} ${(n.textContent || "").trim().slice(0, 30)}`, x: r.x, y: r.y,
                         width: r.width, height: r.height };
            })""",
        selector,
    )


def overlapping(items: list[dict], tolerance: float = 0.5) -> list[tuple[str, str]]:
    """Pairs of boxes that cover a common area (touching edges do not count)."""
    pairs = []
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            width = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
            height = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
            if width > tolerance and height > tolerance:
                pairs.append((a["name"], b["name"]))
    return pairs


def outside_width(items: list[dict], width: float, tolerance: float = 0.5) -> list[str]:
    """Names of the boxes that do not fit between 0 and `width` horizontally."""
    return [b["name"] for b in items if b["x"] < -tolerance or b["x"] + b["width"] > width + tolerance]


def api_call(base: str, key: str, method: str, path: str, body: dict | None = None):
    """One REST request with an API key, as an agent makes it; returns (status, parsed JSON)."""
    import json
    import urllib.error

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{base}{path}",
        data=data,
        method=method,
        headers={"Authorization": f"Token {key}", "Content-Type": "application/json", "Accept": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        raw = error.read()
        return error.code, json.loads(raw) if raw else None
