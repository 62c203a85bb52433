"""LoCoMo ranking replay: read the search's evidence once, then re-rank it offline in seconds.

`dump` reads, for the owners an earlier `bench/locomo.py` run ingested (its owners file), every
turn and searchable memory with its vector, the memories' source turns, and for each question the
rows of the service's own full-text statements (BM25 over memories, BM25F with the session score
over turns) and the query vectors, both for the question as asked and without the owner's
speakers' names (what memory_search searches turns with). `replay` rebuilds each search's
candidate pool from that as memory_search does for collections of up to EXACT_VECTOR_MAX rows
(exact nearest vectors, the full-text rows, the turns next to the best), ranks it with the
service's memories.selectors.search.fusion.candidates_rank under the settings given, flattens the
results to dia_ids as bench/locomo.py does and prints the same Recall@k table. On the owners it was
dumped from it reproduces the bench's service figures, so a ranking idea costs seconds to measure.

`--loo NAME=v1,v2 …` chooses the best setting of the grid on two conversations and scores it on the
third, for each conversation in turn (leave one conversation out): the figure to trust when a
weight is chosen on the data it is measured on.

Usage (the PROTOCOL environment and the database the bench used):
    .venv/bin/python bench/locomo_replay.py dump --owners-file bench/results/locomo-owners.json --out /tmp/dump.pkl
    .venv/bin/python bench/locomo_replay.py replay --dump /tmp/dump.pkl
    .venv/bin/python bench/locomo_replay.py replay --dump /tmp/dump.pkl --set SESSION_DIVERSITY=1 --query asked
    .venv/bin/python bench/locomo_replay.py replay --dump /tmp/dump.pkl --loo REPLY_WEIGHT=0.2,0.3 SESSION_WEIGHT=0,0.3
"""

import argparse
import itertools
import json
import math
import os
import pickle
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import locomo  # noqa: E402  (bench/ is not a package)

POOL = 200  # each source's candidates for top_k 20, as memory_search computes it
TOP_K = locomo.TOP_K


def _django():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings")
    import django

    django.setup()


def _unit(vector) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def _vector(text: str | None) -> list[float] | None:
    return _unit([float(x) for x in text.strip("[]").split(",")]) if text else None


def dump(args) -> None:
    _django()
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from memories.selectors.search.collection import owner_speakers, query_terms, source_build
    from memories.selectors.search.lexical import lexical_statement
    from memories.selectors.search.questions import without_speakers
    from memories.selectors.search.statements import (
        MEMORY_COLUMNS,
        TURN_COLUMNS,
        fetch_rows,
        memory_filters,
        turn_filters,
        vector_literal,
    )
    from memories.services.embeddings import embedding_get_many

    owners = json.loads(Path(args.owners_file).read_text())
    out = {}
    for conv, info in owners.items():
        conversation = locomo.load_conversation(Path(args.data_dir), conv)
        owner = get_user_model().objects.get(username=info["username"])
        speakers = owner_speakers(owner_id=owner.pk)
        memory_where = memory_filters(
            owner_id=owner.pk, categories=None, include_archived=True, agent=None, since=None, until=None
        )
        turn_where = turn_filters(owner_id=owner.pk, agent=None, since=None, until=None)
        with transaction.atomic(), connection.cursor() as cursor:
            turns = fetch_rows(
                cursor,
                f"SELECT {TURN_COLUMNS}, t.embedding::text AS embedding FROM chat_sessions_conversationturn t "
                "JOIN chat_sessions_chatsession s ON s.id = t.session_id WHERE t.owner_id = %s",
                [owner.pk],
            )
            memories = fetch_rows(
                cursor,
                f"SELECT {MEMORY_COLUMNS}, m.embedding::text AS embedding FROM memories_memory m "
                f"WHERE {memory_where[0]}",
                memory_where[1],
            )
            sources = fetch_rows(
                cursor,
                "SELECT ms.memory_id::text AS memory_id, ms.turn_id::text AS turn_id, ms.position "
                "FROM memories_memorysource ms JOIN memories_memory m ON m.id = ms.memory_id WHERE m.owner_id = %s",
                [owner.pk],
            )
            for row in turns + memories:
                row["embedding"] = _vector(row["embedding"])
            questions = []
            for item in conversation["questions"]:
                forms = {}
                for form, text in (
                    ("asked", item["question"]),
                    ("nameless", without_speakers(item["question"], speakers)),
                ):
                    text = text or item["question"]
                    vector = embedding_get_many(owner=owner, texts=[text], query=True)[0]
                    lexemes, stored = query_terms(cursor, query=text, owner_id=owner.pk, ef_search=100)
                    lexical = {}
                    for kind, (where, params) in (("memory", memory_where), ("turn", turn_where)):
                        source = source_build(
                            cursor, kind=kind, where=where, params=params, lexemes=lexemes, stored=stored
                        )
                        statement = lexical_statement(source, vec=vector_literal(vector), limit=POOL)
                        rows = fetch_rows(cursor, *statement) if source.lexemes else []
                        lexical[kind] = [
                            (r["id"], float(r["lexical"]), float(r.get("session_lexical") or 0.0)) for r in rows
                        ]
                    forms[form] = {"text": text, "vector": _unit(vector), "lexical": lexical}
                questions.append({**item, "forms": forms})
        out[conv] = {"turns": turns, "memories": memories, "sources": sources, "questions": questions}
        print(f"[{conv}] {len(turns)} turns, {len(memories)} memories, {len(questions)} questions", flush=True)
    Path(args.out).write_bytes(pickle.dumps(out))


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b))


