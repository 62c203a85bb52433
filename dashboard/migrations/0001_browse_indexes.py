"""Indexes the dashboard's reads need at 100,000+ memories per owner (measured by bench/dashboard.py).

A memory row carries its 1.5 KB vector inline, so two rows fill a page and any query that reads the
heap for every row of an owner reads ~400 MB at 100,000 rows (0.5 s or more). These let the
overview's counts and averages, the browser's capped counts and filters run index-only, and every
sort order of the browser walk an index from the keyset cursor. They are plain SQL rather than
Meta.indexes because the tables belong to the memories app and the indexes serve only the
dashboard; Django's model state is unchanged.
"""

from django.db import migrations

INDEXES = {
    "memory_dash_stats": "memories_memory (owner_id, status, category) INCLUDE (agent, source, importance, strength)",
    "memory_dash_strength": "memories_memory (owner_id, strength, id)",
    "memory_dash_importance": "memories_memory (owner_id, importance, id)",
    "memory_dash_observed": "memories_memory (owner_id, observed_at, id)",
    "memoryevent_dash_owner_time": "memories_memoryevent (owner_id, created_at) INCLUDE (event_type)",
}


class Migration(migrations.Migration):
    dependencies = [("memories", "0001_initial")]

    operations = [
        migrations.RunSQL(
            sql=f"CREATE INDEX IF NOT EXISTS {name} ON {definition}",
            reverse_sql=f"DROP INDEX IF EXISTS {name}",
        )
        for name, definition in INDEXES.items()
    ]
