"""MEMORY.md and learnings.md (seed 002 §2.3) and the USER.md profile (seed 001).

MEMORY.md layout::

    # Agent Memory

    <!-- Last updated: 2026-02-20T10:30:00 -->
    <!-- Total entries: 15 -->

    ## Active Memories

    ### [a1b2c3] preference | 0.92 | 2026-02-20 | 12
    The user likes concise code.

    ## Archived Memories

    ### [x1y2z3] fact | 0.18 | 2026-01-10 | 2
    The user once tried Vue for the front end.

Parsing is tolerant (seed 002 §8.2): a broken entry is skipped, logged and reported with its line
number; everything else still loads. Rendering always regenerates the whole file, which repairs
whatever a hand edit broke. A content line starting with ``#`` is written with a leading backslash
so it cannot be mistaken for a heading, and the backslash is removed again when parsed.
"""

import logging
import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

logger = logging.getLogger(__name__)

ACTIVE = "active"
ARCHIVED = "archived"
DEFAULT_ARCHIVE_BELOW = 0.2
MEMORY_MD_TITLE = "Agent Memory"
LEARNINGS_MD_TITLE = "Agent Learnings"
ACTIVE_HEADING = "## Active Memories"
ARCHIVED_HEADING = "## Archived Memories"

# USER.md sections, in the order they are written.
USER_MD_SECTIONS = {
    "preference": "Preferences",
    "fact": "Facts",
    "project": "Projects",
    "workflow": "Habits and workflows",
    "decision": "Decisions",
    "rule": "Rules",
    "todo": "Open items",
    "skill": "Skills",
    "error": "Lessons",
}

_STRUCTURAL = re.compile(r"^(#{1,3})(?:\s+(.*?))?\s*$")
_ENTRY = re.compile(r"^###\s+\[(?P<id>[^\]\s]+)\]\s*(?P<rest>.*)$")
_CATEGORY = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_HITS = re.compile(r"^\d+$")
_LAST_UPDATED = re.compile(r"^<!--\s*Last updated:\s*(?P<value>.*?)\s*-->$", re.IGNORECASE)
_TOTAL = re.compile(r"^<!--\s*Total entries:\s*(?P<value>.*?)\s*-->$", re.IGNORECASE)
_COMMENT = re.compile(r"^<!--.*-->$")
_ESCAPED = re.compile(r"^\\+#")


@dataclass
class MemoryMdEntry:
    """One `### [id] category | score | last_activated | hits` block."""

    id: str
    category: str
    score: float
    last_activated: date
    hits: int
    content: str
    section: str = ACTIVE


@dataclass
class ParseWarning:
    line: int
    message: str


@dataclass
class ParseResult:
    """What a parser read: its entries, what it had to warn about, and the file's own date."""

    entries: list = field(default_factory=list)
    warnings: list[ParseWarning] = field(default_factory=list)
    last_updated: datetime | None = None


@dataclass
class MemoryMdParseResult(ParseResult):
    entries: list[MemoryMdEntry] = field(default_factory=list)
    title: str | None = None
    total_entries: int | None = None


def _escape_line(line: str) -> str:
    return "\\" + line if line.startswith("#") or _ESCAPED.match(line) else line


def _unescape_line(line: str) -> str:
    return line[1:] if _ESCAPED.match(line) else line


def _section_of(title: str) -> str | None:
    lowered = title.lower()
    if lowered.startswith("archived"):
        return ARCHIVED
    if lowered.startswith("active"):
        return ACTIVE
    return None


def _parse_header(rest: str) -> tuple[str, float, date, int] | str:
    """The four `|`-separated fields after the id, or the reason they are unusable."""
    parts = [p.strip() for p in rest.split("|")]
    if len(parts) != 4:
        return f"expected 4 fields 'category | score | YYYY-MM-DD | hits', found {len(parts)}"
    category, score_text, date_text, hits_text = parts
    if not _CATEGORY.match(category):
        return f"invalid category {category!r}"
    try:
        score = float(score_text)
    except ValueError:
        return f"invalid score {score_text!r}"
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        return f"score {score_text!r} is outside [0, 1]"
    if not _DATE.match(date_text):
        return f"invalid date {date_text!r} (expected YYYY-MM-DD)"
    try:
        activated = date.fromisoformat(date_text)
    except ValueError:
        return f"invalid date {date_text!r}"
    if not _HITS.match(hits_text):
        return f"invalid hit count {hits_text!r}"
    return category.lower(), score, activated, int(hits_text)


