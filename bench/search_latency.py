"""Search latency over one owner's memories: the service's selector against a bare pgvector query.

The script runs in-process against a dedicated database of the embedded PostgreSQL
(EMBEDDED_PG_DATABASE, default "bench_memory", created and migrated if missing), so it never touches
the service's data. It creates an owner, bulk-inserts N memories straight through the ORM (the
service's per-owner cap and its write path are bypassed on purpose: this measures reads), and then
times, per query:

- service:  memories.services.search.memory_search_run(owner, query, top_k=10, scope="memories"),
            which embeds the query, runs the vector and full-text candidate queries and ranks them;
- baseline: SELECT id ... ORDER BY embedding <=> q LIMIT 10 for the same owner and the same query
            vector, in a transaction with the same SET LOCAL hnsw.iterative_scan / ef_search;
- http:     POST /api/v1/search/ (same arguments) when --base-url or --serve-port is given.

Memory text is generated from templates (people, projects, tools, places), so full-text matching
sees a realistic spread of common and rare words. Vectors (--vectors):

- embed:  the configured embedder (--embedder local = all-MiniLM-L6-v2, hashing = feature hashing)
          embeds each memory; realistic neighbourhoods, but the local model needs minutes per 10k
          memories on a small CPU (6.5 minutes on two busy vCPUs).
- random: random unit vectors, for scale runs (e.g. --memories 100000) where embedding every text
          is too slow; queries are still embedded by the provider, so the vector side sees an
          unclustered space, which is harder for HNSW than real data (a pessimistic figure).

Every query string is used once (runs and the HTTP pass get disjoint query sets, and the bench
database's embedding cache is emptied first), so no measurement is served from the embedding cache:
each service figure includes embedding the query.
The baseline gets the vector precomputed. Each figure is the median over --runs of that run's
median (or p95).

Usage:
    .venv/bin/python bench/search_latency.py                      # 10,000 memories, local embedder
    .venv/bin/python bench/search_latency.py --serve-port 8124    # also through HTTP
    .venv/bin/python bench/search_latency.py --memories 100000 --vectors random
"""

import argparse
import http.client
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from harness import REPO, configure_django, server_wait, service_python

DEFAULT_JSON_OUT = REPO / "bench" / "results" / "search_latency.json"
DEFAULT_DATABASE = "bench_memory"
TOP_K = 10
INSERT_BATCH = 1000
HNSW_INDEX = "memory_embedding_hnsw"
EMBED_BATCH = 256

BASELINE_SQL = "SELECT id FROM memories_memory WHERE owner_id = %s ORDER BY embedding <=> %s::vector LIMIT %s"

