from django.apps import AppConfig


class MemoryGroupsConfig(AppConfig):
    name = "memory_groups"

    def ready(self):
        # Imported in ready(): models and services load only once the app registry is.
        from memories.selectors.memories import memory_group_resolver_register
        from memory_groups.selectors import group_filter_ids
        from memory_groups.services import group_event_listener
        from memory_project.events import event_listener_register

        event_listener_register(group_event_listener)
        memory_group_resolver_register(group_filter_ids)
