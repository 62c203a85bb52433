"""An API key as a client presents it: the one lookup behind REST, WebSocket and MCP authentication."""

from functools import cache

from django.contrib.auth import get_user_model
from django.db import connection

from memories.models import ApiKey
from memory_project.postgresql.prepared import prepared_cursor


@cache
def _statement() -> tuple[str, list[str], list[str]]:
    """The join the ORM would send for select_related("owner"), written once per process: every
    authenticated request runs it, and building and compiling the queryset cost ~0.6 ms of Python
    a request (py-spy under load put authentication at 11% of the web processes' time)."""
    user_model = get_user_model()
    quote = connection.ops.quote_name
    key_fields, user_fields = ApiKey._meta.concrete_fields, user_model._meta.concrete_fields
    columns = [f"k.{quote(f.column)}" for f in key_fields] + [f"u.{quote(f.column)}" for f in user_fields]
    sql = (
        f"SELECT {', '.join(columns)} FROM {quote(ApiKey._meta.db_table)} k "
        f"JOIN {quote(user_model._meta.db_table)} u ON u.{quote(user_model._meta.pk.column)} = k.owner_id "
        "WHERE k.key_hash = %s AND k.revoked_at IS NULL"
    )
    return sql, [f.attname for f in key_fields], [f.attname for f in user_fields]


def api_key_get_active(*, key_hash: str) -> ApiKey | None:
    """The unrevoked key with this digest, its owner loaded (active or not: the caller refuses an
    inactive owner in its own words), or None."""
    sql, key_names, user_names = _statement()
    # Prepared once per pooled connection: every authenticated request runs it.
    with prepared_cursor() as cursor:
        cursor.execute(sql, [key_hash])
        row = cursor.fetchone()
    if row is None:
        return None
    api_key = ApiKey.from_db(connection.alias, key_names, row[: len(key_names)])
    api_key.owner = get_user_model().from_db(connection.alias, user_names, row[len(key_names) :])
    return api_key
