"""An index for the live feed's first screen (dashboard/feed.py): an owner's latest history rows.

memories_memoryevent is indexed by (memory, created_at) and by created_at alone; the feed asks for
one owner's newest rows, which without this walks every owner's recent history.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("dashboard", "0002_strength_out_of_indexes"), ("memories", "0005_search_postings")]

    operations = [
        migrations.RunSQL(
            sql="CREATE INDEX IF NOT EXISTS memoryevent_dash_owner_time ON memories_memoryevent (owner_id, created_at)",
            reverse_sql="DROP INDEX IF EXISTS memoryevent_dash_owner_time",
        ),
    ]
