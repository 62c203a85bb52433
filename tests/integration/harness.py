"""Real processes for the distributed-mode tests: Celery workers and beat, a daphne web server,
a TCP proxy that plays a broker going down and coming back, HTTP and WebSocket clients.

The in-process test settings stay embedded (no REDIS_URL); every process started here gets its
own environment pointing at Redis (db >= 9) and at the pytest test database.
"""

import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from contextlib import suppress
from pathlib import Path

import redis
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379


class RedisServer:
    """The Redis the child processes use: the one on 6379 when it answers, else a private one."""

    def __init__(self, port: int, proc: subprocess.Popen | None = None):
        self.port = port
        self.proc = proc

    @classmethod
    def find_or_start(cls, log_dir: Path) -> "RedisServer | None":
        # Several checkouts testing at once on one machine would flush each other's queues.
        if _redis_ping(REDIS_PORT) and not os.environ.get("TEST_REDIS_PRIVATE"):
            return cls(REDIS_PORT)
        binary = shutil.which("redis-server")
        if binary is None:
            return None
        port = free_port()
        proc = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            cwd=log_dir,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not _redis_ping(port):
            time.sleep(0.1)
        return cls(port, proc)

    def url(self, db: int) -> str:
        return f"redis://{REDIS_HOST}:{self.port}/{db}"

    def flush(self, db: int) -> None:
        # Databases below 9 may hold someone's real data on a shared Redis.
        assert db >= 9, f"tests use Redis databases 9 and up, not {db}"
        redis.Redis(host=REDIS_HOST, port=self.port, db=db, socket_timeout=5).flushdb()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)