PEOPLE = (
    "Alice Alex Priya Jonas Mei Carlos Fatima Liam Sofia Kenji Amara Noah Elena Ravi Hannah Omar Chloe Mateo "
    "Yuki Daniel Zara Ethan Ingrid Tomasz Leila Marcus Aisha Pedro Nora Viktor"
).split()
RELATIONS = "sister brother mother father cousin manager colleague neighbour partner friend daughter son".split()
CITIES = (
    "Lisbon Berlin Toronto Osaka Nairobi Denver Melbourne Krakow Austin Seattle Dublin Singapore Oslo Porto "
    "Montreal Edinburgh Bogota Tallinn Vancouver Lyon"
).split()
JOBS = (
    "nurse data engineer teacher architect pharmacist product designer accountant firefighter translator "
    "chef photographer lawyer carpenter veterinarian pilot"
).split(" ")
COMPANIES = "Acme Globex Initech Umbrella Stark Hooli Vandelay Wayne Soylent Tyrell Cyberdyne Oscorp".split()
DRINKS = ("oat milk latte", "green tea", "espresso", "sparkling water", "chai", "cold brew", "hot chocolate")
FOODS = ("sushi", "spicy curry", "mushrooms", "olives", "cilantro", "blue cheese", "oysters", "tofu", "pineapple pizza")
GENRES = ("jazz", "lo-fi hip hop", "classical piano", "synthwave", "bossa nova", "metal", "folk", "ambient")
ACTIVITIES = ("coding", "running", "cooking", "reading", "commuting", "writing reports", "gardening")
PETS = ("dog", "cat", "parrot", "rabbit", "turtle", "hamster")
PET_NAMES = "Biscuit Luna Pepper Miso Olive Rocket Waffles Nala Ziggy Maple Tofu Bruno".split()
HOBBIES = tuple(
    "pottery, rock climbing, chess, salsa dancing, birdwatching, woodworking, sailing, knitting, photography, "
    "marathon training".split(", ")
)
PROJECTS = "Atlas Beacon Cobalt Dynamo Ember Falcon Granite Helix Ion Juniper Kestrel Lumen Meridian Nimbus".split()
TECH = tuple(
    "PostgreSQL Redis Kafka Django FastAPI React Terraform Kubernetes SQLite Elasticsearch RabbitMQ Celery pgvector "
    "Rust Go".split()
)
PURPOSES = ("caching", "the job queue", "full-text search", "billing", "the admin dashboard", "analytics", "auth")
PLATFORMS = ("Fly.io", "AWS Lambda", "a Hetzner VM", "Render", "Google Cloud Run", "the on-prem cluster")
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
ERRORS = (
    "connection pool exhausted",
    "deadlock detected",
    "out of memory",
    "SSL handshake timeout",
    "migration lock held",
    "disk quota exceeded",
    "certificate expired",
    "rate limit exceeded",
)
FIXES = (
    "raise the pool size and close idle connections",
    "retry the transaction with a short backoff",
    "stream the rows instead of loading them at once",
    "rotate the certificate and restart the proxy",
    "run the migration outside business hours",
    "clear the build cache",
)
TASKS = (
    "renew the passport",
    "book the dentist",
    "send the quarterly report",
    "call the landlord",
    "water the plants",
    "pay the electricity bill",
    "update the résumé",
    "back up the laptop",
)
REASONS = ("it was cheaper", "latency was too high", "the team knows it better", "licensing changed", "it scales")
EVENTS = ("merging to main", "a release", "a demo", "deleting data", "a customer call", "travelling abroad")
RULE_ACTIONS = ("run the full test suite", "ask for a review", "take a snapshot", "check the on-call rota")

CATEGORY_TEMPLATES = {
    "preference": (
        "{p} prefers {drink} in the morning and avoids {food}.",
        "{p} listens to {genre} while {activity}.",
        "{p} likes to spend weekends on {hobby} and dislikes crowded places.",
        "{p} wants answers kept short and with code examples in {tech}.",
    ),
    "fact": (
        "{p}'s {rel} lives in {city} and works as a {job}.",
        "{p} has a {pet} named {petname} adopted in {year}.",
        "{p} works as a {job} at {company} in {city}.",
        "{p} moved to {city} in {year} and took up {hobby}.",
        "{p} is allergic to {food} since childhood.",
    ),
    "project": (
        "Project {proj} uses {tech} for {purpose} and deploys to {platform}.",
        "The {proj} team ships a release every {day}; {p} owns the roadmap.",
    ),
    "decision": ("Decided to move {proj} from {tech} to {tech2} because {reason}.",),
    "workflow": ("Before a release of {proj}, {p} runs the smoke tests and updates the changelog on {day}.",),
    "skill": ("To fix '{error}' in {tech}, {fix}.",),
    "error": ("{tech} failed with '{error}' in {proj} during the {day} deploy.",),
    "rule": ("Always {rule} before {event}.",),
    "todo": ("Remind {p} to {task} before {day}.",),
}
QUERY_TEMPLATES = (
    "what does {p} like to drink in the morning",
    "where does {p}'s {rel} live",
    "what is the name of {p}'s {pet}",
    "where does {p} work",
    "which food is {p} allergic to",
    "what music does {p} listen to while {activity}",
    "what does {p} do on weekends",
    "what is project {proj} using for {purpose}",
    "where is {proj} deployed",
    "why did we move {proj} away from {tech}",
    "how do I fix {error} in {tech}",
    "what should happen before {event}",
    "what do I need to remind {p} about",
    "when did {p} move to {city}",
    "who owns the {proj} roadmap",
    "steps before releasing {proj}",
    "{tech} {error}",
    "{p} {hobby}",
    "does {p} have any pets",
    "what does {p}'s {rel} do for a living",
)


# ------------------------------------------------------------------------------------------------
# Text generation
# ------------------------------------------------------------------------------------------------


