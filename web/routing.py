from django.urls import path, re_path

from memories.consumers import EventConsumer, websocket_not_found

websocket_urlpatterns = [
    path("ws/events/", EventConsumer.as_asgi()),
    re_path(r"", websocket_not_found),
]
