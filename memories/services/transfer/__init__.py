"""Import and export of an owner's memories in the seed formats and our own JSONL (DESIGN §5).

Formats:

- ``memory-md`` / ``learnings-md`` — seed 002 §2.3 MEMORY.md (score → strength and importance, last
  activation → last_reinforced_at and observed_at, hits → hit_count, the Archived section → archived).
- ``memory-json`` — seed 004 §2.1 memory.json (categories mapped as DESIGN §3 says, salience →
  importance, timestamps kept, the rolling summary → CoreMemory.rolling_summary).
- ``user-md`` — a USER.md profile: each line a preference or fact (or our own section's category).
- ``daily-log`` — seed 004 daily logs (``logs/YYYY-MM-DD.json`` or the v1 ``.md``): the day's lines
  go into its DailyDigest, the noteworthy ones (tagged with a category, reflections, statements
  the offline extractor recognises) through the merge decision as memories.
- ``jsonl`` — ours, full fidelity: one JSON object per memory.

Two modes (issue 11):

- ``merge`` (every format): each entry goes through `memory_write` (embedded, deduplicated,
  contradictions superseded) with source ``import``, and gets an ``import`` event naming the file and
  format. For memories the import created, the file's strength, counters and timestamps are set
  after the decision, so the history reads: add (the decision) → import (the file's values).
  Importing is idempotent: each entry's content hash is remembered (`ImportedEntry`) with the memory
  it became or was folded into, and an entry already imported, or whose exact text the namespace
  already holds in any status, changes nothing (no reinforcement, no status change: an archived
  memory stays archived, a forgotten one is not brought back).
- ``restore`` (our JSONL only): the export's rows come back row for row, never through the merge
  decision: ids (when not taken by another owner's memory), statuses, strengths, pins, counters and
  timestamps as exported. A row already there (its id, or an earlier restore of it) is left as it is,
  so restoring twice changes nothing. Only moderation still applies: instruction-like text in a
  live status is held for review, as on every other write path.

A JSONL file whose every line carries its ``id`` (an export of ours) is restored unless ``merge`` is
asked for; any other file is merged.

A folder (seed 004 §10 migration) is imported file by file, each in its own transaction; each file
imported is renamed to ``<name>.migrated``, so a second run finds nothing left to import.

Modules: `importing` (entry points, folders), `detect` (which format), `formats` and `daily_log` (one
importer per format, each parsing into `records.ImportRecord`), `merge` and `restore` (the two
modes' writers), `export`.
"""

from memories.formats.memory_json import FormatError
from memories.services.transfer.detect import detect_format
from memories.services.transfer.export import (
    EXPORT_CONTENT_TYPES,
    EXPORT_FILE_NAMES,
    EXPORT_FORMATS,
    memory_export,
    memory_md_entries,
    memory_to_jsonl,
    memory_to_seed_004,
)
from memories.services.transfer.importing import MIGRATED_SUFFIX, memory_import, memory_import_text
from memories.services.transfer.records import FORMATS, MODES, ImportReport, ImportWarning

__all__ = [
    "EXPORT_CONTENT_TYPES",
    "EXPORT_FILE_NAMES",
    "EXPORT_FORMATS",
    "FORMATS",
    "MIGRATED_SUFFIX",
    "MODES",
    "FormatError",
    "ImportReport",
    "ImportWarning",
    "detect_format",
    "memory_export",
    "memory_import",
    "memory_import_text",
    "memory_md_entries",
    "memory_to_jsonl",
    "memory_to_seed_004",
]
