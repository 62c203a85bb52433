"""What every importer shares: the report, one parsed record, and how a record's namespace and category are settled."""

import logging
import uuid
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, time

from django.utils import timezone

from memories.drafts import MemoryContent, MemoryDraft
from memories.formats.categories import category_from_seed
from memories.models import (
    Category,
    Retention,
    Source,
    Status,
)
from memories.services.import_validation import (
    ImportProblem,
)

logger = logging.getLogger(__name__)


MODES = ("merge", "restore")


FORMATS = ("memory-md", "learnings-md", "memory-json", "user-md", "daily-log", "jsonl")


INERT_STATUSES = (Status.FORGOTTEN, Status.REJECTED)


# Statement parameters are capped (65,535 per statement): keys are looked up in chunks.
LOOKUP_CHUNK = 5000


@dataclass
class ImportWarning:
    file: str
    line: int | None
    message: str


@dataclass
class ImportReport:
    format: str
    source: str
    mode: str | None = "merge"
    entries: int = 0  # records read (memories, profile lines, log lines)
    added: int = 0  # new memories
    merged: int = 0  # folded into an existing memory (a closer statement of it)
    reinforced: int = 0  # already known: the existing memory was reinforced
    superseded: int = 0  # new memories that replaced a contradicted one
    unchanged: int = 0  # imported before, or already held word for word: nothing was changed
    skipped: int = 0  # broken or unusable entries (see warnings)
    digests: int = 0  # daily digests created or extended
    rolling_summary: bool = False
    warnings: list[ImportWarning] = field(default_factory=list)
    memory_ids: list[str] = field(default_factory=list)
    files: list["ImportReport"] = field(default_factory=list)
    migrated: list[str] = field(default_factory=list)
    error: str = ""

    def warn(self, line: int | None, message: str) -> None:
        self.warnings.append(ImportWarning(self.source, line, message))
        # The report carries the warning to the caller; the log only keeps a trace of it.
        logger.info("import %s line %s: %s", self.source, line, message)

    def absorb(self, other: "ImportReport") -> None:
        for name in ("entries", "added", "merged", "reinforced", "superseded", "unchanged", "skipped", "digests"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.rolling_summary = self.rolling_summary or other.rolling_summary
        self.warnings += other.warnings
        self.memory_ids += other.memory_ids
        self.files.append(other)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class ImportRecord(MemoryContent):
    """One memory to write, whatever file it came from."""

    line: int | None
    retention: str = Retention.LONG
    status: str = Status.ACTIVE
    agent: str | None = None
    origin: str = ""
    # Applied after the decision to memories this import created.
    preserve: dict = field(default_factory=dict)
    # A JSONL row's own id, source and last change: what a restore keeps.
    source_id: uuid.UUID | None = None
    source: str = ""
    updated_at: datetime | None = None
    relations: list = field(default_factory=list)  # [(type, target's exported id, weight)]

    def draft(self, *, agent: str, status: str | None) -> MemoryDraft:
        """The record as memory_write and memory_create take it, as an import (source "import"); its
        agent, status and source are the import's to say."""
        said = {f.name: getattr(self, f.name) for f in fields(MemoryContent)}
        return MemoryDraft(**said, agent=agent, source=Source.IMPORT, status=status)


def record_agent(record: ImportRecord, agent: str | None) -> str:
    if agent is not None:
        return agent
    return record.agent or ""


def entry_problems(warnings, report: ImportReport) -> list[ImportProblem]:
    """A parser's warnings: the entries it had to skip are bad entries (the file is refused with
    them), the rest stay warnings on the report."""
    problems = []
    for warning in warnings:
        if "skipped" in warning.message:
            problems.append(ImportProblem(warning.line, "", warning.message))
        else:
            report.warn(warning.line, warning.message)
    return problems


def category_of(report: ImportReport, line, name, *, content: str = "", context=None) -> str:
    mapped = category_from_seed(name, content=content, context=context)
    if mapped is None:
        report.warn(line, f"unknown category {name!r} imported as fact")
        return Category.FACT
    return mapped


def local_midnight(day) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min), timezone.get_current_timezone())
