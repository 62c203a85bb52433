"""`manage.py memory <subcommand>`: manage one owner's memories from the shell (seed 003 §10.2).

search QUERY --owner U [--top-k N] [--scope memories|turns|all]
delete MEMORY_ID --owner U [--hard [--yes]]
stats --owner U
consolidate --owner U [--session ID]
export --owner U --format memory-md|memory-json|jsonl|learnings-md|user-md --output PATH
import PATH --owner U [--format FORMAT]   (a file, or a folder of seed files to migrate)
reembed --owner U | --all [--batch-size N]
link-entities --owner U | --all   (entities for memories written before every write path linked them)
eval --owner U --questions FILE [--k 1,5,10] [--json]
"""

import getpass
import json
import os
import sys
import tempfile
import uuid
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Avg, Count
from django.utils import timezone

from memories.management.progress import import_progress_bar
from memories.models import Memory, MemoryEntity, Status
from memories.providers.embeddings import embedder_warm_up
from memories.selectors.evaluation import QuestionsError, evaluation_table, questions_parse, retrieval_evaluate
from memories.selectors.retrieval import SCOPES, memory_search
from memories.services.actions import memory_delete_hard, memory_forget
from memories.services.embeddings import embedding_get_many
from memories.services.entities import memory_entities_link
from memories.services.extraction_jobs import extraction_job_execute
from memories.services.transfer import EXPORT_FORMATS, FORMATS, MODES, FormatError, memory_export, memory_import
from memories.services.turn_embeddings import turn_embedding_text, turn_vectors
from memory_project.cli import Progress, confirm
from sessions.models import ChatSession, ConversationTurn, Episode, ExtractionJob

CONTENT_WIDTH = 60


def _clip(value, width: int) -> str:
    text = " ".join(str("" if value is None else value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def render_table(headers: list[str], rows: list[list], *, widths: dict[int, int] | None = None) -> str:
    """Aligned columns under a header rule; column i is clipped to widths[i] when given."""
    widths = widths or {}
    cells = [[_clip(c, widths.get(i, 10_000)) for i, c in enumerate(row)] for row in rows]
    sizes = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(sizes[i]) for i, h in enumerate(headers)).rstrip()]
    lines.append("  ".join("-" * s for s in sizes))
    lines += ["  ".join(c.ljust(sizes[i]) for i, c in enumerate(row)).rstrip() for row in cells]
    return "\n".join(lines)


