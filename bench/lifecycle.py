"""Lifecycle timing at scale: one owner with 100,000 and 1,000,000 memories.

Runs in-process against a dedicated database of the embedded PostgreSQL ("bench_lifecycle",
created and migrated if missing; its memory tables are emptied before each size), so it never
touches the service's data. Per size it:

1. inserts N memories with one INSERT … SELECT generate_series (observed_at spread over two years,
   importance 0.4–0.9, 5% permanent, access counts 0–6, nine categories), with random unit
   vectors of settings.EMBEDDING_DIM for a share of the rows (--vector-share) and NULL for the
   rest; the HNSW and GIN indexes are dropped for the insert and rebuilt afterwards (timed apart);
2. times the decay step alone on the fresh rows (every row changes: one UPDATE, with a decay event
   for each row whose strength crosses a multiple of 0.05, which on fresh rows is nearly all);
3. times one full lifecycle_run one day later, with MEMORY_OWNER_CAP above N so the cap step
   forgets nothing, and prints each step's time and counts;
4. times a second run a day later (a normal night: every row decays, few cross a 0.05 line or a
   threshold);
5. times one more run a day later with the default cap of 10,000 enforced.

The schema is the product's (migrations): nothing indexes `strength` and the table keeps half of
each page free, so decay is a HOT update (no index entry, the HNSW one included). The header
prints the server version, shared_buffers, the table's storage parameters and any index that
holds `strength` (there should be none).

Compression uses the configured LLM provider (the offline heuristic one without OPENAI_API_KEY);
summaries are embedded with the hashing embedder so no model is loaded.

Usage:
    .venv/bin/python bench/lifecycle.py                       # 100,000 and 1,000,000
    .venv/bin/python bench/lifecycle.py --sizes 100000 --vector-share 1.0
    .venv/bin/python bench/lifecycle.py --sizes 1000000 --decay-only
"""

import argparse
import tempfile
import time
from datetime import timedelta

from harness import MEMORY_COLUMNS, category_array, configure_django, execute

DATABASE = "bench_lifecycle"
TABLES = (
    "memories_memoryevent",
    "memories_memoryrelation",
    "memories_memorysource",
    "memories_memoryentity",
    "memories_dailydigest",
    "memories_corememory",
    "memories_lifecyclerun",
    "memories_memory",
)


def reset_tables() -> None:
    execute(f"TRUNCATE {', '.join(TABLES)} CASCADE")