def parse_memory_md(text: str, *, archive_below: float = DEFAULT_ARCHIVE_BELOW) -> MemoryMdParseResult:
    """Parse MEMORY.md / learnings.md text; broken entries are skipped and reported as warnings."""
    result = MemoryMdParseResult()
    seen_ids: set[str] = set()
    section: str | None = None
    # The entry being read: (heading line, id, parsed fields / error / None once reported, content lines).
    current: tuple[int, str, tuple | str | None, list[str]] | None = None
    total_line = 0

    def warn(line: int, message: str) -> None:
        result.warnings.append(ParseWarning(line, message))
        logger.warning("MEMORY.md line %s: %s", line, message)

    def finish() -> None:
        nonlocal current
        if current is None:
            return
        line_no, entry_id, parsed, lines = current
        current = None
        if parsed is None:
            return
        if isinstance(parsed, str):
            warn(line_no, f"entry [{entry_id}] skipped: {parsed}")
            return
        while lines and not lines[0].strip():
            lines.pop(0)
        while lines and not lines[-1].strip():
            lines.pop()
        content = "\n".join(lines)
        if not content:
            warn(line_no, f"entry [{entry_id}] skipped: no content")
            return
        if entry_id in seen_ids:
            warn(line_no, f"entry [{entry_id}] skipped: duplicate id")
            return
        seen_ids.add(entry_id)
        category, score, activated, hits = parsed
        entry_section = section or (ACTIVE if score >= archive_below else ARCHIVED)
        result.entries.append(MemoryMdEntry(entry_id, category, score, activated, hits, content, entry_section))

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        structural = _STRUCTURAL.match(line)
        if structural is None:
            if current is not None:
                current[3].append(_unescape_line(line))
                continue
            stripped = line.strip()
            if not stripped:
                continue
            if match := _LAST_UPDATED.match(stripped):
                try:
                    result.last_updated = datetime.fromisoformat(match["value"])
                except ValueError:
                    warn(number, f"invalid 'Last updated' value {match['value']!r}")
            elif match := _TOTAL.match(stripped):
                total_line = number
                if match["value"].isdigit():
                    result.total_entries = int(match["value"])
                else:
                    warn(number, f"invalid 'Total entries' value {match['value']!r}")
            elif not _COMMENT.match(stripped):
                warn(number, "text outside an entry ignored")
            continue
        finish()
        level, title = len(structural[1]), structural[2] or ""
        if level == 1:
            if result.title is None:
                result.title = title
        elif level == 2:
            section = _section_of(title)
            if section is None:
                warn(number, f"unknown section {title!r}: its entries are placed by score")
        else:
            entry = _ENTRY.match(line)
            if entry is None:
                warn(number, "entry skipped: heading is not '### [id] category | score | YYYY-MM-DD | hits'")
                current = (number, "?", None, [])
            else:
                current = (number, entry["id"], _parse_header(entry["rest"]), [])
    finish()
    if result.total_entries is not None and result.total_entries != len(result.entries):
        warn(total_line, f"header says {result.total_entries} entries, {len(result.entries)} parsed")
    return result


def load_memory_md(path, *, archive_below: float = DEFAULT_ARCHIVE_BELOW) -> MemoryMdParseResult:
    """Parse a MEMORY.md file; a missing file is an empty result, not an error."""
    path = Path(path)
    if not path.exists():
        return MemoryMdParseResult()
    return parse_memory_md(path.read_text(encoding="utf-8", errors="replace"), archive_below=archive_below)


def _sort_key(entry: MemoryMdEntry):
    return (-entry.score, -entry.last_activated.toordinal(), entry.id)


def split_sections(
    entries: list[MemoryMdEntry], *, archive_below: float = DEFAULT_ARCHIVE_BELOW
) -> tuple[list[MemoryMdEntry], list[MemoryMdEntry]]:
    """(active, archived), each by score descending.

    Active holds only entries scoring at least `archive_below`; an entry explicitly in the
    archived section stays there whatever its score (compression archives strong memories too).
    """
    active, archived = [], []
    for entry in entries:
        if entry.section != ARCHIVED and round(entry.score, 2) >= archive_below:
            active.append(entry)
        else:
            archived.append(entry)
    return sorted(active, key=_sort_key), sorted(archived, key=_sort_key)