def slots(rng: random.Random) -> dict:
    tech, tech2 = rng.sample(TECH, 2)
    return {
        "p": rng.choice(PEOPLE),
        "rel": rng.choice(RELATIONS),
        "city": rng.choice(CITIES),
        "job": rng.choice(JOBS),
        "company": rng.choice(COMPANIES),
        "drink": rng.choice(DRINKS),
        "food": rng.choice(FOODS),
        "genre": rng.choice(GENRES),
        "activity": rng.choice(ACTIVITIES),
        "pet": rng.choice(PETS),
        "petname": rng.choice(PET_NAMES),
        "hobby": rng.choice(HOBBIES),
        "proj": rng.choice(PROJECTS),
        "tech": tech,
        "tech2": tech2,
        "purpose": rng.choice(PURPOSES),
        "platform": rng.choice(PLATFORMS),
        "day": rng.choice(WEEKDAYS),
        "error": rng.choice(ERRORS),
        "fix": rng.choice(FIXES),
        "task": rng.choice(TASKS),
        "reason": rng.choice(REASONS),
        "event": rng.choice(EVENTS),
        "rule": rng.choice(RULE_ACTIONS),
        "year": rng.randint(1998, 2025),
    }


def memory_texts(count: int, seed: int) -> list[tuple[str, str]]:
    """(category, content) pairs; a category's share follows how often agents write it."""
    rng = random.Random(seed)
    weights = {"preference": 25, "fact": 35, "project": 12, "decision": 6, "workflow": 5, "skill": 5}
    weights.update({"error": 4, "rule": 3, "todo": 5})
    categories = list(weights)
    out = []
    for category in rng.choices(categories, weights=[weights[c] for c in categories], k=count):
        out.append((category, rng.choice(CATEGORY_TEMPLATES[category]).format(**slots(rng))))
    return out


def query_sets(count: int, sets: int, seed: int) -> list[list[str]]:
    """`sets` disjoint lists of `count` distinct queries, so no query repeats within the process."""
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    attempts = 0
    while len(seen) < count * sets:
        attempts += 1
        if attempts > count * sets * 200:
            raise RuntimeError(f"could not generate {count * sets} distinct queries; lower --queries or --runs")
        seen.setdefault(rng.choice(QUERY_TEMPLATES).format(**slots(rng)), None)
    queries = list(seen)
    return [queries[i * count : (i + 1) * count] for i in range(sets)]


# ------------------------------------------------------------------------------------------------
# Setup
# ------------------------------------------------------------------------------------------------


def random_unit_vectors(rng, count: int, dim: int):
    vectors = rng.standard_normal((count, dim)).astype("float32")
    vectors /= (vectors**2).sum(axis=1, keepdims=True) ** 0.5
    return vectors


