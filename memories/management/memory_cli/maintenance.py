"""`manage.py memory stats`, `link-entities` and `reembed`: looking after an owner's stored memories."""

from django.core.management.base import CommandError
from django.utils import timezone

from memories.management.tables import render_table
from memories.models import Memory, MemoryEntity, Status
from memories.selectors.owner_stats import owner_stats
from memories.services.entities import memory_entities_link
from memories.services.reembed import embedding_dimension_problem, embeddings_recompute, embeddings_recompute_total
from memory_project.cli import Progress, command_owner
from sessions.models import ExtractionJob


class MaintenanceCommands:
    """Mixed into `manage.py memory`'s Command, which gives self._owner and self.stdout."""

    # -- stats -----------------------------------------------------------------------------------

    def _stats(self, *, owner, **_):
        owner = command_owner(owner)
        stats = owner_stats(owner=owner)
        counts = stats["memories"]
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
        self.stdout.write("")
        self.stdout.write(f"Average strength (active):   {_num(stats['active']['strength'])}")
        self.stdout.write(f"Average importance (active): {_num(stats['active']['importance'])}")
        self.stdout.write(f"Strong enough to pin:        {stats['pinnable']}")
        by_status = stats["sessions"]
        self.stdout.write("")
        self.stdout.write(
            render_table(
                ["sessions", "open", "ended", "consolidated", "awaiting consolidation", "turns", "episodes"],
                [
                    [
                        sum(by_status.values()),
                        by_status.get("open", 0),
                        by_status.get("ended", 0),
                        stats["consolidated"],
                        stats["awaiting_consolidation"],
                        stats["turns"],
                        stats["episodes"],
                    ]
                ],
            )
        )
        self.stdout.write("")
        self.stdout.write(
            render_table(
                ["extraction queue", *ExtractionJob.JobStatus.values],
                [["jobs", *[stats["jobs"].get(s, 0) for s in ExtractionJob.JobStatus.values]]],
            )
        )

    # -- link-entities / reembed ------------------------------------------------------------------

    def _link_entities(self, *, owner, all, **_):  # noqa: A002 - the option is --all
        memories = Memory.objects.all() if all else Memory.objects.filter(owner=command_owner(owner))
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
        owners = None if all else [command_owner(owner)]
        problem = embedding_dimension_problem()
        if problem:
            raise CommandError(problem)
        started = timezone.now()
        progress = Progress(self.stderr, embeddings_recompute_total(owners=owners), "reembed")
        counts = embeddings_recompute(owners=owners, batch_size=batch_size, advance=progress.advance)
        progress.finish()
        seconds = (timezone.now() - started).total_seconds()
        self.stdout.write(
            render_table(["memories", "turns", "episodes", "seconds"], [[*counts.values(), f"{seconds:.1f}"]])
        )


def _num(value) -> str:
    return "-" if value is None else f"{value:.3f}"