def _redis_ping(port: int) -> bool:
    try:
        return bool(redis.Redis(host=REDIS_HOST, port=port, socket_timeout=2, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


def free_port() -> int:
    # An ephemeral port from the kernel: a fixed range collided with other checkouts testing at once,
    # whose server then answered this suite's health check.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database_env() -> dict[str, str]:
    """Point a child process at the database this test runs against (the pytest test database)."""
    name = connection.settings_dict["NAME"]
    if settings.EMBEDDED_DB:
        return {"EMBEDDED_PG_DIR": str(settings.EMBEDDED_PG_DIR), "EMBEDDED_PG_DATABASE": name}
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(settings.DATABASE_URL)
    return {"DATABASE_URL": urlunsplit(parts._replace(path=f"/{name}"))}


def command_env(**extra) -> dict[str, str]:
    """A `manage.py` child run as a shell user would, embedded (no broker), on the test database."""
    env = {k: v for k, v in os.environ.items() if k not in ("LOG_LEVEL", "DATABASE_URL")}
    env.update(database_env(), EMBEDDING_PROVIDER="hashing", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.update(extra)
    return env


def child_env(*, drop: tuple[str, ...], log_level: str, **extra) -> dict[str, str]:
    """A server child's environment: this one without the variables starting with `drop`, on the test
    database and data directory, then `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(
        EMBEDDING_PROVIDER="hashing",  # the test process embeds with it too: vectors must agree
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONUNBUFFERED="1",
        LOG_LEVEL=log_level,
        DJANGO_SETTINGS_MODULE="memory_project.settings",
        MEMORY_DATA_DIR=str(settings.DATA_DIR),
    )
    env.update(database_env())
    env.update({k: str(v) for k, v in extra.items()})
    return env


def process_env(redis: str, **extra) -> dict[str, str]:
    return child_env(
        drop=("OPENAI_", "LLM_", "CELERY_", "EXTRACTION_", "PERIODIC_", "DATABASE_URL", "EMBEDDED_PG"),
        log_level="INFO",
        **{"REDIS_URL": redis, **extra},
    )


class Proc:
    """A child process in its own process group, its output in a log file."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], log_dir: Path):
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.popen = subprocess.Popen(
            args, cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_log(self, pattern: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if re.search(pattern, self.log()):
                return
            if self.popen.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.popen.returncode}:\n{self.log()[-4000:]}")
            time.sleep(0.1)
        raise AssertionError(f"{self.name}: no {pattern!r} within {timeout}s:\n{self.log()[-4000:]}")

    def kill(self, sig=signal.SIGKILL) -> None:
        with suppress(ProcessLookupError):
            os.killpg(self.popen.pid, sig)

    def stop(self, timeout: float = 10) -> None:
        if self.popen.poll() is None:
            self.kill(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill(signal.SIGKILL)
                self.popen.wait(5)
        else:
            self.kill(signal.SIGKILL)  # whatever it left behind in its group
        self._log.close()


def start_worker(env: dict, log_dir: Path, name: str = "worker") -> Proc:
    proc = Proc(
        name,
        [
            str(BIN / "celery"),
            "-A",
            "memory_project",
            "worker",
            "--pool=solo",
            "-Q",
            "celery",
            "-n",
            f"{name}-{os.getpid()}@%h",
            "--without-gossip",
            "--without-mingle",
            "-l",
            "INFO",
        ],
        env,
        log_dir,
    )
    proc.wait_for_log(r"ready\.", timeout=60)
    return proc


def start_beat(env: dict, log_dir: Path) -> Proc:
    proc = Proc(
        "beat",
        [
            str(BIN / "celery"),
            "-A",
            "memory_project",
            "beat",
            "-l",
            "INFO",
            "--pidfile=",
            f"--schedule={log_dir / 'beat-schedule'}",
        ],
        env,
        log_dir,
    )
    proc.wait_for_log(r"beat: Starting", timeout=60)
    return proc


def start_web(env: dict, log_dir: Path, *, timeout: float = 60) -> tuple[Proc, str]:
    port = free_port()
    proc = Proc(
        "web",
        [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port), "web.asgi:application"],
        env,
        log_dir,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.popen.poll() is not None:
            raise AssertionError(f"web exited:\n{proc.log()[-4000:]}")
        if answers_health(base):
            return proc, base
        time.sleep(0.2)
    proc.stop()  # a server that never answered must not outlive the test
    raise AssertionError(f"web not ready:\n{proc.log()[-4000:]}")


def answers_health(base: str) -> bool:
    """Whether the server at `base` answers GET /healthz with a 200 (False while it cannot be reached)."""
    with suppress(OSError):
        with urllib.request.urlopen(f"{base}/healthz", timeout=2) as response:
            return response.status == 200
    return False


def http(method: str, url: str, key: str, body=None, timeout: float = 30) -> tuple[int, dict, float]:
    """(status, JSON body, seconds taken)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Authorization", f"Token {key}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    took = time.monotonic() - started
    try:
        return status, json.loads(raw or b"{}"), took
    except ValueError:
        return status, {"raw": raw.decode(errors="replace")}, took


class EventSocket:
    """A WebSocket client on /ws/events/ collecting every event it receives, in a thread."""

    def __init__(self, base: str, key: str | None, *, headers: dict | None = None):
        self.url = f"{base.replace('http', 'ws', 1)}/ws/events/" + (f"?token={key}" if key is not None else "")
        self.headers = headers or {}
        self.events: list[dict] = []
        self.close_code: int | None = None
        self.error: Exception | None = None
        self._lock = threading.Lock()
        self._opened = threading.Event()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._opened.wait(15) or self.error is not None:
            raise AssertionError(f"could not connect to {self.url}: {self.error!r}")

    def _run(self):
        from websockets.exceptions import ConnectionClosed
        from websockets.sync.client import connect

        try:
            with connect(self.url, open_timeout=10, additional_headers=self.headers) as ws:
                self.ws = ws
                try:
                    self.local_port = ws.socket.getsockname()[1]
                except OSError:  # the server refused and closed before we looked: the recv below reports its code
                    self.local_port = None
                self._opened.set()
                while not self._closing.is_set():
                    try:
                        message = ws.recv(timeout=0.2)
                    except TimeoutError:
                        continue
                    with self._lock:
                        self.events.append(json.loads(message))
        except ConnectionClosed as closed:
            self.close_code = closed.rcvd.code if closed.rcvd else None
        except Exception as error:  # reported by the constructor or the test
            self.error = error
        finally:
            self._opened.set()

    def wait_closed(self, timeout: float) -> int | None:
        self._thread.join(timeout)
        return self.close_code

    def snapshot(self) -> list[dict]:
        with self._lock:
            return list(self.events)

    def wait_for(self, predicate, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.snapshot():
                if predicate(event):
                    return event
            time.sleep(0.1)
        raise AssertionError(f"no matching event within {timeout}s; got {[e['type'] for e in self.snapshot()]}")

    def close(self):
        self._closing.set()
        self._thread.join(5)


class TcpProxy:
    """Forwards a fixed local port to Redis; `start` and `stop` make the broker come and go."""

    def __init__(self, target_port: int):
        self.port = free_port()
        self.target = (REDIS_HOST, target_port)
        self._server: socket.socket | None = None
        self._stopped = threading.Event()
        self._threads: list[threading.Thread] = []

    def url(self, db: int) -> str:
        return f"redis://{REDIS_HOST}:{self.port}/{db}"

    def start(self) -> None:
        self._stopped.clear()
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.port))
        server.listen(64)
        server.settimeout(0.2)
        self._server = server
        self._spawn(self._accept)

    def _spawn(self, target, *args):
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _accept(self):
        while not self._stopped.is_set():
            try:
                client, _ = self._server.accept()
            except (TimeoutError, OSError):
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            self._spawn(self._pipe, client, upstream)

    def _pipe(self, a: socket.socket, b: socket.socket):
        try:
            while not self._stopped.is_set():
                ready, _, _ = select.select([a, b], [], [], 0.2)
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    (b if sock is a else a).sendall(data)
        except OSError:
            return
        finally:
            a.close()
            b.close()

    def stop(self) -> None:
        self._stopped.set()
        if self._server is not None:
            self._server.close()
            self._server = None
        for thread in self._threads:
            thread.join(2)
        self._threads.clear()


def wait_until(predicate, timeout: float, interval: float = 0.2, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"{message} not reached within {timeout}s")