class Command(BaseCommand):
    help = (
        "Search, inspect and maintain an owner's memories: search, delete, stats, consolidate, export, import, reembed."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="subcommand", required=True, metavar="SUBCOMMAND")

        p = sub.add_parser("search", help="hybrid search over memories and/or conversation turns")
        p.add_argument("query")
        p.add_argument("--owner", required=True, metavar="USERNAME")
        p.add_argument("--top-k", type=int, default=10)
        p.add_argument("--scope", choices=SCOPES, default="memories")

        p = sub.add_parser("delete", help="forget a memory (kept with its history); --hard deletes the row")
        p.add_argument("memory_id")
        p.add_argument("--owner", required=True, metavar="USERNAME")
        p.add_argument("--hard", action="store_true", help="delete the memory and its history for good")
        p.add_argument("--yes", action="store_true", help="with --hard: do not ask for confirmation")

        p = sub.add_parser("stats", help="counts by category and status, strength, sessions, queue")
        p.add_argument("--owner", required=True, metavar="USERNAME")

        p = sub.add_parser("consolidate", help="consolidate ended sessions that were not consolidated yet")
        p.add_argument("--owner", required=True, metavar="USERNAME")
        p.add_argument("--session", metavar="SESSION_ID", help="only this session")

        p = sub.add_parser("export", help="write the owner's memories to a file")
        p.add_argument("--owner", required=True, metavar="USERNAME")
        p.add_argument("--format", required=True, choices=EXPORT_FORMATS, dest="fmt")
        p.add_argument("--output", required=True, metavar="PATH", help="file to write, or - for stdout")

        p = sub.add_parser("import", help="import memories from a file (or a folder); importing again changes nothing")
        p.add_argument(
            "path", help="MEMORY.md, learnings.md, memory.json, USER.md, logs/*.md|json, *.jsonl, or a folder"
        )
        p.add_argument("--owner", required=True, metavar="USERNAME")
        p.add_argument("--format", choices=FORMATS, dest="fmt", help="default: told by the file's name or content")
        p.add_argument(
            "--mode",
            choices=MODES,
            help="merge (through the merge decision) or restore (a JSONL export row for row); default: restore "
            "for a JSONL file whose every line has its id, merge otherwise",
        )

        p = sub.add_parser("link-entities", help="link memories to the entities their text names (idempotent)")
        target = p.add_mutually_exclusive_group(required=True)
        target.add_argument("--owner", metavar="USERNAME")
        target.add_argument("--all", action="store_true", help="every owner")

        p = sub.add_parser("reembed", help="recompute embeddings of memories, turns and episodes")
        target = p.add_mutually_exclusive_group(required=True)
        target.add_argument("--owner", metavar="USERNAME")
        target.add_argument("--all", action="store_true", help="every owner")
        p.add_argument("--batch-size", type=int, default=settings.EMBEDDING_BATCH_SIZE)

        p = sub.add_parser(
            "eval", help="Recall@k, MRR and latency of search on the owner's data, beside BM25 and dense baselines"
        )
        p.add_argument("--owner", required=True, metavar="USERNAME")
        p.add_argument(
            "--questions",
            required=True,
            metavar="FILE",
            help='JSON Lines: {"question": ..., "memories": [id or exact text], "turns": [id]} (- for stdin)',
        )
        p.add_argument("--k", default="1,5,10", help="the cut-offs of Recall@k, comma-separated (default 1,5,10)")
        p.add_argument("--json", action="store_true", dest="as_json", help="the full report as JSON")

    def handle(self, *args, subcommand, **options):
        getattr(self, f"_{subcommand.replace('-', '_')}")(**options)

    # -- helpers ---------------------------------------------------------------------------------

    def _owner(self, username):
        owner = get_user_model().objects.filter(username=username).first()
        if owner is None:
            raise CommandError(f"no such user: {username}")
        return owner

    def _actor(self) -> str:
        try:
            return f"cli:{getpass.getuser()}"
        except Exception:  # no login name in some containers
            return "cli"

    # -- eval ------------------------------------------------------------------------------------

    def _eval(self, *, owner, questions, k, as_json, **_):
        owner = self._owner(owner)
        try:
            ks = tuple(int(x) for x in k.split(","))
        except ValueError:
            raise CommandError(f"--k must be whole numbers separated by commas, got {k!r}") from None
        if not ks or not all(1 <= x <= settings.MAX_TOP_K for x in ks):
            raise CommandError(f"each --k must be between 1 and {settings.MAX_TOP_K}")
        try:
            if questions == "-":
                parsed = questions_parse(owner=owner, lines=sys.stdin)
            else:
                with open(questions, encoding="utf-8") as handle:
                    parsed = questions_parse(owner=owner, lines=handle)
        except OSError as exc:
            raise CommandError(f"cannot read {questions}: {exc.strerror}") from None
        except (QuestionsError, UnicodeDecodeError) as exc:
            raise CommandError(f"{questions}: {exc}") from None
        report = retrieval_evaluate(owner=owner, questions=parsed, ks=ks)
        if as_json:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        rows = ", ".join(f"{n} {scope}" for scope, n in report["rows"].items())
        self.stdout.write(f"{report['questions']} questions for {owner.get_username()}, searched in: {rows}")
        self.stdout.write(evaluation_table(report))

    # -- search ----------------------------------------------------------------------------------

    def _search(self, *, query, owner, top_k, scope, **_):
        owner = self._owner(owner)
        if not 1 <= top_k <= settings.MAX_TOP_K:
            raise CommandError(f"--top-k must be between 1 and {settings.MAX_TOP_K}")
        if not query.strip() or "\x00" in query:
            raise CommandError("the query must be non-empty text")
        # The model loads before the clock starts: "in N ms" is the search, as a running server sees it.
        embedder_warm_up()
        found = memory_search(owner=owner, query=query, top_k=top_k, scope=scope, record_access=False)
        if not found["results"]:
            self.stdout.write(f"No results for {query!r} ({found['took_ms']:.0f} ms).")
            return
        rows = []
        for rank, r in enumerate(found["results"], start=1):
            if r["type"] == "memory":
                kind = f"{r['category']}/{r['status']}"
            else:
                kind = f"turn/{r['role']}"
            rows.append([rank, f"{r['score']:.3f}", r["type"], kind, r["id"], r["content"]])
        self.stdout.write(
            render_table(["#", "score", "type", "kind", "id", "content"], rows, widths={5: CONTENT_WIDTH})
        )
        self.stdout.write(f"{len(rows)} result(s) in {found['took_ms']:.0f} ms")

    # -- delete ----------------------------------------------------------------------------------

    def _memory(self, owner, memory_id) -> Memory:
        try:
            pk = uuid.UUID(memory_id)
        except ValueError:
            raise CommandError(f"not a memory id: {memory_id}") from None
        memory = Memory.objects.filter(owner=owner, pk=pk).first()
        if memory is None:
            raise CommandError(f"no memory {memory_id} for {owner.get_username()}")
        return memory

    def _delete(self, *, memory_id, owner, hard, yes, **_):
        owner = self._owner(owner)
        memory = self._memory(owner, memory_id)
        if hard:
            confirm(self, f"Delete memory {memory_id} and its history for good?", yes=yes)
            memory_delete_hard(memory=memory, actor=self._actor())
            self.stdout.write(f"Deleted memory {memory_id} for good: {_clip(memory.content, CONTENT_WIDTH)}")
            return
        if memory.status == Status.FORGOTTEN:
            self.stdout.write(f"Memory {memory_id} was already forgotten.")
            return
        memory_forget(memory=memory, actor=self._actor(), reason="deleted with manage.py memory delete")
        self.stdout.write(f"Forgot memory {memory_id}: {_clip(memory.content, CONTENT_WIDTH)}")

    # -- stats -----------------------------------------------------------------------------------

    def _stats(self, *, owner, **_):
        owner = self._owner(owner)
        memories = Memory.objects.filter(owner=owner)
        counts = {
            (c, s): n for c, s, n in memories.order_by().values_list("category", "status").annotate(n=Count("pk"))
        }
        statuses = [s for s in Status.values if any(k[1] == s for k in counts)] or [Status.ACTIVE]
        categories = sorted({c for c, _ in counts})
        rows = []
        for category in categories:
            row = [counts.get((category, s), 0) for s in statuses]
            rows.append([category, *row, sum(row)])
        totals = [sum(counts.get((c, s), 0) for c in categories) for s in statuses]
        rows.append(["total", *totals, sum(totals)])
        self.stdout.write(f"Memories of {owner.get_username()}")
        self.stdout.write(render_table(["category", *statuses, "total"], rows))

        active = memories.filter(status=Status.ACTIVE).aggregate(strength=Avg("strength"), importance=Avg("importance"))
        pinned = memories.filter(status=Status.ACTIVE, strength__gte=settings.MEMORY_SCORING["PIN_MIN_STRENGTH"])
        self.stdout.write("")
        self.stdout.write(f"Average strength (active):   {_num(active['strength'])}")
        self.stdout.write(f"Average importance (active): {_num(active['importance'])}")
        self.stdout.write(f"Strong enough to pin:        {pinned.count()}")

        sessions = ChatSession.objects.filter(owner=owner)
        by_status = dict(sessions.order_by().values_list("status").annotate(n=Count("pk")))
        consolidated = sessions.filter(consolidated=True).count()
        waiting = sessions.filter(status=ChatSession.SessionStatus.ENDED, consolidated=False).count()
        self.stdout.write("")
        self.stdout.write(
            render_table(
                ["sessions", "open", "ended", "consolidated", "awaiting consolidation", "turns", "episodes"],
                [
                    [
                        sum(by_status.values()),
                        by_status.get("open", 0),
                        by_status.get("ended", 0),
                        consolidated,
                        waiting,
                        ConversationTurn.objects.filter(owner=owner).count(),
                        Episode.objects.filter(owner=owner).count(),
                    ]
                ],
            )
        )
        jobs = dict(ExtractionJob.objects.filter(owner=owner).order_by().values_list("status").annotate(n=Count("pk")))
        self.stdout.write("")
        self.stdout.write(
            render_table(
                ["extraction queue", *ExtractionJob.JobStatus.values],
                [["jobs", *[jobs.get(s, 0) for s in ExtractionJob.JobStatus.values]]],
            )
        )

    # -- consolidate -----------------------------------------------------------------------------

    def _consolidate(self, *, owner, session, **_):
        owner = self._owner(owner)
        sessions = ChatSession.objects.filter(owner=owner)
        if session:
            try:
                pk = uuid.UUID(session)
            except ValueError:
                raise CommandError(f"not a session id: {session}") from None
            one = sessions.filter(pk=pk).first()
            if one is None:
                raise CommandError(f"no session {session} for {owner.get_username()}")
            if one.status == ChatSession.SessionStatus.OPEN:
                raise CommandError(f"session {session} is still open: end it first (POST /api/v1/sessions/{pk}/end/)")
            if one.consolidated:
                self.stdout.write(f"Session {session} is already consolidated.")
                return
            todo = [one]
        else:
            todo = list(
                sessions.filter(status=ChatSession.SessionStatus.ENDED, consolidated=False).order_by("ended_at")
            )
        if not todo:
            self.stdout.write("No ended sessions are waiting for consolidation.")
            return
        progress = Progress(self.stderr, len(todo), "sessions")
        rows, failed = [], 0
        for item in todo:
            outcome, stats = _consolidate_one(item)
            failed += outcome not in ("done",)
            rows.append(
                [
                    str(item.pk),
                    item.turn_count,
                    outcome,
                    *(len(stats.get(k, [])) for k in ("added", "updated", "superseded", "reinforced")),
                    stats.get("skipped") or stats.get("error", ""),
                ]
            )
            progress.advance()
        progress.finish()
        self.stdout.write(
            render_table(
                ["session", "turns", "result", "added", "updated", "superseded", "reinforced", "note"],
                rows,
                widths={7: 60},
            )
        )
        if failed:
            raise CommandError(f"{failed} session(s) could not be consolidated")

    # -- export / import -------------------------------------------------------------------------

    def _export(self, *, owner, fmt, output, **_):
        owner = self._owner(owner)
        if output != "-":
            target = Path(output)
            if target.is_dir():
                raise CommandError(f"--output is a directory: {output}")
            if not target.parent.exists():
                raise CommandError(f"no such directory: {target.parent}")
        text = memory_export(owner=owner, fmt=fmt)
        if output == "-":
            self.stdout.write(text, ending="" if text.endswith("\n") else "\n")
            return
        # Written beside the target and renamed, so an interrupted export never leaves half a file.
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.stdout.write(f"Exported {owner.get_username()}'s memories as {fmt} to {target} ({len(text)} characters)")

    def _import(self, *, path, owner, fmt, mode=None, **_):
        owner = self._owner(owner)
        source = Path(path)
        if not source.exists():
            raise CommandError(f"no such file: {path}")
        try:
            with import_progress_bar(self.stderr):
                report = memory_import(owner=owner, path_or_text=source, fmt=fmt, actor=self._actor(), mode=mode)
        except FormatError as exc:
            raise CommandError(f"cannot import {path}: {exc}") from None
        self.stdout.write(f"Imported {report.source} ({report.format}) for {owner.get_username()}")
        counts = ["entries", "added", "merged", "reinforced", "superseded", "unchanged", "skipped", "digests"]
        self.stdout.write(render_table(counts, [[getattr(report, name, 0) for name in counts]]))
        if report.mode == "restore":
            self.stdout.write("restored row for row: ids, statuses, strengths and times as exported")
        for done in getattr(report, "migrated", []):
            self.stdout.write(f"migrated: {done}")
        warnings = getattr(report, "warnings", [])
        if warnings:
            self.stdout.write(f"{len(warnings)} warning(s):")
            for warning in warnings[:50]:
                where = f"{warning.file} line {warning.line}" if warning.line else warning.file
                self.stdout.write(f"  {where}: {warning.message}")
        if getattr(report, "error", ""):
            raise CommandError(f"import of {path} stopped: {report.error}")

    # -- reembed ---------------------------------------------------------------------------------

    def _link_entities(self, *, owner, all, **_):  # noqa: A002 - the option is --all
        memories = Memory.objects.all() if all else Memory.objects.filter(owner=self._owner(owner))
        memories = memories.only("pk", "owner_id", "content", "subject").order_by("pk")
        links_before = MemoryEntity.objects.filter(memory__in=memories).count()
        progress = Progress(self.stderr, memories.count(), "entities")
        for memory in memories.iterator(chunk_size=500):
            memory_entities_link(memory=memory)
            progress.advance()
        progress.finish()
        links = MemoryEntity.objects.filter(memory__in=memories).count()
        self.stdout.write(
            render_table(["memories", "links", "new links"], [[progress.total, links, links - links_before]])
        )

    def _reembed(self, *, owner, all, batch_size, **_):  # noqa: A002 - the option is --all
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        owners = None if all else [self._owner(owner)]
        # Owner 0 is nobody: the probe stays in this process (persist=False), never in the table.
        probe = embedding_get_many(owner=0, texts=["dimension probe"], persist=False)[0]
        if len(probe) != settings.EMBEDDING_DIM:
            raise CommandError(
                f"the embedding provider returns {len(probe)} dimensions but the database stores "
                f"{settings.EMBEDDING_DIM} (EMBEDDING_DIM): change one of them first"
            )

        def scoped(qs):
            return qs if owners is None else qs.filter(owner__in=owners)

        memories = scoped(Memory.objects.all())
        turns = scoped(ConversationTurn.objects.all())
        episodes = scoped(Episode.objects.all())
        total = memories.count() + turns.count() + episodes.count()
        started = timezone.now()
        progress = Progress(self.stderr, total, "reembed")
        counts = {
            "memories": _reembed_memories(memories, batch_size, progress),
            "turns": _reembed_turns(turns, batch_size, progress),
            "episodes": _reembed_episodes(episodes, batch_size, progress),
        }
        progress.finish()
        seconds = (timezone.now() - started).total_seconds()
        self.stdout.write(
            render_table(["memories", "turns", "episodes", "seconds"], [[*counts.values(), f"{seconds:.1f}"]])
        )


