"""Bounded load test: N concurrent clients talk to the service over HTTP for a fixed time.

Each client is an agent with its own owner and keep-alive connection. It opens a session, posts its
turns one at a time (user and assistant alternating, as a chat relays them), searches the owner's
memories and turns after every second turn, and ends the session, which queues its extraction;
then it starts the next session, until the time is up. Every request is timed.

By default each client sends its next request as soon as the last is answered: the throughput is the
most the server can take, and each request waits behind the other clients' (the latency is about
clients / throughput). With --rate R the clients send R requests per second in all, each at random
times (a Poisson stream), which is how agents that also wait for their own model behave: the
figures are then the latency at that throughput, each request timed from when it was due, so a
server that falls behind is charged for the requests queued behind it.

Printed: throughput (requests per second over the timed window, in all and per operation), p50 /
p95 / p99 latency per operation, the count of 5xx answers, of other non-2xx answers and of failed
connections, and a check that every turn the service accepted (201) is stored: each session's turns
are read back over the API after the window and compared, id by id, with what was accepted.

Before the window, one client alone talks to the same server for --baseline seconds (timed the same
way, after the warm-up): the machine is shared, so the loaded figures are also given as ratios to
that one client's, measured minutes apart on the same machine.

When the script starts the server itself (--serve), it also reads the database: a probe posts one
turn every --probe-every seconds during the window and times how long until that turn has its
vector (until then only full-text search finds it), and after the window it waits for the turns
still without one and reports how long that took.

The server it starts serves a dedicated database of the embedded PostgreSQL (--database, default
"bench_load", created and migrated if missing), so the service's own data is never touched:

    .venv/bin/python bench/load.py --serve embedded --clients 20 --duration 60
    .venv/bin/python bench/load.py --serve embedded --clients 20 --duration 60 --rate 100
    .venv/bin/python bench/load.py --serve distributed --clients 20 --duration 60
    .venv/bin/python bench/load.py --base-url http://127.0.0.1:8000 --api-key KEY   # a running server

`distributed` runs scripts/run-distributed.sh (web, a Celery worker and beat) on --redis-url, or on a
private redis-server started on a free port when none is given (a shared Redis's queues may have
other consumers). Only addresses on 127.0.0.1 are ever contacted; the run stops by itself.
"""

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import REPO, configure_django, free_port, server_wait  # noqa: E402
from search_latency import QUERY_TEMPLATES, memory_texts, percentile, slots  # noqa: E402

DEFAULT_JSON_OUT = REPO / "bench" / "results" / "load.json"
OPERATIONS = ("session_create", "turn_post", "search", "session_end", "probe_turn")
TIMEOUT_SECONDS = 60
IDLE_REOPEN_SECONDS = 3.0


# ------------------------------------------------------------------------------------------------
# What the clients say
# ------------------------------------------------------------------------------------------------

USER_OPENERS = ("By the way, ", "Just so you know, ", "Remember that ", "Quick update: ", "", "FYI ")
ASSISTANT_REPLIES = (
    "Thanks, I will keep that in mind.",
    "Got it. Anything else I should know?",
    "Noted. Do you want me to set a reminder?",
    "Understood, that helps me plan better.",
)


class Script:
    """Deterministic conversation text and queries per client (the seed plus the client's index)."""

    def __init__(self, seed: int, client: int):
        self.rng = random.Random(seed * 1000 + client)
        self.facts = [content for _, content in memory_texts(400, seed * 1000 + client)]

    def user_turn(self) -> str:
        return self.rng.choice(USER_OPENERS) + self.rng.choice(self.facts)

    def assistant_turn(self) -> str:
        return self.rng.choice(ASSISTANT_REPLIES)

    def query(self) -> str:
        return self.rng.choice(QUERY_TEMPLATES).format(**slots(self.rng))


# ------------------------------------------------------------------------------------------------
# HTTP
# ------------------------------------------------------------------------------------------------


