"""Decay and thresholds: strength fades since the last reinforcement; weak memories archive, forget, demote."""

from datetime import timedelta

from memories import scoring
from memories.models import EventType, Retention
from memories.services.lifecycle.common import StepContext, decay_sql, rows_move, status_move, wall_now

# Decay writes a history row when a memory's strength crosses a multiple of 1 / DECAY_CHECKPOINTS
# (0.05). Multiplying keeps the grid exact in binary floating point (0.6 * 20 == 12.0, whereas
# 0.6 / 0.05 < 12).
DECAY_CHECKPOINTS = 20


def decay_step(run: StepContext) -> tuple[dict, dict]:
    """ONE UPDATE: strength recomputed from base_strength, so a second run the same day changes nothing.

    Every decayed row's strength is updated; the same statement writes a "decay" event only for
    rows whose strength crossed a multiple of 1 / DECAY_CHECKPOINTS (a checkpoint every 0.05).
    """
    params = {
        "factor": float(run.scoring["DECAY_FACTOR"]),
        "grace": float(run.scoring["GRACE_DAYS"]),
    }
    decayed, checkpoints = rows_move(
        run,
        where=f"m.status IN ('active', 'archived') AND NOT m.pinned AND m.strength <> {decay_sql(run, 'm.')}",
        set_sql=f"strength = {decay_sql(run, 'm.')}",
        event_type=EventType.DECAY,
        reason="decay since the last reinforcement",
        params=params,
        history_if=f"floor(old_strength * {DECAY_CHECKPOINTS}) <> floor(strength * {DECAY_CHECKPOINTS})",
    )
    return {"decayed": decayed, "checkpoints": checkpoints}, {}


def thresholds_step(run: StepContext) -> tuple[dict, dict]:
    """Forget below FORGET_BELOW (never permanent), archive below ARCHIVE_BELOW, demote below DEMOTE_BELOW."""
    cfg = run.scoring
    wall = wall_now()
    forgotten = status_move(
        run,
        to="forgotten",
        where="m.status IN ('active', 'archived') AND NOT m.pinned AND m.retention <> 'permanent' "
        "AND m.strength < %(below)s",
        reason=f"strength below {cfg['FORGET_BELOW']}",
        params={"below": float(cfg["FORGET_BELOW"]), "wall": wall},
    )
    archived = status_move(
        run,
        to="archived",
        where="m.status = 'active' AND NOT m.pinned AND m.strength < %(below)s",
        reason=f"strength below {cfg['ARCHIVE_BELOW']}",
        params={"below": float(cfg["ARCHIVE_BELOW"]), "wall": wall},
    )
    transient_days = scoring.RETENTION_DAYS[Retention.TRANSIENT]
    demoted, _ = rows_move(
        run,
        where="m.status IN ('active', 'archived') AND NOT m.pinned "
        "AND m.retention NOT IN ('transient', 'permanent') AND m.strength < %(below)s",
        set_sql="retention = 'transient', "
        "expires_at = least(coalesce(m.expires_at, %(expires)s), %(expires)s), updated_at = %(wall)s",
        event_type=EventType.DEMOTE,
        reason=f"strength below {cfg['DEMOTE_BELOW']}: retention demoted to transient",
        params={
            "below": float(cfg["DEMOTE_BELOW"]),
            "expires": run.now + timedelta(days=transient_days),
            "wall": wall,
        },
    )
    return {"forgotten": forgotten, "archived": archived, "demoted": demoted}, {}
