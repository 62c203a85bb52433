"""BM25 from an inverted index of postings, kept by triggers, instead of from each row's tsvector.

Search scored BM25 by reading the tsvector of every memory matching a query word: over 100,000
memories of one owner that is ~2,500 rows on ~2,500 heap pages per query (a memory row carries its
1.5 KB vector), 20 ms of a 36 ms search. A posting is one (lexeme, document) pair with the term
frequency and document length BM25 needs, so the scoring becomes an index-only scan of
`posting_owner_lexeme` (bench/search_latency.py; figures in the README).

Triggers keep the postings, so every writer (ORM saves, bulk inserts, the lifecycle's set-based
SQL, merges, imports, deletes) stays consistent without knowing about them:
- insert: one posting per lexeme of the stored search_vector (memories only when active or
  archived), per statement over its transition table, so a bulk insert writes them set-based;
- update of the text, the owner, or a memory's move into or out of active/archived: rewritten,
  row by row; the nightly decay (`SET strength = …`) names none of these columns, so it never
  fires, and neither does a move between active and archived (WHEN);
- delete: removed, per statement.
The GIN indexes on search_vector had no other reader and are dropped (here and chat_sessions 0002).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

SEARCHABLE = "('active', 'archived')"

# Row by row: an update of the text or of a memory's searchability (UPDATE triggers with a column
# list cannot see transition tables).
ROW_FUNCTION = f"""
CREATE FUNCTION memories_searchposting_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- TG_ARGV[0] is the corpus ('memory' or 'turn') of the table the trigger is on.
    DELETE FROM memories_searchposting WHERE corpus = TG_ARGV[0] AND document_id = OLD.id;
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

# Per statement, over its transition table: a bulk insert or delete writes its postings set-based.
STATEMENT_FUNCTIONS = f"""
CREATE FUNCTION memories_searchposting_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_ARGV[0] = 'memory' THEN
        INSERT INTO memories_searchposting (corpus, document_id, lexeme, owner_id, frequency, document_length)
        SELECT 'memory', n.id, u.lexeme, n.owner_id, coalesce(array_length(u.positions, 1), 1),
               length(n.search_vector)
        FROM inserted n, unnest(n.search_vector) u WHERE n.status IN {SEARCHABLE};
    ELSE
        INSERT INTO memories_searchposting (corpus, document_id, lexeme, owner_id, frequency, document_length)
        SELECT 'turn', n.id, u.lexeme, n.owner_id, coalesce(array_length(u.positions, 1), 1),
               length(n.search_vector)
        FROM inserted n, unnest(n.search_vector) u;
    END IF;
    RETURN NULL;
END
$$;
CREATE FUNCTION memories_searchposting_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM memories_searchposting p USING deleted d WHERE p.corpus = TG_ARGV[0] AND p.document_id = d.id;
    RETURN NULL;
END
$$;
"""

MEMORY_TRIGGERS = f"""
CREATE TRIGGER memory_postings_insert AFTER INSERT ON memories_memory REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION memories_searchposting_insert('memory');
CREATE TRIGGER memory_postings_delete AFTER DELETE ON memories_memory REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION memories_searchposting_delete('memory');
CREATE TRIGGER memory_postings_update AFTER UPDATE OF subject, content, search_ngrams, status, owner_id
    ON memories_memory FOR EACH ROW
    WHEN (OLD.search_vector IS DISTINCT FROM NEW.search_vector OR OLD.owner_id <> NEW.owner_id
          OR (OLD.status IN {SEARCHABLE}) <> (NEW.status IN {SEARCHABLE}))
    EXECUTE FUNCTION memories_searchposting_sync('memory');
"""

TURN_TRIGGERS = """
CREATE TRIGGER turn_postings_insert AFTER INSERT ON chat_sessions_conversationturn
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION memories_searchposting_insert('turn');
CREATE TRIGGER turn_postings_delete AFTER DELETE ON chat_sessions_conversationturn
    REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION memories_searchposting_delete('turn');
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
DROP FUNCTION memories_searchposting_insert();
DROP FUNCTION memories_searchposting_delete();
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
        migrations.RunSQL(
            sql=ROW_FUNCTION + STATEMENT_FUNCTIONS + MEMORY_TRIGGERS + TURN_TRIGGERS + BACKFILL, reverse_sql=DROP
        ),
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
