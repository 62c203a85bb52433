"""Server time of the dashboard's overview and memory browser with 100,000 memories for one owner.

Runs in-process against a dedicated database of the embedded PostgreSQL ("bench_dashboard",
created and migrated if missing), so it never touches the service's data. The owner's rows are
inserted with INSERT … SELECT generate_series (re-used on the next run when the count matches):
N memories with random unit vectors, five statuses (80% active, 12% archived, 5% forgotten,
2% pending review, 1% rejected), nine categories, three agents, strengths and importances spread
over [0, 1]; one "add" history row per memory over the last 60 days plus updates and forgets;
sessions, turns and extraction jobs for the overview's counters.

Each request goes through Django's full stack (middleware, session auth, view, template, JSON)
with the test client, logged in as the owner; the figure is the median wall time of --repeat
requests after one warm-up, which is the server's time without the network.

Usage:
    .venv/bin/python bench/dashboard.py                 # 100,000 memories, 7 requests per line
    .venv/bin/python bench/dashboard.py --memories 20000 --repeat 5
"""

import argparse
import json
import statistics
import time

from harness import MEMORY_COLUMNS, REPO, category_array, configure_django, execute, scalar

DATABASE = "bench_dashboard"
OWNER = "bench-dashboard"
TARGET_MS = 300.0
TABLES = (
    "memories_memoryevent", "memories_memoryrelation", "memories_memorysource", "memories_memoryentity",
    "memories_entity", "memories_memory", "chat_sessions_extractionjob", "chat_sessions_episode",
    "chat_sessions_conversationturn", "chat_sessions_chatsession",
)  # fmt: skip
# Memory text is three of these words, so a search matches a few percent of the rows, as real text does.
WORDS = (
    "green tea",
    "coffee",
    "Porto",
    "Lisbon",
    "sister Ana",
    "Vim",
    "Emacs",
    "Django",
    "PostgreSQL",
    "hiking",
    "piano lessons",
    "budget",
    "vegetarian",
    "gluten",
    "running shoes",
    "Berlin trip",
    "tax return",
    "dentist",
    "standup at 9",
    "code review",
    "pgvector",
    "Rust",
    "TypeScript",
    "dark mode",
    "early mornings",
    "jazz",
    "cat named Miso",
    "allergy to nuts",
    "marathon",
    "Kubernetes",
    "sourdough",
    "garden",
    "bike commute",
    "Spanish classes",
    "deadline Friday",
    "quarterly report",
    "climbing",
    "sushi",
    "podcast",
    "chess",
)


