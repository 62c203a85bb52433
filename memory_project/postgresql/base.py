"""PostgreSQL as Django's backend has it, but for when its pool checks a connection it lends, and
for statements with more parameters than the server can bind.

With CONN_HEALTH_CHECKS, Django's pool checks every connection it lends with a round trip to the
server: a third of the time of a small authenticated request here, and one more statement for the
database per request. A connection given back less than DB_POOL_CHECK_AFTER_SECONDS ago was working
then, so it is lent unchecked, as HikariCP does (aliveBypassWindowMs, 500 ms by default); one idle
for longer (after a database restart, say) is still checked, and a broken one replaced.
"""

import time
import weakref

import psycopg
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.backends.base.base import NO_DB_ALIAS
from django.db.backends.postgresql import base
from psycopg_pool import ConnectionPool

# The protocol counts a statement's parameters in 16 bits.
MAX_BOUND_PARAMETERS = 65535

# When each pooled connection was last given back (DatabaseWrapper._close), by connection.
_returned_at: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _mark_returned(connection) -> None:
    _returned_at[connection] = time.monotonic()


def _check_unless_just_returned(connection) -> None:
    returned = _returned_at.get(connection)
    if returned is None or time.monotonic() - returned >= settings.DB_POOL_CHECK_AFTER_SECONDS:
        ConnectionPool.check_connection(connection)


class ServerBindingCursor(base.ServerBindingCursor):
    """Binds parameters on the server (DB_PREPARED_STATEMENTS), except for a statement with more
    than the protocol can carry, which goes with its values inlined as Django's default cursor sends
    them: Django sizes bulk inserts and `__in` lists for that cursor, with no such limit."""

    def execute(self, query, params=None, **kwargs):
        if params is not None and len(params) > MAX_BOUND_PARAMETERS:
            query, params = psycopg.ClientCursor(self.connection).mogrify(query, params), None
            # A statement with its values written in is never run again: not worth preparing.
            kwargs["prepare"] = False
        return super().execute(query, params, **kwargs)


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        params = super().get_connection_params()
        if params.get("cursor_factory") is base.ServerBindingCursor:
            params["cursor_factory"] = ServerBindingCursor
        return params

    @property
    def pool(self):
        options = self.settings_dict["OPTIONS"].get("pool")
        if self.alias == NO_DB_ALIAS or not options:
            return None
        if self.alias not in self._connection_pools:
            # As Django builds it (django.db.backends.postgresql.base), with the check above.
            if self.settings_dict.get("CONN_MAX_AGE", 0) != 0:
                raise ImproperlyConfigured("Pooling doesn't support persistent connections.")
            kwargs = {**self.get_connection_params(), "autocommit": True}
            checked = self.settings_dict["CONN_HEALTH_CHECKS"]
            pool = ConnectionPool(
                kwargs=kwargs,
                open=False,
                configure=self._configure_connection,
                check=_check_unless_just_returned if checked else None,
                **({} if options is True else options),
            )
            self._connection_pools.setdefault(self.alias, pool)
        return self._connection_pools[self.alias]

    def _close(self):
        # Noted here, on the thread giving it back: the pool's `reset` hook would see it too, but
        # with one set psycopg_pool hands every returned connection to a worker thread first.
        if self.connection is not None and self.pool:
            _mark_returned(self.connection)
        super()._close()
