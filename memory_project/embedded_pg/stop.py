"""`python -m memory_project.embedded_pg.stop`: stop the embedded server once no live process uses it.

The server stops when its last user exits normally (an atexit handler), but a process that ends
without running atexit handlers (a Celery pool child leaves with os._exit, a SIGKILL) stays on its
list of users, so after `make run-distributed` was stopped the server outlived everything (issue
12). scripts/run-distributed.sh runs this after its processes are gone: the dead entries are
dropped, this process joins as the only user, and its own exit stops the server.
"""

import os
import sys

import django


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings")
    django.setup()
    from django.conf import settings

    if not settings.EMBEDDED_DB:
        return 0
    data_dir = settings.EMBEDDED_PG_DIR
    if not (data_dir / "postmaster.pid").exists():
        return 0  # not running
    # The server module loads pgserver's binaries; a stop with nothing running needs none of it.
    from memory_project.embedded_pg.server import embedded_server, server_users

    embedded_server(data_dir)  # drops dead users, joins as one
    others = [pid for pid in server_users(data_dir) if pid != os.getpid()]
    if others:
        print(f"embedded PostgreSQL in {data_dir} is still used by {others}; left running", file=sys.stderr)
    # Exiting normally runs the server's atexit handler: as its last user, this process stops it.
    return 0


if __name__ == "__main__":
    sys.exit(main())
