"""Contradictions on the dashboard: each side says which it is (superseded, supersedes,
contradicted) in the list and on its page, a pair shows once, and the history's "superseded by"
links to the other memory; search results carry their score breakdown and leave out weak matches."""

import re

import pytest

from dashboard import selectors
from memories.drafts import MemoryDraft
from memories.models import MemoryEvent, MemoryRelation
from memories.services.decisions import memory_write
from memories.services.memories import memory_create, memory_update
from tests.dashboard.scenes import XSS
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def moved(alice):
    """Porto replaced by Lisbon through the merge decision, as an agent's write does it."""
    porto = memory_write(owner=alice, draft=MemoryDraft(content="Lives in Porto"), actor="test").memory
    lisbon = memory_write(
        owner=alice, draft=MemoryDraft(content="Lives in Lisbon", replaces="Lives in Porto"), actor="test"
    ).memory
    porto.refresh_from_db()
    return porto, lisbon


def test_a_supersede_is_one_relation_row_from_each_side(moved):
    porto, lisbon = moved
    assert set(MemoryRelation.objects.filter(source=lisbon).values_list("type", flat=True)) == {
        "supersedes",
        "contradicts",
    }
    assert [(r["words"], r["other"].pk) for r in selectors.memory_relations(memory=lisbon)] == [
        ("supersedes", porto.pk)
    ]
    assert [(r["words"], r["other"].pk) for r in selectors.memory_relations(memory=porto)] == [
        ("superseded by", lisbon.pk)
    ]


def test_conflicts_name_each_side_and_ignore_forgotten_ones(alice, bob, moved):
    porto, lisbon = moved
    tea = MemoryFactory(owner=alice, content="Drinks tea")
    coffee = MemoryFactory(owner=alice, content="Drinks coffee")
    MemoryRelation.objects.create(owner=alice, source=coffee, target=tea, type="contradicts")
    gone = MemoryFactory(owner=alice, content="Plays golf", status="forgotten")
    tennis = MemoryFactory(owner=alice, content="Plays tennis")
    MemoryRelation.objects.create(owner=alice, source=tennis, target=gone, type="contradicts")
    ids = [porto.pk, lisbon.pk, tea.pk, coffee.pk, tennis.pk]
    assert selectors.memory_conflicts(owner=alice, ids=ids) == {
        str(porto.pk): "superseded",
        str(lisbon.pk): "supersedes",
        str(tea.pk): "contradicted",
        str(coffee.pk): "contradicted",
    }
    assert selectors.memory_conflicts(owner=bob, ids=ids) == {}


def test_the_list_marks_both_sides(alice_client, moved):
    porto, lisbon = moved
    rows = alice_client.get("/dashboard/api/memories/").json()["results"]
    assert {r["content"]: (r["status"], r["conflict"]) for r in rows} == {
        "Lives in Porto": (porto.status, "superseded"),
        "Lives in Lisbon": ("active", "supersedes"),
    }


def test_one_memorys_json_carries_its_conflict_too(alice_client, moved):
    porto, lisbon = moved
    assert alice_client.get(f"/dashboard/api/memories/{porto.pk}/").json()["memory"]["conflict"] == "superseded"
    assert alice_client.get(f"/dashboard/api/memories/{lisbon.pk}/").json()["memory"]["conflict"] == "supersedes"


def test_the_superseded_page_says_so_and_links_the_newer_memory(alice_client, moved):
    porto, lisbon = moved
    html = alice_client.get(f"/memories/{porto.pk}/").content.decode()
    assert '<span class="chip conflict-superseded" id="memory-conflict">superseded</span>' in html
    notice = re.search(r'<div class="notice conflict" id="conflict-notice">(.*?)</div>', html, re.S).group(1)
    assert "A newer memory replaced this one:" in notice
    assert f'superseded by <a href="/memories/{lisbon.pk}/">Lives in Lisbon</a>' in notice
    # the pair is listed once under Relations, and the history's reason is a link, not an id
    assert html.count(f'href="/memories/{lisbon.pk}/"') == 3
    assert f"superseded by {lisbon.pk}" not in html
    assert f'<div class="muted">superseded by <a href="/memories/{lisbon.pk}/">Lives in Lisbon</a>' in html


def test_the_newer_page_links_what_it_replaced(alice_client, moved):
    porto, lisbon = moved
    html = alice_client.get(f"/memories/{lisbon.pk}/").content.decode()
    assert "This memory replaced:" in html
    assert f'supersedes <a href="/memories/{porto.pk}/">Lives in Porto</a>' in html
    assert f"supersedes {porto.pk}" not in html


def test_a_reason_naming_another_owners_or_an_erased_memory_links_nothing(alice, bob, alice_client):
    mine = memory_create(owner=alice, draft=MemoryDraft(content="Uses Vim"), actor="test")
    theirs = memory_create(owner=bob, draft=MemoryDraft(content="Bob's secret"), actor="test")
    memory_update(memory=mine, actor="test", reason=f"superseded by {theirs.pk}", importance=0.9)
    html = alice_client.get(f"/memories/{mine.pk}/").content.decode()
    assert "superseded by a memory that was erased" in html
    assert str(theirs.pk) not in html and "Bob&#x27;s secret" not in html and "Bob's secret" not in html
    assert MemoryEvent.objects.filter(memory=mine, reason=f"superseded by {theirs.pk}").count() == 1


def test_the_other_sides_text_is_escaped(alice, alice_client):
    old = memory_write(owner=alice, draft=MemoryDraft(content=XSS), actor="test").memory
    new = memory_write(owner=alice, draft=MemoryDraft(content="Plain text now", replaces=XSS), actor="test").memory
    html = alice_client.get(f"/memories/{new.pk}/").content.decode()
    assert XSS not in html
    assert f'supersedes <a href="/memories/{old.pk}/">&lt;img src=x onerror=alert(1)&gt;</a>' in html


def test_search_results_carry_their_score_breakdown_and_weak_matches_are_counted(alice, alice_client):
    for text in ("Sister Ana lives in Porto", "Ana likes Porto wine", "Owns a red bicycle", "Reads sci-fi novels"):
        memory_create(owner=alice, draft=MemoryDraft(content=text), actor="test")
    page = alice_client.get("/dashboard/api/memories/", {"q": "Ana Porto"}).json()
    assert {r["content"] for r in page["results"]} == {"Sister Ana lives in Porto", "Ana likes Porto wine"}
    assert (page["count"], page["weak_hidden"]) == (2, 2)
    best = max(r["scores"]["relevance"] for r in page["results"])
    for row in page["results"]:
        assert set(row["scores"]) >= {"relevance", "similarity", "bm25", "importance", "recency", "strength"}
        assert row["scores"]["relevance"] >= selectors.SEARCH_RELATIVE_CUTOFF * best
        assert row["scores"]["lexical_rank"] in (1, 2)
    everything = alice_client.get("/dashboard/api/memories/", {"q": "Ana Porto", "weak": "1"}).json()
    assert (everything["count"], everything["weak_hidden"]) == (4, 0)
    strong = {r["id"] for r in page["results"]}
    weak = [r["scores"]["relevance"] for r in everything["results"] if r["id"] not in strong]
    assert len(weak) == 2 and all(relevance < selectors.SEARCH_RELATIVE_CUTOFF * best for relevance in weak)