def insert_memories(owner, count: int, *, vectors: str, seed: int) -> dict:
    import numpy as np
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    from memories.models import Memory, Retention, Source
    from memories.providers.embeddings import get_embedder
    from memory_project.text import content_hash

    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    embedder = get_embedder()
    texts = memory_texts(count, seed)
    now = timezone.now()
    embed_seconds = insert_seconds = 0.0
    with connection.cursor() as cursor:
        # Inserting into the HNSW index row by row cost ~30 ms a row on two busy cores (an hour for
        # 100,000); building it once after the load takes a minute or two. The bench database is
        # dedicated, so its index is dropped and rebuilt as the model defines it.
        cursor.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
    hnsw = next(index for index in Memory._meta.indexes if index.name == HNSW_INDEX)
    for start in range(0, count, INSERT_BATCH):
        batch = texts[start : start + INSERT_BATCH]
        began = time.perf_counter()
        if vectors == "random":
            batch_vectors = list(random_unit_vectors(np_rng, len(batch), settings.EMBEDDING_DIM))
        else:
            batch_vectors = []
            for offset in range(0, len(batch), EMBED_BATCH):
                batch_vectors += embedder.embed([content for _, content in batch[offset : offset + EMBED_BATCH]])
        embed_seconds += time.perf_counter() - began
        rows = []
        for (category, content), vector in zip(batch, batch_vectors):
            importance = rng.choice((0.4, 0.6, 0.8))
            # One in ten faded far enough to be archived, as a lived-in store would have.
            archived = rng.random() < 0.1
            strength = rng.uniform(0.05, 0.2) if archived else rng.uniform(0.3, 1.0)
            observed = now - timedelta(days=rng.uniform(0, 365))
            rows.append(
                Memory(
                    owner=owner,
                    content=content,
                    content_hash=content_hash(content),
                    category=category,
                    embedding=vector,
                    importance=importance,
                    strength=strength,
                    base_strength=strength,
                    # Permanent retention keeps every row searchable: a "long" memory expires
                    # 30 days after it was observed, which would hide most of a year-old store.
                    retention=Retention.PERMANENT,
                    status="archived" if archived else "active",
                    source=Source.IMPORT,
                    observed_at=observed,
                    last_reinforced_at=observed,
                )
            )
        began = time.perf_counter()
        Memory.objects.bulk_create(rows, batch_size=INSERT_BATCH)
        insert_seconds += time.perf_counter() - began
        done = min(start + INSERT_BATCH, count)
        if done % (10 * INSERT_BATCH) == 0 or done == count:
            print(f"  inserted {done:,}/{count:,}", flush=True)
    began = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '512MB'")
    with connection.schema_editor() as editor:
        editor.add_index(Memory, hnsw)
    index_seconds = time.perf_counter() - began
    began = time.perf_counter()
    with connection.cursor() as cursor:
        # Fresh rows have no planner statistics, hint bits or visibility map yet; a real store
        # would have been vacuumed and analyzed by autovacuum long since. The insert trigger wrote
        # the memories' full-text postings too (~7 a memory): left to autovacuum, their first
        # statistics and vacuum came in the middle of the timed runs (the lexical statement planned
        # without statistics, a run's median 77 ms instead of 11).
        for table in ("memories_memory", "memories_searchposting"):
            cursor.execute(f"VACUUM ANALYZE {table}")
    return {
        "embed_seconds": round(embed_seconds, 3),
        "insert_seconds": round(insert_seconds, 3),
        "index_seconds": round(index_seconds, 3),
        "analyze_seconds": round(time.perf_counter() - began, 3),
        "embedder": embedder.name,
    }


def refresh_search_stats(owner) -> float:
    """The owner's BM25 statistics, as the service keeps them (refreshed off the query path)."""
    from memories.models import SearchCorpus
    from memories.services.search_stats import search_stats_refresh

    began = time.perf_counter()
    search_stats_refresh(owner_id=owner.pk, corpus=SearchCorpus.MEMORY)
    return time.perf_counter() - began


# ------------------------------------------------------------------------------------------------
# Measurement
# ------------------------------------------------------------------------------------------------


def delete_owner(owner) -> None:
    # The service's own erasure: set-based deletes of every row that leads to the owner (memories,
    # postings, the access log of the HTTP pass...), so a table added later is not left behind.
    from erasure.services import owner_erase

    owner_erase(owner_id=owner.pk, requested_by="bench/search_latency.py", delete_account=True)


def vector_literal(vector) -> str:
    return "[" + ",".join(f"{float(v):.7g}" for v in vector) + "]"


def baseline_search(owner_id, vector, ef_search: int) -> tuple[list, float]:
    from django.db import connection, transaction

    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
        cursor.execute(BASELINE_SQL, [owner_id, vector_literal(vector), TOP_K])
        ids = [row[0] for row in cursor.fetchall()]
    return ids, (time.perf_counter() - started) * 1000


def baseline_plan(owner_id, vector, ef_search: int) -> list[str]:
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + BASELINE_SQL, [owner_id, vector_literal(vector), TOP_K])
        # The 384 numbers of the query vector would bury the plan.
        return [re.sub(r"'\[[^\]]*\]'", "'[query vector]'", row[0]) for row in cursor.fetchall()]


def service_search(owner, query: str) -> tuple[dict, float]:
    from memories.services.search import memory_search_run

    started = time.perf_counter()
    response = memory_search_run(owner=owner, query=query, top_k=TOP_K, scope="memories")
    return response, (time.perf_counter() - started) * 1000