def _query(question: dict, mode: str) -> tuple[list[float], str]:
    """(query vector, form whose full-text rows are used): as memory_search searches, or as asked."""
    asked, nameless = question["forms"]["asked"], question["forms"]["nameless"]
    if mode == "asked" or nameless["text"] == asked["text"]:
        return asked["vector"], "asked"
    return _unit([a + b for a, b in zip(asked["vector"], nameless["vector"])]), "nameless"


def _pool(conv: dict, question: dict, vector: list[float], form: str):
    """The candidates memory_search would rank: nearest vectors, full-text rows, neighbours of the best."""
    from memories.selectors.search.fusion import Candidate

    candidates = []
    for kind, rows in (("memory", conv["memories"]), ("turn", conv["turns"])):
        by_id = {row["id"]: row for row in rows}
        similarity = {row["id"]: _dot(row["embedding"], vector) for row in rows if row["embedding"]}
        nearest = sorted(similarity, key=lambda key: (-round(similarity[key], 12), key))[:POOL]
        found = {}
        for rank, key in enumerate(nearest, 1):
            found[key] = Candidate(type=kind, id=key, vector_rank=rank, similarity=similarity[key], row=by_id[key])
        for rank, (key, lexical, session_lexical) in enumerate(question["forms"][form]["lexical"][kind], 1):
            cand = found.get(key) or Candidate(type=kind, id=key, similarity=similarity.get(key, 0.0), row=by_id[key])
            found[key] = cand
            cand.lexical_rank, cand.lexical, cand.session_lexical = rank, lexical, session_lexical
        candidates += found.values()
        if kind == "turn":
            at = {(row["session_id"], row["sequence"]): row for row in rows}
            best = [c for c in found.values() if min(c.vector_rank or TOP_K + 1, c.lexical_rank or TOP_K + 1) <= TOP_K]
            have = {(c.row["session_id"], c.row["sequence"]) for c in found.values()}
            wanted = {(c.row["session_id"], c.row["sequence"] + d) for c in best for d in (-1, 1)} - have
            for position in sorted(wanted):
                row = at.get(position)
                if row is not None:
                    sim = similarity.get(row["id"], 0.0)
                    candidates.append(Candidate(type="turn", id=row["id"], similarity=sim, row=row))
    return candidates


def _flatten(conv: dict, ranked: list[dict], vector: list[float]) -> list[str]:
    """bench/locomo.py's flatten_results over memory_search's results (source turns closest first)."""
    turns = {row["id"]: row for row in conv["turns"]}
    results = []
    for item in ranked:
        cand = item["candidate"]
        if cand.type == "memory":
            own = [s for s in conv["sources"] if s["memory_id"] == cand.id and s["turn_id"] in turns]
            own.sort(
                key=lambda s: (
                    turns[s["turn_id"]]["embedding"] is None,
                    -_dot(turns[s["turn_id"]]["embedding"] or [], vector),
                    s["position"],
                )
            )
            results.append(
                {"type": "memory", "source_turns": [{"metadata": turns[s["turn_id"]]["metadata"]} for s in own]}
            )
        else:
            results.append({"type": "turn", "metadata": cand.row["metadata"]})
    return locomo.flatten_results(results)


