"""Seed 004's files: memory.json (§2.1) and the daily logs (§2.2 `logs/YYYY-MM-DD.json`, and the
v1 `logs/YYYY-MM-DD.md` its §10 migrates from).

Parsing is tolerant like MEMORY.md's: an unusable entry is skipped with a warning carrying its line
number, everything else still loads. Values are checked here (types, ranges, timestamps), category
names are left as the file wrote them: mapping them is the importer's job.
"""

import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from memories.formats.memory_md import ParseResult, ParseWarning

MEMORY_JSON_VERSION = 2


class FormatError(ValueError):
    """The whole file is unusable (not JSON, wrong top-level shape): nothing can be imported from it."""


@dataclass
class MemoryJsonEntry:
    line: int
    content: str
    category: str
    id: str = ""
    salience: float | None = None
    created_at: datetime | None = None
    last_accessed: datetime | None = None
    access_count: int = 0
    source: str = ""
    context: dict | None = None
    # Our own exports carry the exact category and state next to seed 004's fields.
    extra: dict = field(default_factory=dict)


@dataclass
class MemoryJsonParseResult(ParseResult):
    entries: list[MemoryJsonEntry] = field(default_factory=list)
    version: int | None = None
    rolling_summary: str = ""


@dataclass
class DailyLogEntry:
    line: int
    content: str
    type: str = "event"
    time: str = ""
    category: str = ""
    extra: dict = field(default_factory=dict)


@dataclass
class DailyLog:
    day: date | None
    entries: list[DailyLogEntry] = field(default_factory=list)
    warnings: list[ParseWarning] = field(default_factory=list)
    summary: str = ""
    archived: bool = False


# --- locating values in JSON text (the json module reports no positions) ------------------------

_decoder = json.JSONDecoder()
_WS = re.compile(r"\s*")


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _object_members(text: str, pos: int) -> dict[str, int]:
    """Offsets of the values of the JSON object starting at `pos`, by key (the text is known valid)."""
    offsets: dict[str, int] = {}
    pos = _skip(text, pos + 1)
    if text[pos] == "}":
        return offsets
    while True:
        key, pos = _decoder.raw_decode(text, _skip(text, pos))
        pos = _skip(text, pos) + 1  # the colon
        pos = _skip(text, pos)
        offsets[key] = pos
        _, pos = _decoder.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos] == "}":
            return offsets
        pos += 1  # the comma


def _array_items(text: str, pos: int) -> list[int]:
    """Offsets of the items of the JSON array starting at `pos` (the text is known valid)."""
    offsets: list[int] = []
    pos = _skip(text, pos + 1)
    if text[pos] == "]":
        return offsets
    while True:
        pos = _skip(text, pos)
        offsets.append(pos)
        _, pos = _decoder.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos] == "]":
            return offsets
        pos += 1


def _load(text: str):
    text = text.lstrip("\ufeff")
    try:
        return text, json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:
        # Python refuses integers of more than 4,300 digits (a guard against quadratic parsing).
        raise FormatError(f"not valid JSON: {exc}") from None
    except RecursionError:
        raise FormatError("not valid JSON: nested too deeply") from None


def _item_lines(text: str, data, key: str) -> list[int]:
    """Line numbers of `data[key]`'s items (or of `data`'s when it is the array itself)."""
    start = _skip(text, 0)
    if isinstance(data, dict):
        offset = _object_members(text, start).get(key)
        if offset is None:
            return []
        start = offset
    return [_line_of(text, p) for p in _array_items(text, start)]


# --- values -------------------------------------------------------------------------------------


