"""Request analytics: counted in the process, added in batches off the request path, once each."""

import pytest

from analytics.models import LATENCY_BOUNDS_MS, RequestDaily, RequestStatBatch
from analytics.selectors import latency_by_owner_and_agent, requests_per_day
from analytics.services import request_record, request_stats_apply, request_stats_flush
from erasure.models import ErasureReceipt
from memory_project.background import background_drain
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def empty_buffer():
    request_stats_flush()  # nothing left over from another test
    background_drain()
    RequestDaily.objects.all().delete()
    yield


def test_requests_are_counted_per_owner_agent_and_kind_and_added_in_one_batch(settings):
    settings.REQUEST_ANALYTICS_FLUSH_SECONDS = 3600
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    for ms in (3.0, 4.0, 30.0):
        request_record(owner_id=alice.pk, agent="", kind="search", ms=ms)
    request_record(owner_id=alice.pk, agent="bot", kind="add", ms=12.0, error=True)
    request_record(owner_id=bob.pk, agent="", kind="search", ms=1.0)
    assert RequestDaily.objects.count() == 0  # nothing written on the request path

    assert request_stats_flush() == 3
    background_drain()
    rows = {
        (r.owner.username, r.agent, r.kind): (r.count, r.errors, r.total_ms, r.max_ms, r.buckets)
        for r in RequestDaily.objects.select_related("owner")
    }
    bucket = {ms: LATENCY_BOUNDS_MS.index(b) for ms, b in ((3.0, 5), (4.0, 5), (30.0, 50), (12.0, 20), (1.0, 1))}

    def hist(*values):
        out = [0] * (len(LATENCY_BOUNDS_MS) + 1)
        for v in values:
            out[bucket[v]] += 1
        return out

    assert rows == {
        ("alice", "", "search"): (3, 0, 37.0, 30.0, hist(3.0, 4.0, 30.0)),
        ("alice", "bot", "add"): (1, 1, 12.0, 12.0, hist(12.0)),
        ("bob", "", "search"): (1, 0, 1.0, 1.0, hist(1.0)),
    }


def test_a_batch_applied_twice_counts_once_and_batches_add_up():
    alice = UserFactory(username="alice")
    day = "2026-01-05"
    batch = [[alice.pk, "", day, "search", 2, 0, 10.0, 6.0, [0, 0, 2] + [0] * 10]]
    assert request_stats_apply(batch_id="00000000-0000-4000-8000-000000000001", rows=batch) is True
    assert request_stats_apply(batch_id="00000000-0000-4000-8000-000000000001", rows=batch) is False
    other = [[alice.pk, "", day, "search", 1, 1, 90.0, 90.0, [0] * 6 + [1] + [0] * 6]]
    assert request_stats_apply(batch_id="00000000-0000-4000-8000-000000000002", rows=other) is True
    row = RequestDaily.objects.get(owner=alice)
    assert (row.count, row.errors, row.total_ms, row.max_ms) == (3, 1, 100.0, 90.0)
    assert row.buckets == [0, 0, 2, 0, 0, 0, 1] + [0] * 6
    assert RequestStatBatch.objects.count() == 2


def test_an_owner_deleted_before_the_batch_lands_is_skipped():
    alice = UserFactory(username="alice")
    gone = UserFactory(username="gone")
    gone_id = gone.pk
    gone.delete()
    rows = [
        [gone_id, "", "2026-01-05", "add", 1, 0, 1.0, 1.0, [1] + [0] * 12],
        [alice.pk, "", "2026-01-05", "add", 1, 0, 1.0, 1.0, [1] + [0] * 12],
    ]
    assert request_stats_apply(batch_id="00000000-0000-4000-8000-000000000003", rows=rows) is True
    assert list(RequestDaily.objects.values_list("owner_id", flat=True)) == [alice.pk]


def test_counts_that_began_before_an_erasure_of_their_owner_or_agent_are_dropped():
    # given alice's counts from before and after the erasure of her agent "bot", and bob's
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    ErasureReceipt.objects.create(
        owner_id=alice.pk, agent="bot", counts={}, total=0, requested_by="alice", erased_at="2026-01-05T12:00:00+00:00"
    )
    one = [1, 0, 1.0, 1.0, [1] + [0] * 12]
    rows = [
        [alice.pk, "bot", "2026-01-05", "add", *one, "2026-01-05T11:59:00+00:00"],
        [alice.pk, "bot", "2026-01-05", "search", *one, "2026-01-05T12:01:00+00:00"],
        [alice.pk, "", "2026-01-05", "add", *one, "2026-01-05T11:59:00+00:00"],
        [bob.pk, "bot", "2026-01-05", "add", *one, "2026-01-05T11:59:00+00:00"],
    ]

    # when the batch lands after the erasure
    assert request_stats_apply(batch_id="00000000-0000-4000-8000-000000000004", rows=rows) is True

    # then only the counts of the erased agent that began before it are gone
    assert sorted(RequestDaily.objects.values_list("owner__username", "agent", "kind")) == [
        ("alice", "", "add"),
        ("alice", "bot", "search"),
        ("bob", "bot", "add"),
    ]


def test_the_buffer_is_sent_when_enough_requests_arrive(settings):
    settings.REQUEST_ANALYTICS_FLUSH_SECONDS = 3600
    settings.REQUEST_ANALYTICS_FLUSH_REQUESTS = 4
    alice = UserFactory(username="alice")
    for _ in range(4):
        request_record(owner_id=alice.pk, agent="", kind="context", ms=2.0)
    background_drain()
    assert RequestDaily.objects.get(owner=alice, kind="context").count == 4


def test_the_selectors_read_days_and_percentiles(settings):
    settings.REQUEST_ANALYTICS_FLUSH_SECONDS = 3600
    alice = UserFactory(username="alice")
    for ms in [1.5] * 18 + [150.0, 7000.0]:
        request_record(owner_id=alice.pk, agent="", kind="search", ms=ms)
    request_record(owner_id=alice.pk, agent="", kind="add", ms=8.0)
    request_stats_flush(inline=True)
    per_day = requests_per_day(owner=alice, days=7)
    assert (len(per_day["days"]), per_day["series"]["search"][-1], per_day["series"]["add"][-1]) == (7, 20, 1)
    assert sum(per_day["series"]["search"][:-1]) == 0
    rows = {r["kind"]: r for r in latency_by_owner_and_agent(owner=alice, days=7)}
    assert (rows["search"]["count"], rows["search"]["p50_ms"], rows["search"]["p95_ms"]) == (20, 2.0, 200.0)
    assert rows["search"]["max_ms"] == 7000.0 and rows["search"]["mean_ms"] == round((27 + 7150) / 20, 2)
