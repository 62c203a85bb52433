"""BM25 from an inverted index of postings, kept by triggers, instead of from each row's tsvector.

Search scored BM25 by reading the tsvector of every memory matching a query word: over 100,000
memories of one owner that is ~2,500 rows on ~2,500 heap pages per query (a memory row carries its
1.5 KB vector), 20 ms of a 36 ms search. A posting is one (lexeme, document) pair with the term
frequency and document length BM25 needs, so the scoring becomes an index-only scan of
`posting_owner_lexeme` (bench/search_latency.py; figures in the README).

Triggers keep the postings, so every writer (ORM saves, bulk inserts, the lifecycle's set-based
SQL, merges, imports, deletes) stays consistent without knowing about them:
- insert: one posting per lexeme of the stored search_vector (memories only when active or archived);
- update of the text, the owner, or a memory's move into or out of active/archived: rewritten;
  the nightly decay (`SET strength = …`) names none of these columns, so the trigger never fires;
- delete: removed.
The GIN indexes on search_vector had no other reader and are dropped (here and chat_sessions 0002).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

SEARCHABLE = "('active', 'archived')"

FUNCTION = f"""
CREATE FUNCTION memories_searchposting_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- TG_ARGV[0] is the corpus ('memory' or 'turn') of the table the trigger is on.
    IF TG_OP <> 'INSERT' THEN
        DELETE FROM memories_searchposting WHERE corpus = TG_ARGV[0] AND document_id = OLD.id;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN NULL;
    END IF;
    IF TG_ARGV[0] = 'memory' THEN
        IF NEW.status NOT IN {SEARCHABLE} THEN
            RETURN NULL;
        END IF;
    END IF;
    INSERT INTO memories_searchposting (corpus, document_id, lexeme, owner_id, frequency, document_length)
    SELECT TG_ARGV[0], NEW.id, u.lexeme, NEW.owner_id, coalesce(array_length(u.positions, 1), 1),
           length(NEW.search_vector)
    FROM unnest(NEW.search_vector) u;
    RETURN NULL;
END
$$;
"""

MEMORY_TRIGGERS = f"""
CREATE TRIGGER memory_postings_insert AFTER INSERT ON memories_memory
    FOR EACH ROW EXECUTE FUNCTION memories_searchposting_sync('memory');
CREATE TRIGGER memory_postings_delete AFTER DELETE ON memories_memory
    FOR EACH ROW EXECUTE FUNCTION memories_searchposting_sync('memory');
CREATE TRIGGER memory_postings_update AFTER UPDATE OF subject, content, search_ngrams, status, owner_id
    ON memories_memory FOR EACH ROW
    WHEN (OLD.search_vector IS DISTINCT FROM NEW.search_vector OR OLD.owner_id <> NEW.owner_id
          OR (OLD.status IN {SEARCHABLE}) <> (NEW.status IN {SEARCHABLE}))
    EXECUTE FUNCTION memories_searchposting_sync('memory');
"""

TURN_TRIGGERS = """
CREATE TRIGGER turn_postings_insert AFTER INSERT ON chat_sessions_conversationturn
    FOR EACH ROW EXECUTE FUNCTION memories_searchposting_sync('turn');
CREATE TRIGGER turn_postings_delete AFTER DELETE ON chat_sessions_conversationturn
    FOR EACH ROW EXECUTE FUNCTION memories_searchposting_sync('turn');
CREATE TRIGGER turn_postings_update AFTER UPDATE OF speaker, content, search_ngrams, owner_id
    ON chat_sessions_conversationturn FOR EACH ROW
    WHEN (OLD.search_vector IS DISTINCT FROM NEW.search_vector OR OLD.owner_id <> NEW.owner_id)
    EXECUTE FUNCTION memories_searchposting_sync('turn');
"""

BACKFILL = f"""
INSERT INTO memories_searchposting (corpus, document_id, lexeme, owner_id, frequency, document_length)
SELECT 'memory', m.id, u.lexeme, m.owner_id, coalesce(array_length(u.positions, 1), 1), length(m.search_vector)
FROM memories_memory m, unnest(m.search_vector) u WHERE m.status IN {SEARCHABLE};
INSERT INTO memories_searchposting (corpus, document_id, lexeme, owner_id, frequency, document_length)
SELECT 'turn', t.id, u.lexeme, t.owner_id, coalesce(array_length(u.positions, 1), 1), length(t.search_vector)
FROM chat_sessions_conversationturn t, unnest(t.search_vector) u;
"""

DROP = """
DROP TRIGGER memory_postings_insert ON memories_memory;
DROP TRIGGER memory_postings_delete ON memories_memory;
DROP TRIGGER memory_postings_update ON memories_memory;
DROP TRIGGER turn_postings_insert ON chat_sessions_conversationturn;
DROP TRIGGER turn_postings_delete ON chat_sessions_conversationturn;
DROP TRIGGER turn_postings_update ON chat_sessions_conversationturn;
DROP FUNCTION memories_searchposting_sync();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0004_memory_hot_decay"),
        ("chat_sessions", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="SearchPosting",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "corpus", "document_id", "lexeme", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("corpus", models.CharField(choices=[("memory", "Memory"), ("turn", "Turn")], max_length=10)),
                ("document_id", models.UUIDField()),
                ("lexeme", models.TextField()),
                ("frequency", models.PositiveSmallIntegerField()),
                ("document_length", models.PositiveIntegerField()),
                (
                    "owner",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.RunSQL(sql=FUNCTION + MEMORY_TRIGGERS + TURN_TRIGGERS + BACKFILL, reverse_sql=DROP),
        migrations.AddIndex(
            model_name="searchposting",
            index=models.Index(
                fields=["owner", "corpus", "lexeme"],
                include=("document_id", "frequency", "document_length"),
                name="posting_owner_lexeme",
            ),
        ),
        migrations.RemoveIndex(model_name="memory", name="memory_search_gin"),
    ]