def embed_queries(queries: list[str]) -> tuple[list, list[float]]:
    """Each query embedded alone by the query embedder, as the service does; the timings show its
    share of a search, and the baseline searches with the very vector the service uses."""
    from memories.providers.embeddings import get_embedder
    from memory_project.text import normalize

    embedder = get_embedder(query=True)
    vectors, timings = [], []
    for query in queries:
        started = time.perf_counter()
        vectors.append(embedder.embed([normalize(query)])[0])
        timings.append((time.perf_counter() - started) * 1000)
    return vectors, timings


def measure_in_process(owner, queries: list[str], ef_search: int) -> dict:
    from memory_project.background import background_drain

    vectors, embed_ms = embed_queries(queries)
    service_ms, took_ms, baseline_ms, service_n, baseline_n = [], [], [], [], []
    for i, (query, vector) in enumerate(zip(queries, vectors)):
        # Each measurement starts with the service's off-path work (access statistics, written by a
        # background thread without a broker) finished: on two cores it would otherwise slow
        # whichever query runs next, the baseline's half of the time.
        background_drain()
        # Alternate who goes first so neither always finds the buffers warmed by the other.
        if i % 2:
            ids, base = baseline_search(owner.pk, vector, ef_search)
            background_drain()
            response, wall = service_search(owner, query)
        else:
            response, wall = service_search(owner, query)
            background_drain()
            ids, base = baseline_search(owner.pk, vector, ef_search)
        service_ms.append(wall)
        took_ms.append(response["took_ms"])
        baseline_ms.append(base)
        service_n.append(len(response["results"]))
        baseline_n.append(len(ids))
    return {
        "service_ms": stats(service_ms),
        "service_took_ms": stats(took_ms),
        "query_embed_ms": stats(embed_ms),
        "baseline_ms": stats(baseline_ms),
        "service_results_mean": statistics.fmean(service_n),
        "baseline_results_mean": statistics.fmean(baseline_n),
    }


class HttpClient:
    """Keep-alive JSON over the standard library, so wall times exclude connection setup."""

    def __init__(self, base_url: str, key: str):
        parts = urlsplit(base_url)
        self.cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self.host, self.port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.headers = {"Authorization": f"Token {key}", "Content-Type": "application/json"}
        self.conn = self.cls(self.host, self.port, timeout=120)

    def post(self, path: str, body: dict) -> tuple[int, dict | str]:
        payload = json.dumps(body).encode()
        try:
            self.conn.request("POST", self.prefix + path, body=payload, headers=self.headers)
            response = self.conn.getresponse()
        except (http.client.HTTPException, ConnectionError):
            # The server drops keep-alive connections left idle during the in-process pass; a
            # search changes nothing, so sending it again on a new connection is safe.
            self.conn.close()
            self.conn = self.cls(self.host, self.port, timeout=120)
            self.conn.request("POST", self.prefix + path, body=payload, headers=self.headers)
            response = self.conn.getresponse()
        raw = response.read().decode("utf-8", "replace")
        try:
            return response.status, json.loads(raw)
        except json.JSONDecodeError:
            return response.status, raw

    def close(self):
        self.conn.close()


def measure_http(client: HttpClient, queries: list[str]) -> dict:
    """Latency of the successful searches; failures are counted and kept, not timed."""
    wall_ms, took_ms, errors = [], [], []
    for query in queries:
        started = time.perf_counter()
        status, body = client.post("/api/v1/search/", {"query": query, "top_k": TOP_K, "scope": "memories"})
        elapsed = (time.perf_counter() - started) * 1000
        if status != 200:
            errors.append({"query": query, "status": status, "body": str(body)[:500]})
            continue
        wall_ms.append(elapsed)
        took_ms.append(body["took_ms"])
    if not wall_ms:
        raise RuntimeError(f"every HTTP search failed, e.g. {errors[0]}")
    return {"http_wall_ms": stats(wall_ms), "http_took_ms": stats(took_ms), "http_errors": errors}


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p * len(ordered)) - 1))]


def stats(values: list[float]) -> dict:
    return {
        "n": len(values),
        "median": round(statistics.median(values), 3),
        "p95": round(percentile(values, 0.95), 3),
        "max": round(max(values), 3),
    }


# ------------------------------------------------------------------------------------------------
# Server for the HTTP pass
# ------------------------------------------------------------------------------------------------


