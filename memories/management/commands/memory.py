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
import uuid

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memories.management.memory_cli.maintenance import MaintenanceCommands
from memories.management.memory_cli.search import SearchCommands
from memories.management.memory_cli.transfer import TransferCommands
from memories.management.tables import CONTENT_WIDTH, clip, render_table
from memories.models import Memory, Status
from memories.selectors.retrieval import SCOPES
from memories.services.actions import memory_delete_hard, memory_forget
from memories.services.extraction_jobs import extraction_job_execute
from memories.services.transfer import EXPORT_FORMATS, FORMATS, MODES
from memory_project.cli import Progress, command_owner, confirm, owner_option
from sessions.models import ChatSession, ExtractionJob


class Command(SearchCommands, TransferCommands, MaintenanceCommands, BaseCommand):
    help = (
        "Search, inspect and maintain an owner's memories: search, delete, stats, consolidate, export, import, reembed."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="subcommand", required=True, metavar="SUBCOMMAND")

        p = sub.add_parser("search", help="hybrid search over memories and/or conversation turns")
        p.add_argument("query")
        owner_option(p, required=True)
        p.add_argument("--top-k", type=int, default=10)
        p.add_argument("--scope", choices=SCOPES, default="memories")

        p = sub.add_parser("delete", help="forget a memory (kept with its history); --hard deletes the row")
        p.add_argument("memory_id")
        owner_option(p, required=True)
        p.add_argument("--hard", action="store_true", help="delete the memory and its history for good")
        p.add_argument("--yes", action="store_true", help="with --hard: do not ask for confirmation")

        p = sub.add_parser("stats", help="counts by category and status, strength, sessions, queue")
        owner_option(p, required=True)

        p = sub.add_parser("consolidate", help="consolidate ended sessions that were not consolidated yet")
        owner_option(p, required=True)
        p.add_argument("--session", metavar="SESSION_ID", help="only this session")

        p = sub.add_parser("export", help="write the owner's memories to a file")
        owner_option(p, required=True)
        p.add_argument("--format", required=True, choices=EXPORT_FORMATS, dest="fmt")
        p.add_argument("--output", required=True, metavar="PATH", help="file to write, or - for stdout")

        p = sub.add_parser("import", help="import memories from a file (or a folder); importing again changes nothing")
        p.add_argument(
            "path", help="MEMORY.md, learnings.md, memory.json, USER.md, logs/*.md|json, *.jsonl, or a folder"
        )
        owner_option(p, required=True)
        p.add_argument("--format", choices=FORMATS, dest="fmt", help="default: told by the file's name or content")
        p.add_argument(
            "--mode",
            choices=MODES,
            help="merge (through the merge decision) or restore (a JSONL export row for row); default: restore "
            "for a JSONL file whose every line has its id, merge otherwise",
        )

        p = sub.add_parser("link-entities", help="link memories to the entities their text names (idempotent)")
        target = p.add_mutually_exclusive_group(required=True)
        owner_option(target)
        target.add_argument("--all", action="store_true", help="every owner")

        p = sub.add_parser("reembed", help="recompute embeddings of memories, turns and episodes")
        target = p.add_mutually_exclusive_group(required=True)
        owner_option(target)
        target.add_argument("--all", action="store_true", help="every owner")
        p.add_argument("--batch-size", type=int, default=settings.EMBEDDING_BATCH_SIZE)

        p = sub.add_parser(
            "eval", help="Recall@k, MRR and latency of search on the owner's data, beside BM25 and dense baselines"
        )
        owner_option(p, required=True)
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

    def _actor(self) -> str:
        try:
            return f"cli:{getpass.getuser()}"
        except Exception:  # no login name in some containers
            return "cli"

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
        owner = command_owner(owner)
        memory = self._memory(owner, memory_id)
        if hard:
            confirm(self, f"Delete memory {memory_id} and its history for good?", yes=yes)
            memory_delete_hard(memory=memory, actor=self._actor())
            self.stdout.write(f"Deleted memory {memory_id} for good: {clip(memory.content, CONTENT_WIDTH)}")
            return
        if memory.status == Status.FORGOTTEN:
            self.stdout.write(f"Memory {memory_id} was already forgotten.")
            return
        memory_forget(memory=memory, actor=self._actor(), reason="deleted with manage.py memory delete")
        self.stdout.write(f"Forgot memory {memory_id}: {clip(memory.content, CONTENT_WIDTH)}")

    # -- consolidate -----------------------------------------------------------------------------

    def _consolidate(self, *, owner, session, **_):
        owner = command_owner(owner)
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
