"""Let the nightly decay rewrite every memory's strength as HOT updates.

Decay changes `strength` on every active and archived memory each night. An UPDATE that changes no
indexed column and finds room on the row's own page is a heap-only (HOT) update: no new entry in
any index. Otherwise PostgreSQL inserts the new row version into every index, the HNSW one
included, which costs milliseconds per row (a graph search). bench/lifecycle.py, decay of 100,000
fresh memories with vectors: 851 s before, 7.8 s after (2 cores, 128MB shared_buffers).

- `memory_owner_status` loses `strength` (owner, status, -strength → owner, status): nothing
  indexes `strength` any more (dashboard migration 0002 drops it from the dashboard's indexes).
- fillfactor 50: a row carries its 1.5 KB vector inline, so a page needs room for a second copy
  of its rows. The steady state of a table whose rows are all rewritten every night is about half
  full pages anyway (the previous night's versions are pruned when the page is next read).
  Only pages written from now on are filled to 50%; rows on pages that are already full move
  once, the first night, with a normal (non-HOT) update.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memories", "0003_search_stats")]

    operations = [
        migrations.RemoveIndex(model_name="memory", name="memory_owner_status"),
        migrations.AddIndex(
            model_name="memory", index=models.Index(fields=["owner", "status"], name="memory_owner_status")
        ),
        migrations.RunSQL(
            sql="ALTER TABLE memories_memory SET (fillfactor = 50)",
            reverse_sql="ALTER TABLE memories_memory RESET (fillfactor)",
        ),
    ]