def _num(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def _consolidate_one(session: ChatSession) -> tuple[str, dict]:
    """Run the session's consolidation job now, in this process (creating one if it has none)."""
    job = (
        ExtractionJob.objects.filter(
            session=session, kind__in=[ExtractionJob.Kind.SESSION_END, ExtractionJob.Kind.MANUAL]
        )
        .exclude(status=ExtractionJob.JobStatus.DONE)
        .order_by("created_at")
        .first()
    )
    if job is None:
        job, _ = ExtractionJob.objects.get_or_create(
            session=session,
            kind=ExtractionJob.Kind.MANUAL,
            range_start=1 if session.turn_count else 0,
            range_end=session.turn_count,
            defaults={"owner_id": session.owner_id},
        )
    if job.status == ExtractionJob.JobStatus.DONE or job.attempts >= job.max_attempts:
        # Asked for by a person: one more attempt, whatever the automatic retries used up.
        ExtractionJob.objects.filter(pk=job.pk).update(
            status=ExtractionJob.JobStatus.PENDING, max_attempts=job.attempts + 1
        )
    outcome = extraction_job_execute(job_id=job.pk)
    if outcome.status == "skipped":
        return "busy", {"error": "a worker is consolidating it right now"}
    if outcome.status == "failed":
        return "failed", {"error": f"{outcome.error.__class__.__name__}: {outcome.error}"}
    return "done", outcome.stats.as_dict()


def _embed_owned(rows, texts: list[str]) -> list[list[float]]:
    """Vectors for `texts`, each through its row owner's cache (the cache is scoped by owner)."""
    by_owner: dict[int, list[int]] = {}
    for index, row in enumerate(rows):
        by_owner.setdefault(row.owner_id, []).append(index)
    out: list = [None] * len(rows)
    for owner_id, indexes in by_owner.items():
        for index, vector in zip(indexes, embedding_get_many(owner=owner_id, texts=[texts[i] for i in indexes])):
            out[index] = vector
    return out


def _reembed_memories(qs, batch_size: int, progress: Progress) -> int:
    done, last = 0, None
    while True:
        page = qs.order_by("pk")
        if last is not None:
            page = page.filter(pk__gt=last)
        rows = list(page.only("pk", "owner_id", "content")[:batch_size])
        if not rows:
            return done
        for row, vector in zip(rows, _embed_owned(rows, [r.content for r in rows])):
            row.embedding = vector
        Memory.objects.bulk_update(rows, ["embedding"])
        done += len(rows)
        last = rows[-1].pk
        progress.advance(len(rows))


def _reembed_turns(qs, batch_size: int, progress: Progress) -> int:
    """As at ingest (memories.services.turn_embeddings.turn_vectors), session by session in order,
    so each turn is read after the one before it."""
    done = 0
    session_ids = qs.order_by().values_list("session_id", flat=True).distinct()
    for session_id in session_ids.iterator():
        previous_text, last = None, 0
        while True:
            rows = list(
                qs.filter(session_id=session_id, sequence__gt=last)
                .order_by("sequence")
                .only("pk", "owner_id", "sequence", "speaker", "content")[:batch_size]
            )
            if not rows:
                break
            texts = [turn_embedding_text(r.speaker, r.content) for r in rows]
            before = [previous_text, *texts[:-1]]
            for row, vector in zip(rows, turn_vectors(owner=rows[0].owner_id, texts=texts, before=before)):
                row.embedding = vector
            ConversationTurn.objects.bulk_update(rows, ["embedding"])
            previous_text, last = texts[-1], rows[-1].sequence
            done += len(rows)
            progress.advance(len(rows))
    return done


def _reembed_episodes(qs, batch_size: int, progress: Progress) -> int:
    done, last = 0, None
    while True:
        page = qs.select_related("session").order_by("pk")
        if last is not None:
            page = page.filter(pk__gt=last)
        rows = list(page.only("pk", "owner_id", "summary", "session__title")[:batch_size])
        if not rows:
            return done
        texts = [r.summary or r.session.title or "session" for r in rows]
        for row, vector in zip(rows, _embed_owned(rows, texts)):
            row.embedding = vector
        Episode.objects.bulk_update(rows, ["embedding"])
        done += len(rows)
        last = rows[-1].pk
        progress.advance(len(rows))