def describe_schema() -> list[str]:
    """What the figures depend on: the server, its buffer pool, the table's storage parameters and
    the indexes that hold `strength` (any of them makes every decayed row a non-HOT update)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('server_version'), current_setting('shared_buffers')")
        version, buffers = cursor.fetchone()
        cursor.execute("SELECT coalesce(array_to_string(reloptions, ', '), '') FROM pg_class WHERE relname = %s",
                       ["memories_memory"])  # fmt: skip
        options = cursor.fetchone()[0]
        cursor.execute(
            "SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            "JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = ANY(x.indkey) "
            "WHERE x.indrelid = 'memories_memory'::regclass AND a.attname = 'strength' ORDER BY 1"
        )
        holding = [row[0] for row in cursor.fetchall()]
    return [
        f"PostgreSQL {version}, shared_buffers {buffers}",
        f"memories_memory storage parameters: {options or 'defaults'}",
        f"indexes holding strength: {', '.join(holding) or 'none'}",
    ]


def insert_memories(owner, count: int, *, vector_share: float) -> dict:
    from django.conf import settings

    dim = settings.EMBEDDING_DIM
    categories = category_array()
    vector_every = 0 if vector_share <= 0 else max(1, round(1 / vector_share))
    # The subquery mentions g so it is evaluated per row (an uncorrelated one would run once).
    vector = (
        f"CASE WHEN {vector_every} > 0 AND g %% {max(vector_every, 1)} = 0 THEN "
        f"l2_normalize((SELECT array_agg(random() - 0.5) FROM generate_series(1, {dim}) WHERE g > 0)::vector) END"
    )
    timings = {}
    execute("SET maintenance_work_mem = '1GB'")
    execute("SET max_parallel_maintenance_workers = 2")
    execute("DROP INDEX IF EXISTS memory_embedding_hnsw")
    execute("DROP INDEX IF EXISTS memory_search_gin")
    started = time.perf_counter()
    execute(
        f"""
        INSERT INTO memories_memory ({MEMORY_COLUMNS})
        SELECT gen_random_uuid(), %(owner)s, '', 'bench memory ' || g || ' about topic ' || (g %% 997),
            md5(g::text), ({categories})[1 + g %% 9], '', '', '{{}}', {vector}, '', imp, imp, imp, 1.0,
            CASE WHEN g %% 20 = 0 THEN 'permanent' ELSE 'long' END, NULL, 'active', false, '', g %% 7, NULL, 0,
            obs, 'import', NULL, obs, 1, now(), now()
        FROM (
            SELECT g, now() - random() * interval '730 days' AS obs,
                round((0.4 + random() * 0.5)::numeric, 2)::float8 AS imp
            FROM generate_series(1, %(count)s) AS g
        ) s
        """,
        {"owner": owner.pk, "count": count},
    )
    timings["insert"] = time.perf_counter() - started
    started = time.perf_counter()
    execute(
        "CREATE INDEX memory_embedding_hnsw ON memories_memory USING hnsw (embedding vector_cosine_ops) "
        "WITH (m = 16, ef_construction = 64)"
    )
    execute("CREATE INDEX memory_search_gin ON memories_memory USING gin (search_vector)")
    execute("VACUUM ANALYZE memories_memory")
    timings["index"] = time.perf_counter() - started
    return timings


def use_offline_llm_if_needed() -> str:
    from memories.services.lifecycle import common

    try:
        llm = common.lifecycle_llm()
        return type(llm).__name__
    except Exception as exc:  # the provider is still being written: a trivial stand-in keeps the bench going

        class FirstLine:
            def compress(self, *, memories):
                return [f"{len(memories)} related memories, e.g. {memories[0]}"]

            def summarize(self, *, text, max_tokens):
                return text.splitlines()[0] if text else ""

        common.lifecycle_llm = lambda: FirstLine()
        return f"stand-in ({exc.__class__.__name__})"


def fmt(seconds: float) -> str:
    return f"{seconds:8.2f} s"


def step_rows(run, only=None) -> list[tuple[str, str, str]]:
    out = []
    for step in run.steps:
        if only and step["name"] not in only:
            continue
        counts = " ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in step["counts"].items())
        out.append((f"  {step['name']}", fmt(step["duration_ms"] / 1000), counts))
    return out


def show(rows: list[tuple[str, str, str]]) -> None:
    """Print rows as they are measured, so a run stopped part-way still leaves its figures."""
    for what, took, counts in rows:
        print(f"{what:<56}  {took:>10}  {counts}", flush=True)


def bench_size(count: int, *, vector_share: float, decay_only: bool = False) -> list[tuple[str, str, str]]:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from memories.models import LifecycleRun
    from memories.services.lifecycle.common import StepContext
    from memories.services.lifecycle.decay import decay_step
    from memories.services.lifecycle.runner import lifecycle_run

    rows: list[tuple[str, str, str]] = []
    reset_tables()
    owner, _ = get_user_model().objects.get_or_create(username="bench-lifecycle")
    print(f"\n== {count:,} memories ({vector_share:.0%} with vectors) ==", flush=True)
    timings = insert_memories(owner, count, vector_share=vector_share)
    rows.append(("insert (INSERT … SELECT generate_series)", fmt(timings["insert"]), f"{count:,} rows"))
    rows.append(("rebuild HNSW + GIN indexes, VACUUM ANALYZE", fmt(timings["index"]), ""))
    print(f"inserted in {timings['insert']:.1f} s, indexes in {timings['index']:.1f} s", flush=True)

    now = timezone.now()
    context = StepContext(owner=owner, run=LifecycleRun.objects.create(owner=owner, trigger="bench"), now=now,
                          export_dir=None)  # fmt: skip
    started = time.perf_counter()
    counts, _ = decay_step(context)
    rows.append(
        (
            "decay step alone (fresh rows)",
            fmt(time.perf_counter() - started),
            f"decayed={counts['decayed']:,} checkpoints={counts['checkpoints']:,}",
        )
    )
    show(rows[-1:])
    if decay_only:
        return rows

    original_cap = settings.MEMORY_OWNER_CAP
    settings.MEMORY_OWNER_CAP = count + 1
    with tempfile.TemporaryDirectory() as export_dir:
        started = time.perf_counter()
        run = lifecycle_run(owner=owner, trigger="bench", now=now + timedelta(days=1), export_dir=export_dir)
        total = time.perf_counter() - started
    rows.append((f"full lifecycle_run (cap {count + 1:,}), status {run.status}", fmt(total), run.error[:60]))
    rows += step_rows(run)
    show(rows[-len(run.steps) - 1 :])

    started = time.perf_counter()
    run = lifecycle_run(owner=owner, trigger="bench", now=now + timedelta(days=2))
    rows.append((f"next night's run (cap {count + 1:,}), status {run.status}", fmt(time.perf_counter() - started), ""))
    rows += step_rows(run)
    show(rows[-len(run.steps) - 1 :])

    settings.MEMORY_OWNER_CAP = original_cap
    started = time.perf_counter()
    run = lifecycle_run(owner=owner, trigger="bench", now=now + timedelta(days=3))
    total = time.perf_counter() - started
    rows.append((f"run with the cap of {original_cap:,} enforced, status {run.status}", fmt(total), ""))
    rows += step_rows(run, only=("decay", "thresholds", "cap"))
    show(rows[-4:])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated memory counts")
    parser.add_argument(
        "--vector-share",
        default="1.0,0.1",
        help="share of rows with a random unit vector, per size (comma-separated; the last one repeats)",
    )
    parser.add_argument("--decay-only", action="store_true", help="stop after timing the decay step alone")
    args = parser.parse_args()
    configure_django(DATABASE, "hashing")
    print(f"LLM provider: {use_offline_llm_if_needed()}")
    for line in describe_schema():
        print(line)
    sizes = [int(s) for s in args.sizes.split(",")]
    shares = [float(s) for s in args.vector_share.split(",")]
    table = []
    for i, size in enumerate(sizes):
        share = shares[min(i, len(shares) - 1)]
        table.append((f"### {size:,} memories, {share:.0%} with vectors", "", ""))
        table += bench_size(size, vector_share=share, decay_only=args.decay_only)
    width = max(len(r[0]) for r in table)
    print()
    print(f"{'what':<{width}}  {'time':>10}  counts")
    for what, took, counts in table:
        print(f"{what:<{width}}  {took:>10}  {counts}")


if __name__ == "__main__":
    main()
