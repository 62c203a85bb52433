"""The pieces every search statement shares: filters, the columns read, fetching rows as dicts."""

import json
from datetime import UTC, datetime, timedelta

SEARCHABLE_STATUSES = ("active", "archived")


def vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{v:.7g}" for v in vector) + "]"


def memory_filters(
    *, owner_id: int, categories, include_archived: bool, agent, since, until, group_ids=None
) -> tuple[str, list]:
    """The WHERE clause (alias m) and its parameters for a search over memories; the owner first."""
    statuses = SEARCHABLE_STATUSES if include_archived else ("active",)
    sql = ["m.owner_id = %s", "m.status = ANY(%s)", "(m.expires_at IS NULL OR m.expires_at > now())"]
    params: list = [owner_id, list(statuses)]
    if categories:
        sql.append("m.category = ANY(%s)")
        params.append(list(categories))
    _given(sql, params, ("m.agent = %s", agent), ("m.observed_at >= %s", since), ("m.observed_at <= %s", until))
    if group_ids is not None:
        # memory_groups: the memories in these groups (a group and those below it, resolved by the caller).
        sql.append("m.id IN (SELECT memory_id FROM memory_groups_memorygroupmember WHERE group_id = ANY(%s::uuid[]))")
        params.append([str(g) for g in group_ids])
    return " AND ".join(sql), params


def turn_filters(*, owner_id: int, agent, since, until) -> tuple[str, list]:
    """The WHERE clause (aliases t, and s for the turn's session) for a search over turns."""
    sql = ["t.owner_id = %s"]
    params: list = [owner_id]
    _given(sql, params, ("s.agent = %s", agent), ("t.created_at >= %s", since), ("t.created_at <= %s", until))
    return " AND ".join(sql), params


def _given(sql: list, params: list, *clauses: tuple[str, object]) -> None:
    """Each (clause, value) whose value was given narrows the search; None leaves it open."""
    for clause, value in clauses:
        if value is not None:
            sql.append(clause)
            params.append(value)


# Timestamps come as integer microseconds since the epoch: a few hundred candidates are ranked per
# query and only the top k returned, and parsing every timestamp cost more than the ranking itself.
# Ids come as text: a search reads a few hundred rows and needs ids only as strings, and building a
# uuid.UUID per row and formatting it back cost a noticeable part of the Python time.
MEMORY_COLUMNS = (
    "m.id::text AS id, m.content, m.category, m.importance, m.strength, m.status, "
    "(extract(epoch FROM m.observed_at) * 1000000)::int8 AS observed_us, "
    "(extract(epoch FROM m.created_at) * 1000000)::int8 AS created_us, "
    "m.source_session_id::text AS source_session_id, m.agent"
)
TURN_COLUMNS = (
    "t.id::text AS id, t.content, t.role, t.speaker, t.metadata, "
    "(extract(epoch FROM t.created_at) * 1000000)::int8 AS created_us, t.session_id::text AS session_id, t.sequence"
)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


JSON_COLUMNS = ("metadata",)


def fetch_rows(cursor, sql, params) -> list[dict]:
    cursor.execute(sql, params)
    names = [c.name for c in cursor.description]
    rows = [dict(zip(names, row)) for row in cursor.fetchall()]
    # Django's PostgreSQL backend hands jsonb to raw cursors as text.
    for row in rows:
        for column in JSON_COLUMNS:
            if isinstance(row.get(column), str):
                row[column] = json.loads(row[column])
    return rows


def epoch_us(when: datetime) -> int:
    return (when - EPOCH) // timedelta(microseconds=1)


def from_epoch_us(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=us)