class Client:
    """Keep-alive JSON over the standard library; a dropped connection is reopened once."""

    def __init__(self, base_url: str, key: str):
        parts = urlsplit(base_url)
        if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
            raise SystemExit(f"load is only ever sent to this machine, not {parts.hostname}")
        self.host, self.port, self.prefix = parts.hostname, parts.port or 80, parts.path.rstrip("/")
        self.headers = {"Authorization": f"Token {key}", "Content-Type": "application/json"}
        self.conn = None
        self.last_used = 0.0

    def request(self, method: str, path: str, body=None) -> tuple[int, object]:
        payload = None if body is None else json.dumps(body).encode()
        if self.conn is not None and time.monotonic() - self.last_used > IDLE_REOPEN_SECONDS:
            # The server drops a keep-alive connection idle for WEB_KEEPALIVE (5 s): a request sent on
            # it just then is reset unread (the probe waits for vectors that long). Start afresh.
            self.conn.close()
            self.conn = None
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT_SECONDS)
            try:
                self.conn.request(method, self.prefix + path, body=payload, headers=self.headers)
                response = self.conn.getresponse()
                raw = response.read()
                self.last_used = time.monotonic()
                break
            except (http.client.HTTPException, ConnectionError) as exc:
                # A keep-alive connection the server closed between requests: reopen it. Only when
                # nothing was answered, and only for a request that was never read by the server
                # (a RemoteDisconnected on a fresh connection is reported, not retried).
                self.conn.close()
                self.conn = None
                if attempt == 2 or not isinstance(exc, http.client.RemoteDisconnected | BrokenPipeError):
                    raise
        try:
            return response.status, json.loads(raw or b"{}")
        except ValueError:
            return response.status, raw.decode("utf-8", "replace")

    def close(self):
        if self.conn is not None:
            self.conn.close()


class Recorder:
    """Every timed request: operation, status, seconds, and when it finished."""

    def __init__(self):
        self.lock = threading.Lock()
        self.rows: list[tuple[str, int, float, float]] = []
        self.samples: dict[int, str] = {}  # the first answer of each failing status

    def add(self, op: str, status: int, seconds: float, body) -> None:
        with self.lock:
            self.rows.append((op, status, seconds, time.monotonic()))
            if (status >= 400 or status == 0) and status not in self.samples:
                self.samples[status] = f"{op}: {str(body)[:300]}"


def timed(client: Client, recorder: Recorder, op: str, method: str, path: str, body=None, since: float | None = None):
    """One request, timed from `since` (a time.monotonic() value: when it was due) or from now."""
    started = time.monotonic() if since is None else since
    try:
        status, answer = client.request(method, path, body)
    except (OSError, http.client.HTTPException) as exc:
        status, answer = 0, f"{exc.__class__.__name__}: {exc}"
    recorder.add(op, status, time.monotonic() - started, answer)
    return status, answer


# ------------------------------------------------------------------------------------------------
# Clients
# ------------------------------------------------------------------------------------------------


class Agent(threading.Thread):
    """One client: sessions of --turns turns, a search after every second turn, then the end."""

    def __init__(
        self, index: int, base_url: str, key: str, args, recorder: Recorder, deadline: float, gap: float | None = None
    ):
        super().__init__(name=f"client-{index}", daemon=True)
        self.client = Client(base_url, key)
        self.script = Script(args.seed, index)
        self.args, self.recorder, self.deadline = args, recorder, deadline
        self.accepted: dict[str, list[str]] = {}  # session id -> turn ids answered with 201
        # --rate: the mean seconds between this client's requests, drawn at random (so all clients
        # together send a Poisson stream), from a start spread over the first gap.
        self.gap, self.pace = gap, random.Random(args.seed * 7919 + index)
        self.due = time.monotonic() + (self.pace.uniform(0, gap) if gap else 0.0)

    def call(self, op: str, method: str, path: str, body=None):
        """One request; with --rate first wait until it is due, and time it from then: a server that
        falls behind is charged the wait it caused the requests queued behind (no coordinated omission).
        A request due after the window is not sent (status 0, not recorded): the client waits out the
        window instead, rather than sleeping a whole gap past it to send what would not be counted."""
        since = None
        if self.gap:
            self.due += self.pace.expovariate(1 / self.gap)
            if self.due >= self.deadline:
                time.sleep(max(0.0, self.deadline - time.monotonic()))
                return 0, None
            time.sleep(max(0.0, self.due - time.monotonic()))
            since = self.due
        return timed(self.client, self.recorder, op, method, path, body, since=since)

    def run(self):
        try:
            while time.monotonic() < self.deadline:
                self.one_session()
        finally:
            self.client.close()

    def one_session(self):
        status, body = self.call("session_create", "POST", "/api/v1/sessions/", {"agent": "load"})
        if status != 201:
            time.sleep(0.2)
            return
        session_id = body["id"]
        accepted = self.accepted.setdefault(session_id, [])
        for index in range(self.args.turns):
            if time.monotonic() >= self.deadline:
                return
            role = "user" if index % 2 == 0 else "assistant"
            content = self.script.user_turn() if role == "user" else self.script.assistant_turn()
            turn = {"role": role, "content": content, "speaker": "User" if role == "user" else "Assistant"}
            status, body = self.call("turn_post", "POST", f"/api/v1/sessions/{session_id}/turns/", turn)
            if status == 201:
                accepted.append(body["id"])
            if index % 2 == 1 and time.monotonic() < self.deadline:
                query = {"query": self.script.query(), "top_k": 10, "scope": "all"}
                self.call("search", "POST", "/api/v1/search/", query)
        if time.monotonic() < self.deadline:
            self.call("session_end", "POST", f"/api/v1/sessions/{session_id}/end/")


