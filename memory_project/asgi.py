import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings")
# Django must be set up before the consumers (and the models they import) are loaded.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from memories.consumers import ApiKeyAuthMiddleware, origin_validated  # noqa: E402
from memory_project.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": origin_validated(AuthMiddlewareStack(ApiKeyAuthMiddleware(URLRouter(websocket_urlpatterns)))),
    }
)