def parse_timestamp(value) -> datetime | None:
    """An ISO 8601 timestamp (a trailing Z or an offset, or naive meaning UTC); ValueError if unusable."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"timestamp must be a string, not {type(value).__name__}")
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"invalid timestamp {value!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def format_timestamp(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _unit_number(value, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a number")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} {value!r} is outside [0, 1]")
    return float(value)


# --- memory.json --------------------------------------------------------------------------------

_KNOWN_MEMORY_KEYS = {
    "id",
    "category",
    "content",
    "salience",
    "created_at",
    "last_accessed",
    "access_count",
    "source",
    "context",
}


def _memory_entry(item, line: int) -> MemoryJsonEntry | str:
    if not isinstance(item, dict):
        return "not a JSON object"
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        return "no content"
    if "\x00" in content:
        return "content contains a NUL byte"
    category = item.get("category", "general")
    if not isinstance(category, str):
        return "category must be a string"
    try:
        salience = _unit_number(item.get("salience"), "salience")
        created_at = parse_timestamp(item.get("created_at"))
        last_accessed = parse_timestamp(item.get("last_accessed"))
    except ValueError as exc:
        return str(exc)
    access_count = item.get("access_count", 0)
    if isinstance(access_count, bool) or not isinstance(access_count, int) or access_count < 0:
        return f"invalid access_count {access_count!r}"
    context = item.get("context")
    if context is not None and not isinstance(context, dict):
        return "context must be a JSON object"
    return MemoryJsonEntry(
        line=line,
        content=content.strip(),
        category=category,
        id=str(item.get("id") or ""),
        salience=salience,
        created_at=created_at,
        last_accessed=last_accessed,
        access_count=access_count,
        source=str(item.get("source") or ""),
        context=context,
        extra={k: v for k, v in item.items() if k not in _KNOWN_MEMORY_KEYS},
    )


def parse_memory_json(text: str) -> MemoryJsonParseResult:
    """memory.json (an object with `memories`, or a bare array of memories); FormatError if unusable."""
    text, data = _load(text)
    result = MemoryJsonParseResult()
    if isinstance(data, dict):
        items = data.get("memories", [])
        if not isinstance(items, list):
            raise FormatError("'memories' must be an array")
        version = data.get("version")
        result.version = version if isinstance(version, int) and not isinstance(version, bool) else None
        summary = data.get("rolling_summary")
        if isinstance(summary, str):
            result.rolling_summary = summary.strip()
        elif summary is not None:
            result.warnings.append(ParseWarning(1, "rolling_summary ignored: not a string"))
        try:
            result.last_updated = parse_timestamp(data.get("last_updated"))
        except ValueError as exc:
            result.warnings.append(ParseWarning(1, f"last_updated ignored: {exc}"))
    elif isinstance(data, list):
        items = data
    else:
        raise FormatError("expected a JSON object with 'memories' or an array of memories")
    lines = _item_lines(text, data, "memories")
    for index, item in enumerate(items):
        line = lines[index] if index < len(lines) else 1
        parsed = _memory_entry(item, line)
        if isinstance(parsed, str):
            result.warnings.append(ParseWarning(line, f"memory #{index + 1} skipped: {parsed}"))
        else:
            result.entries.append(parsed)
    return result


def render_memory_json(memories: list[dict], *, rolling_summary: str = "", last_updated: datetime | None = None) -> str:
    """memory.json with `memories` already in seed 004's shape (see transfer.memory_to_seed_004)."""
    document = {
        "version": MEMORY_JSON_VERSION,
        "last_updated": format_timestamp(last_updated or datetime.now(UTC)),
        "rolling_summary": rolling_summary,
        "memories": memories,
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


# --- daily logs ---------------------------------------------------------------------------------

_DAY_IN_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})")
_TIME = r"(?:\d{1,2}:\d{2}(?::\d{2})?)"
_LOG_LINE = re.compile(
    rf"^(?:[-*+•]\s+|\d+[.)]\s+)?"
    rf"(?:(?:\*\*|\[|\()?(?P<time>{_TIME})(?:\*\*|\]|\))?\s*[-–—:]?\s*)?"
    r"(?:\[(?P<tag>[A-Za-z_/ -]{1,40})\]\s*[:：-]?\s*)?"
    r"(?P<text>.*)$"
)
_KNOWN_ENTRY_KEYS = {"time", "type", "content", "category"}


def day_from_name(name: str) -> date | None:
    match = _DAY_IN_NAME.search(name or "")
    if not match:
        return None
    try:
        return date.fromisoformat(match[1])
    except ValueError:
        return None