class Probe(threading.Thread):
    """Posts a turn every `every` seconds and times how long until the database has its vector."""

    def __init__(self, base_url: str, key: str, recorder: Recorder, deadline: float, every: float):
        super().__init__(name="probe", daemon=True)
        self.client = Client(base_url, key)
        self.recorder, self.deadline, self.every = recorder, deadline, every
        self.delays: list[float] = []
        self.missing = 0
        self.accepted: dict[str, list[str]] = {}

    def run(self):
        from django.db import close_old_connections

        from sessions.models import ConversationTurn

        try:
            status, body = timed(self.client, self.recorder, "session_create", "POST", "/api/v1/sessions/", {})
            if status != 201:
                return
            session_id, n = body["id"], 0
            while time.monotonic() + self.every < self.deadline:
                time.sleep(self.every)
                n += 1
                turn = {"role": "user", "content": f"Probe {n}: the spare key is under the blue flowerpot."}
                status, body = timed(
                    self.client, self.recorder, "probe_turn", "POST", f"/api/v1/sessions/{session_id}/turns/", turn
                )
                if status != 201:
                    continue
                answered = time.monotonic()
                self.accepted.setdefault(session_id, []).append(body["id"])
                while time.monotonic() - answered < 60:
                    if ConversationTurn.objects.filter(pk=body["id"], embedding__isnull=False).exists():
                        self.delays.append(time.monotonic() - answered)
                        break
                    time.sleep(0.01)
                else:
                    self.missing += 1
        finally:
            self.client.close()
            close_old_connections()


# ------------------------------------------------------------------------------------------------
# Figures
# ------------------------------------------------------------------------------------------------


def summarize(recorder: Recorder, started: float, deadline: float) -> dict:
    window = deadline - started
    rows = [r for r in recorder.rows if r[3] <= deadline]
    out = {"window_seconds": round(window, 3), "requests": len(rows), "throughput_rps": round(len(rows) / window, 2)}
    out["server_errors_5xx"] = sum(1 for r in recorder.rows if r[1] >= 500)
    out["client_errors_4xx"] = sum(1 for r in recorder.rows if 400 <= r[1] < 500)
    out["connection_errors"] = sum(1 for r in recorder.rows if r[1] == 0)
    out["error_samples"] = {str(k): v for k, v in recorder.samples.items()}
    per_op = {}
    for op in OPERATIONS:
        ms = [r[2] * 1000 for r in rows if r[0] == op and 200 <= r[1] < 300]
        if not ms:
            continue
        per_op[op] = {
            "n": len(ms),
            "rps": round(len(ms) / window, 2),
            "p50": round(percentile(ms, 0.50), 1),
            "p95": round(percentile(ms, 0.95), 1),
            "p99": round(percentile(ms, 0.99), 1),
            "mean": round(statistics.fmean(ms), 1),
            "max": round(max(ms), 1),
        }
    out["operations"] = per_op
    # Requests per second in each tenth of the window: a run that slows as the database grows (or as
    # the background work catches up) shows here, where the window's mean would hide it.
    slice_seconds = window / 10
    out["timeline_rps"] = [
        round(
            sum(1 for r in rows if started + i * slice_seconds < r[3] <= started + (i + 1) * slice_seconds)
            / slice_seconds,
            1,
        )
        for i in range(10)
    ]
    return out


