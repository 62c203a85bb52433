"""Take `strength` out of the dashboard's indexes, so the nightly decay stays a HOT update.

Decay rewrites every memory's strength each night (memories migration 0004). Any index holding
`strength`, even as an INCLUDE column, turns each of those updates into a new entry in every index
of the table, the HNSW one included. So `memory_dash_stats` keeps covering status, category,
agent, source and importance without strength, and `memory_dash_strength` goes: sorting,
filtering and averaging by strength read the owner's rows. At the default per-owner cap of 10,000
memories (bench/dashboard.py --memories 10000, 512MB shared_buffers, busy 2-core machine) the
overview page went from 35 to 76 ms and the browser sorted by strength from 26 to 43 ms (13 to
28 ms from a cursor); with the stock 128MB buffer pool the 40 MB table is read through the bulk-read
ring on every scan, 50–110 ms. At 100,000 memories per owner these reads grow tenfold.
"""

from django.db import migrations

STATS_BEFORE = "memories_memory (owner_id, status, category) INCLUDE (agent, source, importance, strength)"
STATS_AFTER = "memories_memory (owner_id, status, category) INCLUDE (agent, source, importance)"


class Migration(migrations.Migration):
    dependencies = [("dashboard", "0001_browse_indexes"), ("memories", "0004_memory_hot_decay")]

    operations = [
        migrations.RunSQL(
            sql=["DROP INDEX IF EXISTS memory_dash_stats", f"CREATE INDEX memory_dash_stats ON {STATS_AFTER}"],
            reverse_sql=["DROP INDEX IF EXISTS memory_dash_stats", f"CREATE INDEX memory_dash_stats ON {STATS_BEFORE}"],
        ),
        migrations.RunSQL(
            sql="DROP INDEX IF EXISTS memory_dash_strength",
            reverse_sql="CREATE INDEX IF NOT EXISTS memory_dash_strength ON memories_memory (owner_id, strength, id)",
        ),
    ]