def populate(owner, count: int) -> float:
    """The owner's rows, inserted set-based; returns the seconds it took (0 when re-used)."""
    from django.conf import settings

    # The owner's first_name records a completed population, so a run stopped half-way starts over.
    marker = f"populated:v2:{count}"
    if (
        owner.first_name == marker
        and scalar("SELECT count(*) FROM memories_memory WHERE owner_id = %s", [owner.pk]) == count
    ):
        return 0.0
    started = time.perf_counter()
    # The database is this bench's own: TRUNCATE leaves no dead rows, whose clean-up would make the
    # VACUUM below walk the whole HNSW index (tens of minutes on two cores).
    execute(f"TRUNCATE {', '.join(TABLES)} CASCADE")
    dim = settings.EMBEDDING_DIM
    categories = category_array()
    words = "ARRAY[" + ", ".join(f"'{w}'" for w in WORDS) + "]"
    nwords = len(WORDS)
    # The subquery mentions g so it runs per row (an uncorrelated one would run once).
    vector = f"l2_normalize((SELECT array_agg(random() - 0.5) FROM generate_series(1, {dim}) WHERE g > 0)::vector)"
    execute("SET maintenance_work_mem = '1GB'")
    execute("DROP INDEX IF EXISTS memory_embedding_hnsw")
    execute("DROP INDEX IF EXISTS memory_search_gin")
    execute(
        f"""
        INSERT INTO memories_memory ({MEMORY_COLUMNS})
        SELECT gen_random_uuid(), %(owner)s, (ARRAY['', 'work', 'home'])[1 + g %% 3],
            'Memory ' || g || ': ' || ({words})[1 + g %% {nwords}] || ' ' || ({words})[1 + (g * 7) %% {nwords}]
                || ' and ' || ({words})[1 + (g * 13) %% {nwords}],
            md5(g::text), ({categories})[1 + g %% 9], '', '', '{{}}', {vector}, '', imp, st, st, 0.9, 'long', NULL,
            CASE WHEN g %% 100 < 80 THEN 'active' WHEN g %% 100 < 92 THEN 'archived'
                 WHEN g %% 100 < 97 THEN 'forgotten' WHEN g %% 100 < 99 THEN 'pending_review' ELSE 'rejected' END,
            g %% 500 = 0, CASE WHEN g %% 100 IN (97, 98) THEN 'instruction-like content' ELSE '' END,
            g %% 7, NULL, 0, obs, (ARRAY['extraction', 'user_explicit', 'agent_write', 'import'])[1 + g %% 4],
            NULL, obs, 1, obs, obs + random() * interval '5 days'
        FROM (
            SELECT g, now() - random() * interval '60 days' AS obs,
                round((0.3 + random() * 0.6)::numeric, 2)::float8 AS imp, random() AS st
            FROM generate_series(1, %(count)s) AS g
        ) s
        """,
        {"owner": owner.pk, "count": count},
    )
    execute(
        """
        INSERT INTO memories_memoryevent (owner_id, memory_id, event_type, before, after, actor, reason, created_at)
        SELECT owner_id, id, 'add', NULL::jsonb, jsonb_build_object('content', content, 'strength', strength),
            'bench', '', created_at FROM memories_memory WHERE owner_id = %(owner)s
        UNION ALL
        SELECT owner_id, id, CASE WHEN status = 'forgotten' THEN 'forget' ELSE 'update' END,
            NULL::jsonb, jsonb_build_object('strength', strength), 'bench', '', updated_at
        FROM memories_memory WHERE owner_id = %(owner)s AND (status = 'forgotten' OR random() < 0.2)
        """,
        {"owner": owner.pk},
    )
    execute(
        """
        INSERT INTO chat_sessions_chatsession (id, owner_id, agent, channel, external_id, title, status, started_at,
            ended_at, last_activity_at, turn_count, rolling_summary, summarized_through, turn_extractions,
            memories_extracted, consolidated, consolidated_at, created_at)
        SELECT gen_random_uuid(), %(owner)s, '', 'api', '', 'bench session ' || g,
            CASE WHEN g %% 50 = 0 THEN 'open' ELSE 'ended' END, t, t, t, 10, '', 0, 0, 3, g %% 50 <> 0, t, t
        FROM (SELECT g, now() - random() * interval '60 days' AS t FROM generate_series(1, 2000) g) s
        """,
        {"owner": owner.pk},
    )
    execute(
        """
        INSERT INTO chat_sessions_conversationturn (id, owner_id, session_id, sequence, role, speaker, content,
            tool_name, tool_calls, tool_error, token_count, metadata, embedding, search_ngrams, created_at, received_at)
        SELECT gen_random_uuid(), s.owner_id, s.id, n, CASE WHEN n %% 2 = 1 THEN 'user' ELSE 'assistant' END, '',
            'bench turn ' || n, '', NULL, '', 4, '{}', NULL, '', s.started_at, s.started_at
        FROM chat_sessions_chatsession s, generate_series(1, 10) n WHERE s.owner_id = %(owner)s
        """,
        {"owner": owner.pk},
    )
    execute(
        """
        INSERT INTO chat_sessions_extractionjob (id, owner_id, session_id, kind, range_start, range_end, status,
            attempts, max_attempts, last_error, result, created_at, updated_at)
        SELECT gen_random_uuid(), owner_id, id, 'session_end', 1, 10,
            CASE WHEN random() < 0.01 THEN 'failed' WHEN random() < 0.02 THEN 'pending' ELSE 'done' END,
            1, 5, '', '{}', started_at, started_at
        FROM chat_sessions_chatsession WHERE owner_id = %(owner)s
        """,
        {"owner": owner.pk},
    )
    execute(
        "CREATE INDEX memory_embedding_hnsw ON memories_memory USING hnsw (embedding vector_cosine_ops) "
        "WITH (m = 16, ef_construction = 64)"
    )
    execute("CREATE INDEX memory_search_gin ON memories_memory USING gin (search_vector)")
    for table in ("memories_memory", "memories_memoryevent", "chat_sessions_chatsession",
                  "chat_sessions_conversationturn", "chat_sessions_extractionjob"):  # fmt: skip
        execute(f"VACUUM ANALYZE {table}")
    owner.first_name = marker
    owner.save(update_fields=["first_name"])
    return time.perf_counter() - started