def replay(dumped: dict, *, overrides: dict, mode: str) -> list[dict]:
    """Per question: conversation, category, the ranked dia_ids and their Recall@k."""
    from django.conf import settings
    from django.utils import timezone

    from memories.selectors.search.fusion import candidates_rank

    saved = settings.MEMORY_RETRIEVAL
    settings.MEMORY_RETRIEVAL = {**saved, **overrides}
    now = timezone.now()
    rows = []
    try:
        for conv_id, conv in dumped.items():
            for question in conv["questions"]:
                vector, form = _query(question, mode)
                candidates = _pool(conv, question, vector, form)
                ranked = candidates_rank(candidates, query=question["question"], now=now, top_k=TOP_K)
                dia_ids = _flatten(conv, ranked, vector)
                recall = {f"R@{k}": locomo.recall_at(dia_ids, question["evidence"], k) for k in locomo.KS}
                rows.append(
                    {"conversation": conv_id, "category": question["category"], "recall": recall, "dia_ids": dia_ids}
                )
    finally:
        settings.MEMORY_RETRIEVAL = saved
    return rows


def _r10(rows: list[dict], conversations: set[str]) -> float:
    chosen = [r["recall"]["R@10"] for r in rows if r["conversation"] in conversations]
    return sum(chosen) / len(chosen)


def _table(rows: list[dict]) -> str:
    """bench/locomo.py's recall and per-conversation tables, for the service alone."""
    scored = [{**row, "recall": {"service": row["recall"]}} for row in rows]
    conversations = sorted({row["conversation"] for row in rows})
    summary = locomo.summarise(scored, systems=("service",))
    return "\n".join(
        [
            locomo.recall_table(summary, systems=("service",)),
            locomo.per_conversation_table(scored, conversations, systems=("service",)),
        ]
    )


def _parse_value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="read the evidence of every question from the database")
    d.add_argument("--owners-file", default=str(locomo.DEFAULT_OWNERS_FILE))
    d.add_argument("--data-dir", default=str(locomo.DEFAULT_DATA_DIR))
    d.add_argument("--out", required=True)
    r = sub.add_parser("replay", help="rank the dumped evidence and print Recall@5/10/20")
    r.add_argument("--dump", required=True)
    r.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE", help="MEMORY_RETRIEVAL settings")
    r.add_argument("--loo", nargs="*", default=[], metavar="NAME=V1,V2", help="a grid to choose from, held out")
    r.add_argument(
        "--query", choices=("service", "asked"), default="service", help="as memory_search queries, or as asked"
    )
    args = parser.parse_args(argv)
    if args.command == "dump":
        dump(args)
        return 0
    _django()
    dumped = pickle.loads(Path(args.dump).read_bytes())
    fixed = {name: _parse_value(value) for name, value in (item.split("=", 1) for item in args.set)}
    mode = "asked" if args.query == "asked" else "service"
    if not args.loo:
        print(_table(replay(dumped, overrides=fixed, mode=mode)))
        return 0
    names = [item.split("=", 1)[0] for item in args.loo]
    values = [[_parse_value(v) for v in item.split("=", 1)[1].split(",")] for item in args.loo]
    grid = [dict(zip(names, combo)) for combo in itertools.product(*values)]
    results = [(setting, replay(dumped, overrides={**fixed, **setting}, mode=mode)) for setting in grid]
    conversations = sorted(dumped)
    held: list[dict] = []
    for conv in conversations:
        others = set(conversations) - {conv}
        setting, rows = max(results, key=lambda item: _r10(item[1], others))
        held += [row for row in rows if row["conversation"] == conv]
        chosen_on = f"R@10 {_r10(rows, others):.3f} on {sorted(others)}"
        print(f"held out {conv}: chose {setting} ({chosen_on}) -> {_r10(rows, {conv}):.3f}")
    print("held-out figures:\n" + _table(held))
    return 0


if __name__ == "__main__":
    sys.exit(main())
