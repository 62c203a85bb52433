"""Memories superseded before issue 11 stayed active at half strength (and so could stay pinned);
a superseded memory is archived now, so those rows are archived too. History rows say why."""

from django.db import migrations

ARCHIVE_SQL = """
WITH stale AS (
    UPDATE memories_memory m SET status = 'archived', pinned = false, version = m.version + 1, updated_at = now()
    WHERE m.status = 'active'
      AND EXISTS (
          SELECT 1 FROM memories_memoryrelation r JOIN memories_memory n ON n.id = r.source_id
          WHERE r.target_id = m.id AND r.type = 'supersedes' AND n.status IN ('active', 'archived', 'pending_review')
      )
    RETURNING m.id, m.owner_id, m.strength
)
INSERT INTO memories_memoryevent (owner_id, memory_id, event_type, before, after, actor, reason, created_at)
SELECT owner_id, id, 'archive', jsonb_build_object('status', 'active', 'strength', strength),
       jsonb_build_object('status', 'archived', 'strength', strength), 'system:migration',
       'superseded earlier: a superseded memory leaves the prompt (issue 11)', now()
FROM stale
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0009_imported_entries")]

    operations = [migrations.RunSQL(ARCHIVE_SQL, reverse_sql=migrations.RunSQL.noop)]
