"""Which format a file is in, from its name, else from its content."""

import json
import re
from pathlib import Path

from memories.formats.memory_json import (
    FormatError,
)

LOG_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}\.(?:md|json)$", re.IGNORECASE)


def detect_format(name: str, text: str) -> str:
    """The format of a file from its name, else from its content; FormatError when neither tells."""
    base = Path(name or "").name.lower()
    if base in ("memory.md", "agent_memory.md"):
        return "memory-md"
    if base == "learnings.md":
        return "learnings-md"
    if base == "user.md":
        return "user-md"
    if base == "memory.json" or base == "memories.json":
        return "memory-json"
    if base.endswith(".jsonl") or base.endswith(".ndjson"):
        return "jsonl"
    if LOG_NAME.match(base):
        return "daily-log"
    stripped = text.lstrip("\ufeff").lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        first = stripped.splitlines()[0].strip()
        try:
            one = json.loads(first)
        except ValueError:
            one = None
        if isinstance(one, dict) and "content" in one:
            return "jsonl"
        if '"entries"' in stripped and '"date"' in stripped and '"memories"' not in stripped:
            return "daily-log"
        return "memory-json"
    if re.search(r"^###\s+\[[^\]]+\]", stripped, re.MULTILINE):
        return "learnings-md" if re.match(r"#\s+Agent Learnings", stripped) else "memory-md"
    if re.match(r"#\s+(?:User Profile|用户档案|USER)", stripped, re.IGNORECASE):
        return "user-md"
    raise FormatError(
        "cannot tell the format of this file: name it MEMORY.md, learnings.md, memory.json, USER.md, "
        "YYYY-MM-DD.md / .json or *.jsonl, or give the format explicitly"
    )
