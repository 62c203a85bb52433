"""The memory browser's query: its parameters checked, and the keyset cursor a page ends with.

The browser pages with a keyset cursor (the sort value and id of the last row shown), so page 2,000
of 100,000 rows costs what page 1 does.
"""

import base64
import json
import math
import uuid
from dataclasses import dataclass
from datetime import datetime

from memories.models import (
    Category,
    Source,
    Status,
)
from memory_project.text import storable

# Each order walks an index on (owner_id, column[, id]) (dashboard/migrations/0001_browse_indexes.py).
SORTS = {
    "updated": "updated_at",
    "observed": "observed_at",
    "strength": "strength",
    "importance": "importance",
}


DATETIME_SORTS = {"updated_at", "observed_at"}


PAGE_SIZE = 50


MAX_PAGE_SIZE = 200


STATUS_ALL = "all"


@dataclass
class BrowseQuery:
    q: str = ""
    category: str = ""
    # "" hides forgotten memories (like the API's list); "all" shows them too.
    status: str = ""
    agent: str | None = None
    source: str = ""
    min_strength: float | None = None
    max_strength: float | None = None
    sort: str = "updated"
    direction: str = "desc"
    cursor: str = ""
    limit: int = PAGE_SIZE
    # A memory group's name or id (memory_groups): its memories and those of the groups below it.
    group: str = ""
    # Search lists the matches under SEARCH_RELATIVE_CUTOFF too.
    weak: bool = False


def _float_param(params, name: str) -> float | None:
    raw = params.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number between 0 and 1") from None
    if not 0.0 <= value <= 1.0 or math.isnan(value):
        raise ValueError(f"{name} must be a number between 0 and 1")
    return value


def browse_query_parse(params) -> BrowseQuery:
    """A BrowseQuery from query parameters; ValueError with a reason for anything out of range."""
    q = params.get("q", "").strip()
    if "\x00" in q or len(q) > 4000:
        raise ValueError("q must be text of at most 4000 characters")
    category = params.get("category", "").strip()
    if category and category not in Category.values:
        raise ValueError(f"category must be one of {', '.join(Category.values)}")
    status = params.get("status", "").strip()
    if status and status != STATUS_ALL and status not in Status.values:
        raise ValueError(f"status must be '{STATUS_ALL}' or one of {', '.join(Status.values)}")
    source = params.get("source", "").strip()
    if source and source not in Source.values:
        raise ValueError(f"source must be one of {', '.join(Source.values)}")
    agent = params.get("agent")
    if agent is not None and (not storable(agent) or len(agent) > 100):
        raise ValueError("agent must be text of at most 100 characters")
    group = params.get("group", "").strip()
    if "\x00" in group or len(group) > 100:
        raise ValueError("group must be a group's name or id")
    sort = params.get("sort", "updated").strip() or "updated"
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}")
    direction = params.get("dir", "desc").strip() or "desc"
    if direction not in ("asc", "desc"):
        raise ValueError("dir must be asc or desc")
    try:
        limit = int(params.get("limit", PAGE_SIZE))
    except ValueError:
        raise ValueError("limit must be an integer") from None
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise ValueError(f"limit must be between 1 and {MAX_PAGE_SIZE}")
    query = BrowseQuery(
        q=q,
        category=category,
        status=status,
        agent=agent if agent not in (None, "*") else None,
        source=source,
        min_strength=_float_param(params, "min_strength"),
        max_strength=_float_param(params, "max_strength"),
        sort=sort,
        direction=direction,
        cursor=params.get("cursor", "").strip(),
        limit=limit,
        group=group,
        weak=params.get("weak", "") in ("1", "true"),
    )
    if query.cursor:
        cursor_decode(query.cursor, SORTS[sort])
    return query


def cursor_encode(value, row_id) -> str:
    raw = json.dumps([value.isoformat() if isinstance(value, datetime) else value, str(row_id)])
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def cursor_decode(cursor: str, column: str):
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value, row_id = json.loads(raw)
        if column in DATETIME_SORTS:
            value = datetime.fromisoformat(value)
        else:
            value = float(value)
        row_id = uuid.UUID(row_id)
    except (ValueError, TypeError):
        raise ValueError("cursor is not valid for this sort order") from None
    return value, row_id
