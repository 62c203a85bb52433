from pathlib import Path

from django.conf import settings

from memory_project.postgresql import base

from .server import embedded_server, ensure_database, socket_dir


class DatabaseWrapper(base.DatabaseWrapper):
    _database_ready: set[str] = set()

    def get_connection_params(self):
        server = embedded_server(Path(settings.EMBEDDED_PG_DIR))
        params = super().get_connection_params()
        params["host"] = socket_dir(server)
        params.pop("port", None)
        dbname = params.get("dbname")
        if dbname and dbname != "postgres" and dbname not in self._database_ready:
            # The test runner creates its own database; only the main one is made here.
            if not dbname.startswith("test_"):
                ensure_database(server, dbname)
            self._database_ready.add(dbname)
        return params