def verify_stored(base_url: str, keys: list[str], accepted: list[dict[str, list[str]]]) -> dict:
    """Every accepted turn id must be among its session's stored turns, read back over the API."""
    missing, checked = [], 0
    for key, sessions in zip(keys, accepted):
        client = Client(base_url, key)
        for session_id, ids in sessions.items():
            stored, page = set(), 1
            while True:
                status, body = client.request("GET", f"/api/v1/sessions/{session_id}/turns/?page_size=500&page={page}")
                if status != 200:
                    raise RuntimeError(f"could not read back the turns of {session_id}: {status} {str(body)[:200]}")
                stored.update(turn["id"] for turn in body["results"])
                if not body.get("next"):
                    break
                page += 1
            checked += len(ids)
            missing += [i for i in ids if i not in stored]
        client.close()
    return {"accepted_turns": checked, "missing_turns": len(missing), "missing_sample": missing[:5]}


def embedding_pending(owner_ids: list[int]):
    from sessions.models import ConversationTurn

    return ConversationTurn.objects.filter(owner_id__in=owner_ids, embedding__isnull=True)


def embedding_backlog(owner_ids: list[int], at_close: int, closed: float, timeout: float) -> dict:
    """Turns still without a vector when the window closed (counted then, at `closed`), and how long
    after the close none were left."""
    pending = embedding_pending(owner_ids)
    left = pending.count()
    while left and time.monotonic() - closed < timeout:
        time.sleep(0.25)
        left = pending.count()
    return {
        "unembedded_at_close": at_close,
        "unembedded_left": left,
        "drained_seconds": round(time.monotonic() - closed, 2),
    }


