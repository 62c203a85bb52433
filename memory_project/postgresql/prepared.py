"""A cursor on Django's connection that prepares each statement on its first run, for the statements
the service runs the same every time (search's, the API-key lookup): planning them cost ~1 ms of a
search over 100,000 memories. Queries still go through Django's cursor wrapper, so they are logged
and counted like any other. RETRIEVAL_PREPARED_STATEMENTS=false turns it into a plain cursor (behind a
pooler that cannot keep prepared statements)."""

from django.conf import settings
from django.db import connection

from memory_project.postgresql.base import ServerBindingCursor

_NEVER = 2**31 - 1


class _PreparingCursor(ServerBindingCursor):
    """Binds parameters on the server and prepares each statement on its first run.

    Django turns psycopg's automatic preparation off (prepare_threshold=None) so that connection
    poolers keep working; these statements ask for it one by one instead. psycopg keeps the prepared
    statements per connection (at most 100, least recently used go).
    """

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True if prepare is None else prepare, binary=binary)


def prepared_cursor():
    if not settings.MEMORY_RETRIEVAL["PREPARED_STATEMENTS"]:
        return connection.cursor()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    raw = connection.connection
    if raw.prepare_threshold is None:
        # psycopg prepares nothing while the threshold is None, even when asked; a threshold that is
        # never reached keeps every other statement unprepared, as Django wants.
        raw.prepare_threshold = _NEVER
    cursor = _PreparingCursor(raw)
    return connection.make_debug_cursor(cursor) if connection.queries_logged else connection.make_cursor(cursor)
