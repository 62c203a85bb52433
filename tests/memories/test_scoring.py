"""The seed 002 §3.4 formulas, checked numerically (seed 002 §7.3 merger rows)."""

from datetime import UTC, datetime, timedelta

import pytest

from memories import scoring


@pytest.mark.parametrize(("importance", "expected"), [("high", 0.8), ("medium", 0.6), ("low", 0.4), (0.73, 0.73)])
def test_initial_strength_follows_importance(importance, expected):
    assert scoring.initial_strength(importance) == pytest.approx(expected)


@pytest.mark.parametrize("bad", ["urgent", -0.1, 1.5, float("nan")])
def test_importance_outside_the_scale_is_refused(bad):
    with pytest.raises(ValueError):
        scoring.importance_value(bad)


def test_reinforcement_has_diminishing_returns():
    # given the seed's example 0.6 → 0.68 → 0.744
    first = scoring.reinforce(0.6)
    second = scoring.reinforce(first)

    assert first == pytest.approx(0.68)
    assert second == pytest.approx(0.744)


def test_repeated_reinforcement_converges_below_one():
    strength = 0.4
    for _ in range(50):
        previous = strength
        strength = scoring.reinforce(strength)
        assert previous < strength < 1.0
    # the gap to 1 shrinks by a factor 0.8 per hit
    assert 1.0 - strength == pytest.approx(0.6 * 0.8**50)


@pytest.mark.parametrize("days", [0, 1, 6.9, 7])
def test_no_decay_within_the_grace_period(days):
    assert scoring.decay(0.8, days) == pytest.approx(0.8)


@pytest.mark.parametrize(("days", "factor"), [(8, 0.99), (17, 0.99**10), (37, 0.99**30), (107, 0.99**100)])
def test_decay_after_the_grace_period(days, factor):
    assert scoring.decay(0.8, days) == pytest.approx(0.8 * factor)


def test_decay_counts_whole_days():
    assert scoring.decay(0.8, 17.9) == pytest.approx(0.8 * 0.99**10)


def test_contradiction_halves_strength():
    assert scoring.contradict(0.62) == pytest.approx(0.31)


@pytest.mark.parametrize(
    ("strength", "retention", "expected"),
    [
        (0.5, "long", "active"),
        (0.2, "long", "active"),
        (0.199, "long", "archived"),
        (0.05, "long", "archived"),
        (0.049, "long", "forgotten"),
        (0.049, "permanent", "archived"),
        (0.0, "permanent", "archived"),
    ],
)
def test_thresholds(strength, retention, expected):
    assert scoring.status_for_strength(strength, retention=retention) == expected


def test_thresholds_leave_moderation_states_alone():
    assert scoring.status_for_strength(0.01, retention="long", current="pending_review") == "pending_review"


def test_thresholds_are_settings(settings):
    settings.MEMORY_SCORING = {**settings.MEMORY_SCORING, "ARCHIVE_BELOW": 0.5, "GRACE_DAYS": 0}

    assert scoring.status_for_strength(0.45, retention="long") == "archived"
    assert scoring.decay(1.0, 3) == pytest.approx(0.99**3)


@pytest.mark.parametrize(("retention", "days"), [("transient", 1), ("short", 3), ("long", 30)])
def test_retention_classes_set_expiry(retention, days):
    said = datetime(2026, 1, 1, 12, tzinfo=UTC)
    assert scoring.expires_at_for(retention, said) == said + timedelta(days=days)


def test_permanent_retention_never_expires():
    assert scoring.expires_at_for("permanent", datetime(2026, 1, 1, tzinfo=UTC)) is None


def test_recency_half_life():
    assert scoring.recency(0) == pytest.approx(1.0)
    assert scoring.recency(30) == pytest.approx(0.5)
    assert scoring.recency(60) == pytest.approx(0.25)


def test_mixed_scene_new_hit_decay_forget():
    # given one new memory, one hit, one decaying and one fading out (seed 002 §7.3 "mixed")
    new = scoring.initial_strength("high")
    hit = scoring.reinforce(0.6)
    decayed = scoring.decay(0.6, 37)
    fading = scoring.decay(0.1, 107)

    assert (new, hit) == (pytest.approx(0.8), pytest.approx(0.68))
    assert decayed == pytest.approx(0.6 * 0.99**30)
    assert scoring.status_for_strength(decayed, retention="long") == "active"
    assert fading == pytest.approx(0.1 * 0.99**100)
    assert scoring.status_for_strength(fading, retention="long") == "forgotten"
