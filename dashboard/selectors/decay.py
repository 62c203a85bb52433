"""The decay page: the scoring policy, strength curves under it, and how the owner's memories are spread."""

from django.conf import settings
from django.db import connection

from memories import scoring
from memories.models import (
    Memory,
    Status,
)


def decay_policy() -> dict:
    cfg = settings.MEMORY_SCORING
    return {
        "decay_factor": cfg["DECAY_FACTOR"],
        "grace_days": cfg["GRACE_DAYS"],
        "reinforce_rate": cfg["REINFORCE_RATE"],
        "archive_below": cfg["ARCHIVE_BELOW"],
        "forget_below": cfg["FORGET_BELOW"],
        "demote_below": cfg["DEMOTE_BELOW"],
        "contradiction_factor": cfg["CONTRADICTION_FACTOR"],
        "importance": {
            "high": cfg["IMPORTANCE_HIGH"],
            "medium": cfg["IMPORTANCE_MEDIUM"],
            "low": cfg["IMPORTANCE_LOW"],
        },
    }


def _first_day_below(initial: float, threshold: float, horizon: int) -> int | None:
    for day in range(horizon + 1):
        if scoring.decay(initial, day) < threshold:
            return day
    return None


def decay_curves(*, horizon_days: int = 365, reinforce_every: tuple[int, ...] = (30, 7)) -> dict:
    """Strength against days without reinforcement for the three importance levels and full strength,
    and what regular use does to a medium memory — all computed by memories.scoring, so the page
    shows the policy the lifecycle applies."""
    policy = decay_policy()
    days = list(range(horizon_days + 1))
    initials = [1.0, policy["importance"]["high"], policy["importance"]["medium"], policy["importance"]["low"]]
    curves = []
    for initial in dict.fromkeys(initials):
        curves.append(
            {
                "initial": initial,
                "values": [round(v, 5) for v in scoring.project_strength(initial, days)],
                "archived_after_days": _first_day_below(initial, policy["archive_below"], horizon_days),
                "forgotten_after_days": _first_day_below(initial, policy["forget_below"], horizon_days),
            }
        )
    start = policy["importance"]["medium"]
    reinforced = []
    for every in reinforce_every:
        base, last, values = start, 0, []
        for day in days:
            value = scoring.decay(base, day - last)
            if day and day % every == 0:
                base, last = scoring.reinforce(value), day
                value = base
            values.append(round(value, 5))
        reinforced.append({"initial": start, "every_days": every, "values": values})
    return {"days": days, "curves": curves, "reinforced": reinforced, "policy": policy}


def strength_distribution(*, owner, bins: int = 20) -> dict:
    """Histogram of the strengths of the owner's active and archived memories."""
    table = Memory._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT least(width_bucket(strength, 0, 1, %s), %s) AS b, status, count(*)
                FROM "{table}" WHERE owner_id = %s AND status IN ('active', 'archived')
                GROUP BY 1, 2""",
            [bins, bins, owner.pk],
        )
        rows = cursor.fetchall()
    active, archived = [0] * bins, [0] * bins
    for bucket, status, n in rows:
        index = max(0, min(bins - 1, bucket - 1))
        (active if status == Status.ACTIVE else archived)[index] += n
    edges = [round(i / bins, 4) for i in range(bins + 1)]
    return {"edges": edges, "active": active, "archived": archived}
