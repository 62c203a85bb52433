from django.apps import AppConfig


class HotCacheConfig(AppConfig):
    name = "hotcache"
    verbose_name = "Hot-memory cache"

    def ready(self):
        # Imported in ready(): models and services load only once the app registry is.
        from erasure.hooks import erasure_hook_register
        from hotcache import services
        from memory_project.events import event_listener_register

        event_listener_register(services.hot_cache_event_listener)
        erasure_hook_register(services.hot_cache_erasure_hook)
