"""Seed the default event rules (seed 003 §11); they stay editable in the admin."""

from django.db import migrations

DEFAULT_RULES = [
    {
        "name": "consolidate_on_session_end",
        "event_type": "session.ended",
        "match": "all",
        "conditions": [{"field": "turn_count", "op": "gte", "value": 3}],
        "action": "consolidate",
    },
    {
        "name": "notify_important_memory",
        "event_type": "memory.write.important",
        "match": "all",
        "conditions": [{"field": "importance", "op": "gte", "value": 0.8}],
        "action": "notify",
    },
]


def seed(apps, schema_editor):
    EventRule = apps.get_model("memories", "EventRule")
    for rule in DEFAULT_RULES:
        EventRule.objects.get_or_create(
            owner=None, name=rule["name"], defaults={k: v for k, v in rule.items() if k != "name"}
        )


def unseed(apps, schema_editor):
    EventRule = apps.get_model("memories", "EventRule")
    EventRule.objects.filter(owner=None, name__in=[r["name"] for r in DEFAULT_RULES]).delete()


class Migration(migrations.Migration):
    dependencies = [("memories", "0001_initial")]

    operations = [migrations.RunPython(seed, unseed)]