def start_server(port: int, database: str, embedder: str) -> subprocess.Popen:
    """A service process on the bench database, so HTTP searches see the bench owner."""
    env = {**os.environ, "EMBEDDED_PG_DATABASE": database, "EMBEDDING_PROVIDER": embedder, "PORT": str(port)}
    log_path = REPO / "bench" / "results" / f"search_latency-server-{port}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [service_python(), "manage.py", "serve", "--no-demo", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server_wait(process, port, log_path, stop=stop_server)
    return process


def stop_server(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# ------------------------------------------------------------------------------------------------
# Main
# ------------------------------------------------------------------------------------------------


STAT_ROWS = (
    ("service (memory_search_run wall)", "service_ms"),
    ("  took_ms reported by it", "service_took_ms"),
    ("query embedding alone (own call)", "query_embed_ms"),
    ("baseline (bare pgvector top-10)", "baseline_ms"),
    ("HTTP POST /api/v1/search/ wall", "http_wall_ms"),
    ("  took_ms reported by it", "http_took_ms"),
)


def combine_runs(runs: list[dict]) -> dict:
    """Median over runs of each run's median and p95."""
    out = {}
    for _, key in STAT_ROWS:
        present = [r[key] for r in runs if key in r]
        if present:
            out[key] = {q: round(statistics.median(p[q] for p in present), 3) for q in ("median", "p95")}
    for key in ("service_ms", "http_wall_ms"):
        if key in out:
            out[f"{key.split('_')[0]}/baseline"] = {
                q: round(out[key][q] / out["baseline_ms"][q], 2) for q in ("median", "p95")
            }
    return out


def print_report(result: dict) -> None:
    combined, config = result["combined"], result["config"]
    print()
    print(
        f"search latency, {config['memories']:,} memories of one owner (embedder {config['embedder']}, "
        f"vectors {config['vectors']}), {config['queries']} queries x {config['runs']} runs, top_k {TOP_K}; "
        "median of runs"
    )
    print(f"{'':<34}{'median ms':>10}{'p95 ms':>10}")
    for label, key in STAT_ROWS:
        if key in combined:
            print(f"{label:<34}{combined[key]['median']:>10.2f}{combined[key]['p95']:>10.2f}")
    for key in ("service/baseline", "http/baseline"):
        if key in combined:
            print(f"{'ratio ' + key:<34}{combined[key]['median']:>9.2f}x{combined[key]['p95']:>9.2f}x")
    print()
    for index, run in enumerate(result["runs"], 1):
        cells = [f"{key} {run[key]['median']:.1f}/{run[key]['p95']:.1f}" for _, key in STAT_ROWS if key in run]
        print(f"run {index} (median/p95 ms): " + "  ".join(cells))
        for error in run.get("http_errors", [])[:3]:
            print(f"  HTTP error: {error['status']} {error['body'][:200]}")
        if len(run.get("http_errors", [])) > 3:
            print(f"  ... {len(run['http_errors'])} HTTP errors in this run")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000, help="How many memories the owner has.")
    parser.add_argument("--queries", type=int, default=200, help="Queries per run.")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=10, help="Unmeasured queries before the runs.")
    parser.add_argument("--embedder", choices=("local", "hashing"), default="local")
    parser.add_argument("--vectors", choices=("embed", "random"), default="embed")
    parser.add_argument("--database", default=DEFAULT_DATABASE, help="Dedicated embedded database.")
    parser.add_argument("--base-url", help="Also search over HTTP; the server must serve --database.")
    parser.add_argument("--serve-port", type=int, help="Start a server on this port for the HTTP pass.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="Keep the owner and its memories afterwards.")
    parser.add_argument(
        "--reuse-owner", metavar="USERNAME", help="Measure an owner kept by an earlier --keep run (no insert)."
    )
    parser.add_argument(
        "--json-out", default=str(DEFAULT_JSON_OUT), help="Relative paths are taken from the repo root."
    )
    return parser.parse_args(argv)


def clear_query_cache() -> None:
    """Forget cached query vectors, e.g. of the same seeded queries in a --reuse-owner run.

    Only queries are ever cached in the bench database (memories are embedded around the cache).
    """
    from memories.models import EmbeddingCache
    from memories.providers.embeddings import get_embedder
    from memories.services.embeddings import embedding_cache_clear_local

    EmbeddingCache.objects.filter(model=get_embedder().name).delete()
    embedding_cache_clear_local()


def prepare_owner(args):
    """A new owner with freshly inserted memories, or the kept one named by --reuse-owner."""
    from django.contrib.auth import get_user_model

    from memories.models import Memory

    if args.reuse_owner:
        owner = get_user_model().objects.get(username=args.reuse_owner)
        args.memories = Memory.objects.filter(owner=owner).count()
        # Whatever vectors that owner was given when it was created: --vectors does not apply.
        args.vectors = "as stored"
        print(f"reusing {owner.username} with {args.memories:,} memories in {args.database!r}", flush=True)
        return owner, {"reused_owner": owner.username}
    username = f"bench-latency-{datetime.now(UTC).strftime('%Y%m%d%H%M%S')}"
    owner = get_user_model().objects.create(username=username)
    print(f"inserting {args.memories:,} memories for {username} in database {args.database!r}", flush=True)
    try:
        setup = insert_memories(owner, args.memories, vectors=args.vectors, seed=args.seed)
    except BaseException:
        if not args.keep:
            delete_owner(owner)
        raise
    print(
        f"  embed {setup['embed_seconds']:.1f}s, insert {setup['insert_seconds']:.1f}s, "
        f"vector index {setup['index_seconds']:.1f}s",
        flush=True,
    )
    return owner, setup


def main(argv=None) -> int:
    args = parse_args(argv)
    configure_django(args.database, args.embedder)
    from django.conf import settings

    from memories.services.api_keys import api_key_create
    from memory_project.batching import batch_buffers_flush

    json_out = Path(args.json_out)
    json_out = json_out if json_out.is_absolute() else REPO / json_out
    json_out.parent.mkdir(parents=True, exist_ok=True)
    ef_search = settings.MEMORY_RETRIEVAL["HNSW_EF_SEARCH"]
    http_wanted = bool(args.base_url or args.serve_port)
    sets = query_sets(args.queries, args.runs * (2 if http_wanted else 1) + 1, args.seed)
    warmup, run_sets = sets[0][: args.warmup], sets[1:]

    owner, setup = prepare_owner(args)
    setup["search_stats_refresh_seconds"] = round(refresh_search_stats(owner), 3)
    print(f"  search statistics refreshed in {setup['search_stats_refresh_seconds']:.2f}s", flush=True)
    clear_query_cache()
    username = owner.username
    server = None
    try:
        measure_in_process(owner, warmup, ef_search)
        client = None
        if http_wanted:
            if args.serve_port:
                server = start_server(args.serve_port, args.database, args.embedder)
            _, raw_key = api_key_create(username=username, name="search_latency")
            client = HttpClient(args.base_url or f"http://127.0.0.1:{args.serve_port}", raw_key)
            measure_http(client, warmup)
        runs = []
        for index in range(args.runs):
            print(f"run {index + 1}/{args.runs}", flush=True)
            run = measure_in_process(owner, run_sets[index], ef_search)
            if client is not None:
                run.update(measure_http(client, run_sets[args.runs + index]))
            runs.append(run)
        first_vector = embed_queries(run_sets[0][:1])[0][0]
        result = {
            "config": {
                "memories": args.memories,
                "queries": args.queries,
                "runs": args.runs,
                "embedder": args.embedder,
                "vectors": args.vectors,
                "database": args.database,
                "top_k": TOP_K,
                "hnsw_ef_search": ef_search,
                "http": args.base_url or (f"http://127.0.0.1:{args.serve_port}" if args.serve_port else None),
                "cpu_count": os.cpu_count(),
            },
            "setup": setup,
            "runs": runs,
            "combined": combine_runs(runs),
            "baseline_plan": baseline_plan(owner.pk, first_vector, ef_search),
            "finished_at": datetime.now(UTC).isoformat(),
        }
        if client is not None:
            client.close()
    finally:
        if server is not None:
            stop_server(server)
        # The last searches' access counts wait in a buffer whose timer would fire after the
        # interpreter has shut the background pool down (an error at exit, and the counts lost).
        batch_buffers_flush()
        if not (args.keep or args.reuse_owner):
            delete_owner(owner)
    print_report(result)
    json_out.write_text(json.dumps(result, indent=2))
    print(f"\nwrote {json_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
