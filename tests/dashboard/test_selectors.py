"""The dashboard's reads agree with the engine they show: metrics, the decay policy, projections."""

from datetime import timedelta

import pytest
from django.utils import timezone

from dashboard import selectors
from memories import scoring
from memories.drafts import MemoryDraft
from memories.selectors.metrics import _memory_stats
from memories.services.lifecycle import lifecycle_run
from memories.services.memories import memory_create, memory_update
from tests.dashboard.scenes import scene
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def test_memory_metrics_count_each_status_and_category_in_one_pass(alice, bob, django_assert_num_queries):
    # given memories of every status (and one of another owner)
    MemoryFactory(owner=alice, status="active", category="fact", importance=0.8, strength=0.6)
    MemoryFactory(owner=alice, status="active", category="rule", importance=0.4, strength=1.0)
    MemoryFactory(owner=alice, status="archived", category="todo", importance=0.3)
    MemoryFactory(owner=alice, status="forgotten", category="rule")
    MemoryFactory(owner=alice, status="pending_review", category="fact", strength=0.9)
    MemoryFactory(owner=bob, status="active")

    # when the overview reads its figures (the API's metrics)
    with django_assert_num_queries(1):
        memories = _memory_stats(alice)
    overview = selectors.overview_metrics(owner=alice)

    # then each figure is exact, from one statement, and the overview shows the same
    assert memories == {
        "total": 5,
        "by_status": {"active": 2, "archived": 1, "forgotten": 1, "pending_review": 1},
        "by_category": {"fact": 2, "rule": 1, "todo": 1},
        "avg_importance": 0.6,
        "avg_strength": 0.8,
    }
    assert overview["memories"] == memories


def test_decay_curves_are_the_scoring_functions(settings):
    settings.MEMORY_SCORING = {**settings.MEMORY_SCORING, "DECAY_FACTOR": 0.98, "GRACE_DAYS": 3}
    curves = selectors.decay_curves(horizon_days=120)
    assert curves["policy"]["decay_factor"] == 0.98
    high = next(c for c in curves["curves"] if c["initial"] == settings.MEMORY_SCORING["IMPORTANCE_HIGH"])
    assert high["values"][:4] == [0.8, 0.8, 0.8, 0.8]  # the grace period
    assert high["values"][50] == pytest.approx(scoring.decay(0.8, 50), abs=1e-5)
    below = next(d for d, v in enumerate(high["values"]) if v < 0.2)
    assert high["archived_after_days"] == below
    weekly = next(r for r in curves["reinforced"] if r["every_days"] == 7)
    never = next(c for c in curves["curves"] if c["initial"] == settings.MEMORY_SCORING["IMPORTANCE_MEDIUM"])
    assert weekly["values"][-1] > never["values"][-1]


def test_strength_projection_follows_the_policy_from_the_last_reinforcement(alice):
    memory = memory_create(
        owner=alice, draft=MemoryDraft(content="Plays the piano", importance=0.6, retention="long"), actor="t"
    )
    reinforced = timezone.now() - timedelta(days=20)
    type(memory).objects.filter(pk=memory.pk).update(last_reinforced_at=reinforced)
    memory.refresh_from_db()
    memory_update(memory=memory, actor="t", content="Plays the piano daily")
    memory.refresh_from_db()
    series = selectors.memory_strength_series(memory=memory, events=list(memory.events.order_by("id")))
    assert [p["event"] for p in series["past"]] == ["add", "update", "now"]
    assert series["projection"][0]["strength"] == pytest.approx(scoring.decay(0.6, 20), abs=1e-4)
    assert series["projection"][10]["strength"] == pytest.approx(scoring.decay(0.6, 30), abs=1e-4)
    assert series["crossings"]["archive"] is not None and series["crossings"]["forget"] is not None
    pinned = memory_update(memory=memory, actor="t", pinned=True)
    flat = selectors.memory_strength_series(memory=pinned, events=[])
    assert {p["strength"] for p in flat["projection"]} == {round(pinned.strength, 5)}


def test_past_strengths_show_each_history_row_before_and_after(alice):
    # given a memory said 16 days ago, decayed by the lifecycle across 0.55 (0.6 × 0.99^9 ≈ 0.548)
    now = timezone.now()
    said = now - timedelta(days=16)
    memory = memory_create(
        owner=alice, draft=MemoryDraft(content="Plays chess", importance=0.6, observed_at=said), actor="t"
    )
    lifecycle_run(owner=alice, now=now)
    memory.refresh_from_db()

    # when its strength series is read
    series = selectors.memory_strength_series(memory=memory, events=list(memory.events.order_by("created_at", "id")))

    # then the decay checkpoint is drawn from where it started to where it ended, then now
    assert [(p["event"], p["strength"]) for p in series["past"]] == [
        ("add", 0.6),
        ("decay (before)", 0.6),
        ("decay", pytest.approx(0.6 * 0.99**9, abs=1e-12)),
        ("now", round(0.6 * 0.99**9, 5)),
    ]
    decay = next(p for p in series["past"] if p["event"] == "decay")
    assert next(p for p in series["past"] if p["event"] == "decay (before)")["t"] == decay["t"]


def test_strength_distribution_counts_active_and_archived_only(alice):
    for strength, status in [(0.0, "active"), (0.05, "active"), (0.5, "archived"), (1.0, "active"), (0.7, "forgotten")]:
        MemoryFactory(owner=alice, strength=strength, status=status)
    dist = selectors.strength_distribution(owner=alice)
    assert sum(dist["active"]) == 3 and sum(dist["archived"]) == 1
    assert dist["active"][0] == 1 and dist["active"][1] == 1 and dist["active"][-1] == 1
    assert dist["archived"][10] == 1


def test_agents_are_listed_by_a_loose_index_scan(alice, bob):
    for agent in ["", "work", "home", "work"]:
        MemoryFactory(owner=alice, agent=agent)
    MemoryFactory(owner=bob, agent="secret")
    assert selectors.memory_agents(owner=alice) == ["", "home", "work"]


def test_activity_counts_per_day(alice):
    tea = scene(alice)["tea"]
    memory_update(memory=tea, actor="t", content="Drinks oolong")
    activity = selectors.memory_activity(owner=alice, days=7)
    assert activity["added"][-1] == 3 and activity["updated"][-1] == 1 and activity["forgotten"] == [0] * 7
