import gc

from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"

    def ready(self):
        # Imported here, not at the top: models and services can only load once the app registry is ready.
        from memories import (
            checks,  # noqa: F401  (registers system checks)
            signals,  # noqa: F401  (a revoked key closes its WebSockets)
        )
        from memories.services.erasure_hooks import memory_erasure_hooks_register
        from memories.services.event_rules import event_rules_evaluate
        from memory_project.events import event_rules_register

        event_rules_register(event_rules_evaluate)
        memory_erasure_hooks_register()

        # What is loaded by now (Django, the apps, their libraries: a few hundred thousand objects)
        # lives as long as the process. Frozen, the collector stops walking it on every full
        # collection, which had put 2-3 ms pauses into some searches (bench/search_latency.py).
        gc.collect()
        gc.freeze()
