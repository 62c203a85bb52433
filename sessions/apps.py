from django.apps import AppConfig


class ChatSessionsConfig(AppConfig):
    name = "sessions"
    # django.contrib.sessions owns the "sessions" label.
    label = "chat_sessions"
    verbose_name = "Chat sessions"