def cursor_at(owner, offset: int, column: str, descending: bool) -> str:
    """The browser's cursor after `offset` rows in this order (what "Load more" sends deep in)."""
    from dashboard.selectors.browse_query import cursor_encode
    from memories.models import Memory

    order = (f"-{column}", "-id") if descending else (column, "id")
    row = Memory.objects.filter(owner=owner).exclude(status="forgotten").order_by(*order).values(column, "id")[offset]
    return cursor_encode(row[column], row["id"])


def timed(client, url: str, params: dict | None, repeat: int) -> tuple[float, float, int]:
    response = client.get(url, params or {})
    assert response.status_code == 200, (url, response.status_code, response.content[:300])
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url, params or {})
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
    return statistics.median(samples), max(samples), len(response.content)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    configure_django(DATABASE, "hashing")

    from django.contrib.auth import get_user_model
    from django.test import Client

    owner, _ = get_user_model().objects.get_or_create(username=OWNER)
    print(f"populating {args.memories:,} memories for {OWNER!r} in {DATABASE!r}…", flush=True)
    seconds = populate(owner, args.memories)
    print(f"  {'re-used existing rows' if not seconds else f'inserted and indexed in {seconds:.1f} s'}", flush=True)
    client = Client()
    client.force_login(owner)
    half = int(args.memories * 0.9) // 2
    api = "/dashboard/api/memories/"
    cases = [
        ("overview page  /", "/", None),
        ("memory browser page  /memories/", "/memories/", None),
        ("browser JSON, first page (updated ↓)", api, None),
        ("browser JSON, page at row ~45,000 (updated ↓)", api, {"cursor": cursor_at(owner, half, "updated_at", True)}),
        ("browser JSON, sort strength ↓", api, {"sort": "strength"}),
        ("browser JSON, sort strength ↓ at row ~45,000", api,
         {"sort": "strength", "cursor": cursor_at(owner, half, "strength", True)}),
        ("browser JSON, sort importance ↑", api, {"sort": "importance", "dir": "asc"}),
        ("browser JSON, category=fact", api, {"category": "fact"}),
        ("browser JSON, status=archived, strength 0.2–0.5", api,
         {"status": "archived", "min_strength": "0.2", "max_strength": "0.5"}),
        ("browser JSON, agent=work, source=import", api, {"agent": "work", "source": "import"}),
        ("browser JSON, hybrid search q='sister Ana in Porto'", api, {"q": "sister Ana in Porto"}),
        ("memory browser page with search", "/memories/", {"q": "sister Ana in Porto"}),
        ("overview JSON (live refresh)", "/dashboard/api/overview/", None),
        ("decay page", "/decay/", None),
        ("graph JSON (1,500 strongest)", "/dashboard/api/graph/", None),
    ]  # fmt: skip
    results = []
    print(f"\nmedian of {args.repeat} requests after a warm-up (target {TARGET_MS:.0f} ms for the pages)\n")
    print(f"{'request':58} {'median':>9} {'max':>9} {'bytes':>9}")
    for label, url, params in cases:
        median, worst, size = timed(client, url, params, args.repeat)
        results.append({"request": label, "url": url, "params": params, "median_ms": round(median, 1),
                        "max_ms": round(worst, 1), "bytes": size})  # fmt: skip
        flag = "" if median < TARGET_MS else "  over target"
        print(f"{label:58} {median:7.1f} ms {worst:7.1f} ms {size:9,}{flag}", flush=True)
    out = REPO / "bench" / "results" / "dashboard.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"memories": args.memories, "repeat": args.repeat, "results": results}, indent=2))
    print(f"\nwritten to {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
