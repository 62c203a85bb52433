"""The nightly per-owner lifecycle (DESIGN §4 "Lifecycle"), one set-based step after another.

Steps, in order, `runner.STEPS`: drain leftover extraction jobs (drain) → semantic dedup and merge
(dedup) → decay → archive / forget / demote (decay) → expire → expired attachments → compress old
rarely used memories (compress) → daily digests (digests) → MEMORY.md / USER.md / learnings.md
exports (exports) → per-owner cap (forget). `common` holds the set-based move they share.

Each step commits on its own (a crash part-way leaves the finished steps done) and is idempotent:
decay recomputes from `base_strength`, thresholds and expiry only move rows that still qualify,
compression and digests only pick work not done yet. So re-running after a crash, or twice the
same night, gives the same result.

Concurrency: a run holds a session-level PostgreSQL advisory lock keyed on the owner for its
whole duration. A second run for the same owner does not wait: it is recorded as a LifecycleRun
with status "failed" and error "another run in progress" (`LOCK_BUSY_ERROR`), does nothing, and
is returned at once.

Bulk changes leave history like single ones: every row a threshold, expiry, compression, merge or
the cap moves gets a MemoryEvent (actor "system:lifecycle", before/after with strength, status,
retention and expires_at), inserted by the same statement that changes the row. Decay updates
every row's strength but writes a "decay" event only when the strength crosses a multiple of 0.05
(`DECAY_CHECKPOINTS`): a history checkpoint every 0.05 of strength lost, instead of one row per
memory per night. Lifecycle bookkeeping (event times, `updated_at`) uses the wall clock; the
scoring clock (`now`) can be moved for time travel. Pure decay does not touch `updated_at`, so
"recently updated" keeps meaning a content or status change, and it changes no indexed column,
so each row is a HOT update (see memories migration 0004).

Memories a person pinned are never changed by the lifecycle: no decay, no status change, never a
dedup loser, never compressed, never capped.
"""

from memories.services.lifecycle.common import ACTOR, LIFECYCLE_DEFAULTS, lifecycle_settings
from memories.services.lifecycle.exports import export_dir_for, short_ids
from memories.services.lifecycle.runner import (
    INTERRUPTED_ERROR,
    LOCK_BUSY_ERROR,
    STEPS,
    lifecycle_completed_payload,
    lifecycle_owners,
    lifecycle_run,
    lifecycle_run_all,
)

__all__ = [
    "ACTOR",
    "INTERRUPTED_ERROR",
    "LIFECYCLE_DEFAULTS",
    "LOCK_BUSY_ERROR",
    "STEPS",
    "export_dir_for",
    "lifecycle_completed_payload",
    "lifecycle_owners",
    "lifecycle_run",
    "lifecycle_run_all",
    "lifecycle_settings",
    "short_ids",
]
