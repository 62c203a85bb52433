"""`manage.py mcp`: the MCP server over stdio, acting for the owner of the key in MEMORY_API_KEY."""

import os

import anyio
from django.core.management.base import BaseCommand, CommandError

from memories.mcp.server import InvalidKey, build_server, principal_for_key
from memory_project.batching import batch_buffers_flush


class Command(BaseCommand):
    help = (
        "Serve the memory tools (search_memory, search_conversation_traces, memory_write, memory_forget, "
        "get_context) over MCP stdio. The owner is the one whose API key is in MEMORY_API_KEY "
        "(create one with `manage.py createapikey USERNAME`); MEMORY_AGENT selects an agent namespace."
    )

    def add_arguments(self, parser):
        parser.add_argument("--agent", default=None, help="agent namespace (default: $MEMORY_AGENT or none)")

    def handle(self, *args, agent=None, **options):
        key = os.environ.get("MEMORY_API_KEY", "").strip()
        if not key:
            raise CommandError(
                "MEMORY_API_KEY is not set. Create a key with `python manage.py createapikey USERNAME` and "
                "pass it in the environment of this command (the MCP client's `env`)."
            )
        agent = agent if agent is not None else os.environ.get("MEMORY_AGENT", "")
        try:
            principal = principal_for_key(key, agent=agent)
        except InvalidKey as exc:
            raise CommandError(f"MEMORY_API_KEY is not a valid API key: {exc}.") from None
        self.stderr.write(f"MCP server (stdio) for {principal.username}, key {principal.key_prefix}…")

        def current():
            # Checked on every call: a key revoked while the server runs stops working at once.
            return principal_for_key(key, agent=agent)

        server = build_server(stdio_principal=current)
        anyio.run(server.run_stdio_async)
        # The client has gone: what its searches left buffered (access counts, the access log) is
        # written before the process exits.
        batch_buffers_flush()