def _normal_time(value: str) -> str:
    parts = value.split(":")
    if len(parts) == 2:
        parts.append("00")
    return ":".join(p.zfill(2) for p in parts)


def _valid_time(value: str) -> bool:
    try:
        hours, minutes, seconds = (int(p) for p in _normal_time(value).split(":"))
    except ValueError:
        return False
    return 0 <= hours < 24 and 0 <= minutes < 60 and 0 <= seconds < 60


def parse_daily_log_json(text: str, *, name: str = "") -> DailyLog:
    """A v2 log `{"date", "entries": [{time, type, content, ...}], "summary", "archived"}`."""
    text, data = _load(text)
    if not isinstance(data, dict):
        raise FormatError("expected a JSON object with 'date' and 'entries'")
    log = DailyLog(day=None)
    raw_day = data.get("date")
    if raw_day is not None:
        try:
            log.day = date.fromisoformat(str(raw_day))
        except ValueError:
            raise FormatError(f"invalid date {raw_day!r} (expected YYYY-MM-DD)") from None
    log.day = log.day or day_from_name(name)
    items = data.get("entries", [])
    if not isinstance(items, list):
        raise FormatError("'entries' must be an array")
    summary = data.get("summary")
    log.summary = summary.strip() if isinstance(summary, str) else ""
    log.archived = data.get("archived") is True
    lines = _item_lines(text, data, "entries")
    for index, item in enumerate(items):
        line = lines[index] if index < len(lines) else 1
        if not isinstance(item, dict):
            log.warnings.append(ParseWarning(line, f"entry #{index + 1} skipped: not a JSON object"))
            continue
        content = item.get("content")
        if not isinstance(content, str) or not content.strip() or "\x00" in content:
            log.warnings.append(ParseWarning(line, f"entry #{index + 1} skipped: no usable content"))
            continue
        time = item.get("time") or ""
        if not isinstance(time, str) or (time and not _valid_time(time)):
            log.warnings.append(ParseWarning(line, f"entry #{index + 1}: invalid time {time!r} ignored"))
            time = ""
        category = item.get("category") or ""
        log.entries.append(
            DailyLogEntry(
                line=line,
                content=content.strip(),
                type=str(item.get("type") or "event"),
                time=_normal_time(time) if time else "",
                category=category if isinstance(category, str) else "",
                extra={k: v for k, v in item.items() if k not in _KNOWN_ENTRY_KEYS and not isinstance(v, dict | list)},
            )
        )
    return log


def parse_daily_log_md(text: str, *, name: str = "") -> DailyLog:
    """A v1 Markdown log: one entry per non-empty line or bullet, optionally `HH:MM` and a `[tag]` first.

    The day comes from the file name (`YYYY-MM-DD.md`) or else from a date in the first heading.
    A tag names a category (`[preference]`, seed 004's `[preferences]`…) or an entry type
    (`[event]`, `[reflection]`); untagged lines are events.
    """
    log = DailyLog(day=day_from_name(name))
    for number, raw in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("<!--") or set(line) <= {"-", "=", "*", "_"}:
            continue
        if line.startswith("#"):
            if log.day is None:
                log.day = day_from_name(line)
            continue
        if "\x00" in line:
            log.warnings.append(ParseWarning(number, "line skipped: contains a NUL byte"))
            continue
        match = _LOG_LINE.match(line)
        text_part = (match["text"] if match else line).strip()
        if not text_part:
            continue
        time = match["time"] if match and match["time"] and _valid_time(match["time"]) else ""
        tag = (match["tag"] or "").strip().lower() if match else ""
        entry = DailyLogEntry(line=number, content=text_part, time=_normal_time(time) if time else "")
        if tag in ("event", "note", "log"):
            entry.type = "event"
        elif tag in ("reflection", "lesson", "error", "failure"):
            entry.type = "reflection"
        elif tag:
            entry.type = "auto_extract"
            entry.category = tag
        log.entries.append(entry)
    return log