def print_report(result: dict) -> None:
    cfg, s = result["config"], result["summary"]
    print(
        f"\nload: {cfg['clients']} clients for {cfg['duration']} s against {cfg['base_url']} ({cfg['mode']}), "
        + (f"sending {cfg['rate']:g} requests/s in all, " if cfg.get("rate") else "each sending as fast as answered, ")
        + f"{cfg['turns']} turns per session, a search after every second turn; load average at start "
        f"{cfg['loadavg_start']}, at end {result['loadavg_end']}"
    )
    print(
        f"throughput {s['throughput_rps']:.1f} requests/s ({s['requests']} in {s['window_seconds']:.0f} s; "
        f"by tenths of the window {' '.join(f'{rps:.0f}' for rps in s['timeline_rps'])}); "
        f"5xx {s['server_errors_5xx']}, other non-2xx {s['client_errors_4xx']}, failed connections "
        f"{s['connection_errors']}"
    )
    print(f"{'operation':<16}{'n':>7}{'req/s':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for op, f in s["operations"].items():
        print(f"{op:<16}{f['n']:>7}{f['rps']:>8.1f}{f['p50']:>9.1f}{f['p95']:>9.1f}{f['p99']:>9.1f}{f['max']:>9.1f}")
    base = result.get("baseline")
    if base:
        print(
            f"one client alone ({base['window_seconds']:.0f} s, before the window): "
            f"{base['throughput_rps']:.1f} requests/s"
        )
        for op, f in base["operations"].items():
            loaded = s["operations"].get(op)
            ratio = (
                f"; loaded/alone p50 {loaded['p50'] / f['p50']:.1f}x, p95 {loaded['p95'] / f['p95']:.1f}x"
                if loaded
                else ""
            )
            print(f"  {op:<16}p50 {f['p50']:.1f} ms, p95 {f['p95']:.1f} ms{ratio}")
    for status, sample in s["error_samples"].items():
        print(f"  e.g. {status}: {sample}")
    v = result["stored"]
    verdict = "every accepted turn is stored" if not v["missing_turns"] else f"{v['missing_turns']} MISSING"
    print(f"stored: {v['accepted_turns']} accepted turns read back, {verdict}")
    if "probe" in result:
        p = result["probe"]
        if p["n"]:
            print(
                f"turn vector ready after the 201 (probe, {p['n']} turns): p50 {p['p50_ms']:.0f} ms, "
                f"p95 {p['p95_ms']:.0f} ms, max {p['max_ms']:.0f} ms; not ready within 60 s: {p['missing']}"
            )
    if "backlog" in result:
        b = result["backlog"]
        print(
            f"turns without a vector when the window closed: {b['unembedded_at_close']}, all embedded "
            f"{b['drained_seconds']:.1f} s later"
            + (f" ({b['unembedded_left']} still left)" if b["unembedded_left"] else "")
        )


# ------------------------------------------------------------------------------------------------
# Server
# ------------------------------------------------------------------------------------------------


def start_redis(log_dir: Path) -> tuple[subprocess.Popen, str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("--serve distributed needs --redis-url or a redis-server binary to start a private one")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=log_dir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    import redis

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            redis.Redis(port=port, socket_timeout=1).ping()
            return proc, f"redis://127.0.0.1:{port}/0"
        except redis.RedisError:
            time.sleep(0.1)
    raise SystemExit("the private redis-server did not start")


def start_server(args, port: int, redis_url: str | None, log_path: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "EMBEDDED_PG_DATABASE": args.database,
        "EMBEDDING_PROVIDER": args.embedder,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
        # A load test is many requests from one address: lift the request throttles for it.
        "THROTTLE_ENABLED": "0",
    }
    env.pop("REDIS_URL", None)
    if args.serve == "distributed":
        env["REDIS_URL"] = redis_url
        command = ["bash", "scripts/run-distributed.sh"]
    else:
        command = [sys.executable, "manage.py", "serve", "--no-demo", "--port", str(port)]
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    server_wait(proc, port, log_path, stop=stop_group, interval=0.5)
    return proc


def stop_group(proc: subprocess.Popen) -> None:
    """Stop a process started in its own session: the leader first, so that it stops its children in
    order (a Celery worker finishes its task); then whatever is left of its group."""
    try:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def make_owners(count: int) -> tuple[list[int], list[str]]:
    from django.contrib.auth import get_user_model

    from memories.services.api_keys import api_key_create

    stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
    ids, keys = [], []
    for index in range(count):
        user = get_user_model().objects.create(username=f"bench-load-{stamp}-{index}")
        _, key = api_key_create(username=user.username, name="bench load")
        ids.append(user.pk)
        keys.append(key)
    return ids, keys


# ------------------------------------------------------------------------------------------------
# Main
# ------------------------------------------------------------------------------------------------


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--serve", choices=("embedded", "distributed"), help="Start the service for the run.")
    target.add_argument("--base-url", help="A running service on this machine (then --api-key).")
    parser.add_argument("--api-key", help="With --base-url: the key every client uses.")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--duration", type=float, default=60, help="Seconds of load.")
    parser.add_argument("--turns", type=int, default=8, help="Turns per session.")
    parser.add_argument(
        "--rate",
        type=float,
        help="Requests per second the clients send in all, at random times (default: each sends its next "
        "request as soon as the last is answered, which measures the most the server can take).",
    )
    parser.add_argument("--warmup", type=float, default=5, help="Seconds of one client before the clock starts.")
    parser.add_argument(
        "--baseline", type=float, default=15, help="Seconds of one client alone, timed, before the window (0: none)."
    )
    parser.add_argument("--probe-every", type=float, default=2.0, help="Seconds between probe turns (--serve).")
    parser.add_argument("--embedder", choices=("local", "hashing"), default="local")
    parser.add_argument("--database", default="bench_load", help="Dedicated embedded database (--serve).")
    parser.add_argument("--port", type=int, help="Port of the started server (default: a free one).")
    parser.add_argument("--redis-url", help="Redis for --serve distributed (default: a private redis-server).")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json-out", default=str(DEFAULT_JSON_OUT))
    args = parser.parse_args(argv)
    if args.base_url and not args.api_key:
        parser.error("--base-url needs --api-key")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    json_out = Path(args.json_out)
    json_out = json_out if json_out.is_absolute() else REPO / json_out
    json_out.parent.mkdir(parents=True, exist_ok=True)
    log_dir = REPO / "bench" / "results"
    log_dir.mkdir(parents=True, exist_ok=True)  # git-ignored: absent in a fresh clone
    loadavg_start = [round(x, 2) for x in os.getloadavg()]
    redis_proc = server = None
    owner_ids: list[int] = []
    try:
        if args.serve:
            configure_django(args.database, args.embedder)
            owner_ids, keys = make_owners(args.clients + 1)
            redis_url = args.redis_url
            if args.serve == "distributed" and not redis_url:
                redis_proc, redis_url = start_redis(log_dir)
            port = args.port or free_port()
            print(f"starting the {args.serve} service on port {port} (database {args.database!r})", flush=True)
            server = start_server(args, port, redis_url, log_dir / f"load-server-{port}.log")
            base_url = f"http://127.0.0.1:{port}"
        else:
            base_url, keys = args.base_url.rstrip("/"), [args.api_key] * (args.clients + 1)

        if args.warmup > 0:
            # One client first, unmeasured: model loading and the first connections of each process.
            warm = Agent(0, base_url, keys[-1], args, Recorder(), time.monotonic() + args.warmup)
            warm.run()
        baseline = None
        if args.baseline > 0:
            alone = Recorder()
            began = time.monotonic()
            Agent(0, base_url, keys[-1], args, alone, began + args.baseline).run()
            baseline = summarize(alone, began, began + args.baseline)
        recorder = Recorder()
        started = time.monotonic()
        deadline = started + args.duration
        gap = args.clients / args.rate if args.rate else None
        agents = [Agent(i, base_url, keys[i], args, recorder, deadline, gap) for i in range(args.clients)]
        probe = Probe(base_url, keys[-1], recorder, deadline, args.probe_every) if args.serve else None
        print(f"{args.clients} clients for {args.duration:.0f} s", flush=True)
        for thread in [*agents, *([probe] if probe else [])]:
            thread.start()
        at_close = None
        if args.serve:
            # Counted at the deadline: the probe may go on waiting for its last turn's vector, and the
            # read-back takes seconds more, in which the server embeds what was waiting.
            time.sleep(max(0.0, deadline - time.monotonic()))
            at_close = embedding_pending(owner_ids).count()
        for thread in [*agents, *([probe] if probe else [])]:
            thread.join()
        loadavg_end = [round(x, 2) for x in os.getloadavg()]
        summary = summarize(recorder, started, deadline)
        accepted = [a.accepted for a in agents] + ([probe.accepted] if probe else [])
        result = {
            "config": {
                "mode": args.serve or "external",
                "base_url": base_url,
                "clients": args.clients,
                "duration": args.duration,
                "rate": args.rate,
                "turns": args.turns,
                "embedder": args.embedder,
                "cpu_count": os.cpu_count(),
                "loadavg_start": loadavg_start,
            },
            "loadavg_end": loadavg_end,
            "summary": summary,
            "baseline": baseline,
            "stored": verify_stored(base_url, keys[: args.clients] + ([keys[-1]] if probe else []), accepted),
            "finished_at": datetime.now(UTC).isoformat(),
        }
        if probe is not None:
            delays = [d * 1000 for d in probe.delays]
            result["probe"] = {"n": len(delays), "missing": probe.missing}
            if delays:
                result["probe"].update(
                    p50_ms=percentile(delays, 0.5), p95_ms=percentile(delays, 0.95), max_ms=max(delays)
                )
            result["backlog"] = embedding_backlog(owner_ids, at_close, deadline, timeout=120)
    finally:
        if server is not None:
            stop_group(server)
        if redis_proc is not None:
            stop_group(redis_proc)
    print_report(result)
    json_out.write_text(json.dumps(result, indent=2))
    print(f"\nwrote {json_out}")
    failed = summary["server_errors_5xx"] or summary["connection_errors"] or result["stored"]["missing_turns"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
