"""Import entry points: a file, a migration folder or text, in any format, in merge or restore mode."""

import os
from pathlib import Path

from django.db import transaction

from memories.formats.memory_json import (
    FormatError,
)
from memories.services.transfer.daily_log import import_daily_log
from memories.services.transfer.detect import LOG_NAME, detect_format
from memories.services.transfer.formats import import_jsonl, import_memory_json, import_memory_md, import_user_md
from memories.services.transfer.records import FORMATS, MODES, ImportReport

# Files a migration folder may hold, in the order they are imported (older formats first, so the
# newer file's values win where the two disagree).
FOLDER_FILES = (
    ("memory.md", "memory-md"),
    ("learnings.md", "learnings-md"),
    ("memory.json", "memory-json"),
    ("user.md", "user-md"),
    ("memories.jsonl", "jsonl"),
)


MIGRATED_SUFFIX = ".migrated"


def memory_import(
    *,
    owner,
    path_or_text,
    fmt: str | None = None,
    actor: str,
    agent: str | None = None,
    mode: str | None = None,
) -> ImportReport:
    """Import a file, a migration folder (MEMORY.md / memory.json / USER.md / logs/), or text.

    A `Path`, or a one-line string naming an existing file or folder, is read from disk; any other
    string is the content itself. `agent` None keeps each JSONL record's own agent (the default
    namespace for every other format). `mode` is "merge", "restore" or None (see the module's
    docstring); in a folder it applies to the JSONL file only. Raises FormatError when a single file
    is unusable as a whole.
    """
    path = _as_path(path_or_text)
    if path is not None and path.is_dir():
        return _import_folder(owner=owner, folder=path, actor=actor, agent=agent, mode=mode)
    if path is not None:
        return memory_import_text(
            owner=owner, text=_read(path), fmt=fmt, name=_display_name(path), actor=actor, agent=agent, mode=mode
        )
    return memory_import_text(
        owner=owner, text=str(path_or_text), fmt=fmt, name="", actor=actor, agent=agent, mode=mode
    )


def memory_import_text(
    *,
    owner,
    text: str,
    fmt: str | None = None,
    name: str = "",
    actor: str,
    agent: str | None = None,
    mode: str | None = None,
) -> ImportReport:
    """Import `text` (an upload, a pasted file); `name` is its file name, used to detect the format and
    a daily log's day. Nothing is read from disk here, so it is the entry point for API requests."""
    if "\x00" in text:
        raise FormatError("the file contains NUL bytes: not a text file")
    fmt = fmt or detect_format(name, text)
    if fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if mode not in (None, *MODES):
        raise FormatError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    if mode == "restore" and fmt != "jsonl":
        raise FormatError(
            f"only a JSONL export can be restored row for row; {fmt} is imported through the merge decision "
            "(leave out mode, or set it to merge)"
        )
    # A JSONL file's mode is settled once its lines are read (None: restore when all carry their id).
    report = ImportReport(format=fmt, source=name or f"({fmt})", mode=mode if fmt == "jsonl" else "merge")
    with transaction.atomic():
        _IMPORTERS[fmt](owner=owner, text=text, name=name, actor=actor, agent=agent, report=report)
    return report


def _as_path(value) -> Path | None:
    if isinstance(value, Path):
        return value
    if isinstance(value, str) and value and "\n" not in value and len(value) < 4096 and "\x00" not in value:
        candidate = Path(os.path.expanduser(value))
        if candidate.exists():
            return candidate
    return None


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FormatError(f"{path.name} is not UTF-8 text") from None


def _display_name(path: Path) -> str:
    # A daily log's folder is part of what identifies it ("logs/2026-02-21.md").
    return f"{path.parent.name}/{path.name}" if path.parent.name.lower() == "logs" else path.name


def _folder_files(folder: Path) -> list[tuple[Path, str]]:
    by_name = {p.name.lower(): p for p in folder.iterdir() if p.is_file()}
    found = [(by_name[name], fmt) for name, fmt in FOLDER_FILES if name in by_name]
    logs = next((p for p in folder.iterdir() if p.is_dir() and p.name.lower() == "logs"), None)
    if logs is not None:
        found += [(p, "daily-log") for p in sorted(logs.iterdir()) if p.is_file() and LOG_NAME.match(p.name)]
    return found


def _migrated_path(path: Path) -> Path:
    target = path.with_name(path.name + MIGRATED_SUFFIX)
    n = 1
    while target.exists():
        target = path.with_name(f"{path.name}{MIGRATED_SUFFIX}.{n}")
        n += 1
    return target


def _import_folder(*, owner, folder: Path, actor: str, agent: str | None, mode: str | None) -> ImportReport:
    report = ImportReport(format="folder", source=str(folder))
    files = _folder_files(folder)
    if not files:
        report.warn(
            None,
            "nothing to import: no MEMORY.md, learnings.md, memory.json, USER.md, memories.jsonl or "
            f"logs/YYYY-MM-DD.md|json here (files already migrated end in {MIGRATED_SUFFIX})",
        )
        return report
    for path, fmt in files:
        name = _display_name(path)
        try:
            sub = memory_import_text(
                owner=owner,
                text=_read(path),
                fmt=fmt,
                name=name,
                actor=actor,
                agent=agent,
                mode=mode if fmt == "jsonl" else None,
            )
        except FormatError as exc:
            # The file stays where it is (not renamed), so fixing it and running again imports it.
            sub = ImportReport(format=fmt, source=name, error=str(exc))
            sub.warn(None, f"not imported: {exc}")
            report.absorb(sub)
            continue
        target = _migrated_path(path)
        path.rename(target)
        sub.migrated.append(str(target))
        report.migrated.append(str(target))
        report.absorb(sub)
    return report


_IMPORTERS = {
    "memory-md": import_memory_md,
    "learnings-md": import_memory_md,
    "memory-json": import_memory_json,
    "user-md": import_user_md,
    "jsonl": import_jsonl,
    "daily-log": import_daily_log,
}