def _render_entry(entry: MemoryMdEntry) -> list[str]:
    if not entry.id or "]" in entry.id or any(c.isspace() for c in entry.id):
        raise ValueError(f"invalid entry id {entry.id!r}")
    if not _CATEGORY.match(entry.category):
        raise ValueError(f"invalid category {entry.category!r}")
    score = min(1.0, max(0.0, float(entry.score)))
    heading = f"### [{entry.id}] {entry.category} | {score:.2f} | {entry.last_activated.isoformat()} | {entry.hits}"
    lines = [_escape_line(line.rstrip()) for line in entry.content.strip().splitlines()]
    return [heading, *lines, ""]


def _timestamp(value: datetime | None) -> str:
    value = value or datetime.now()
    return value.replace(tzinfo=None, microsecond=0).isoformat()


def render_memory_md(
    entries: list[MemoryMdEntry],
    *,
    title: str = MEMORY_MD_TITLE,
    updated_at: datetime | None = None,
    archive_below: float = DEFAULT_ARCHIVE_BELOW,
    notes: list[str] = (),
) -> str:
    """The whole file: Active by score descending, then Archived. `updated_at` is written as given (local time)."""
    active, archived = split_sections(entries, archive_below=archive_below)
    lines = [
        f"# {title}",
        "",
        f"<!-- Last updated: {_timestamp(updated_at)} -->",
        f"<!-- Total entries: {len(active) + len(archived)} -->",
    ]
    lines += [f"<!-- {note.replace('--', '-')} -->" for note in notes]
    lines += ["", ACTIVE_HEADING, ""]
    for entry in active:
        lines += _render_entry(entry)
    lines += [ARCHIVED_HEADING, ""]
    for entry in archived:
        lines += _render_entry(entry)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def render_learnings_md(entries: list[MemoryMdEntry], **kwargs) -> str:
    """learnings.md: the procedural layer (skill / error / rule) in the MEMORY.md format."""
    kwargs.setdefault("title", LEARNINGS_MD_TITLE)
    return render_memory_md(entries, **kwargs)


def render_user_md(
    entries: list[MemoryMdEntry], *, name: str = "", updated_at: datetime | None = None, per_section: int = 50
) -> str:
    """USER.md: what is known about the user, one bullet per memory, grouped by category."""
    groups: dict[str, list[MemoryMdEntry]] = {}
    for entry in sorted(entries, key=_sort_key):
        groups.setdefault(entry.category, []).append(entry)
    heading = f"# User Profile: {name}" if name else "# User Profile"
    lines = [heading, "", f"<!-- Last updated: {_timestamp(updated_at)} -->", ""]
    if not groups:
        lines.append("Nothing is known about the user yet.")
    order = list(USER_MD_SECTIONS) + sorted(set(groups) - set(USER_MD_SECTIONS))
    for category in order:
        items = groups.get(category)
        if not items:
            continue
        lines += [f"## {USER_MD_SECTIONS.get(category, category.capitalize())}", ""]
        for entry in items[:per_section]:
            text = " ".join(part.strip() for part in entry.content.splitlines() if part.strip())
            lines.append(f"- {text}")
        if len(items) > per_section:
            lines.append(f"- … and {len(items) - per_section} more")
        lines.append("")
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def parse_user_md(text: str) -> dict[str, list[str]]:
    """USER.md back into {section title: [items]} (for imports); anything else is ignored."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("## "):
            current = sections.setdefault(line[3:].strip(), [])
        elif current is not None and line.startswith("- ") and not line.startswith("- … and "):
            current.append(line[2:].strip())
    return sections


def file_write_atomic(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """`data` into `path` through a temporary file beside it and a rename: never half a file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def file_write_with_backup(path, text: str) -> Path | None:
    """Write `text` atomically, first copying an existing file to `<name>.bak`; returns the backup path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if path.exists():
        backup = path.with_name(path.name + ".bak")
        # The copy is atomic too, so a crash never leaves a torn backup next to a good file.
        file_write_atomic(backup, path.read_bytes())
    file_write_atomic(path, text.encode("utf-8"))
    return backup
