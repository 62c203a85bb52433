import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings")
# Django must be set up before the consumers (and the models they import) are loaded.
django.setup(set_prefix=False)

from web.asgi_handler import SyncChainASGIHandler  # noqa: E402

django_asgi_app = SyncChainASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from memories.consumers import ApiKeyAuthMiddleware, origin_validated  # noqa: E402
from memories.mcp.http import McpHttpApp, mcp_path  # noqa: E402
from memory_project.limits import UriTooLongMiddleware  # noqa: E402
from memory_project.proxies import TrustedProxyMiddleware  # noqa: E402
from web.routing import websocket_urlpatterns  # noqa: E402

mcp_app = McpHttpApp()


async def http_app(scope, receive, send):
    """/mcp goes to the MCP server (streamable HTTP), everything else to Django."""
    if mcp_path(scope["path"]):
        await mcp_app(scope, receive, send)
    else:
        await django_asgi_app(scope, receive, send)


application = TrustedProxyMiddleware(
    UriTooLongMiddleware(
        ProtocolTypeRouter(
            {
                "http": http_app,
                # uvicorn sends a lifespan (daphne does not): it starts and stops the MCP session manager.
                "lifespan": mcp_app,
                "websocket": origin_validated(
                    AuthMiddlewareStack(ApiKeyAuthMiddleware(URLRouter(websocket_urlpatterns)))
                ),
            }
        )
    )
)
