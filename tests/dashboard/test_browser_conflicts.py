"""Contradictions and search results in Chromium: both sides of a supersede marked in the list, the
older one's page pointing at the newer one by a working link (also at 390 px), and a search that
lists its strong matches with each one's score breakdown and the weak ones one click away."""

import pytest

from memories.drafts import MemoryDraft
from memories.services.decisions import memory_write
from memories.services.memories import memory_create
from tests.dashboard.browser import NARROW, VIEWPORT, Watch, log_in, person, screenshot, wait_ready
from tests.dashboard.conftest import PASSWORD
from tests.dashboard.test_browser_layout import _layout_problems

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_superseded_memory_says_so_and_links_the_newer_one(server, browser):
    base = server.base
    alice = person("alice")
    porto = memory_write(owner=alice, draft=MemoryDraft(content="Lives in Porto"), actor="test").memory
    lisbon = memory_write(
        owner=alice, draft=MemoryDraft(content="Lives in Lisbon", replaces="Lives in Porto"), actor="test"
    ).memory
    watch = Watch(base)
    context = browser.new_context(viewport=VIEWPORT)
    page = watch.attach(context.new_page())
    log_in(page, base, "alice", PASSWORD)

    page.goto(f"{base}/memories/")
    wait_ready(page)
    assert page.inner_text(f"tr[data-id='{porto.pk}'] .chip.conflict-superseded") == "superseded"
    assert page.inner_text(f"tr[data-id='{lisbon.pk}'] .chip.conflict-supersedes") == "supersedes"
    # a row redrawn after an action keeps its chip
    page.click(f"tr[data-id='{lisbon.pk}'] button[data-action='pin']")
    page.wait_for_selector(f"tr[data-id='{lisbon.pk}'] .chip.pinned")
    assert page.inner_text(f"tr[data-id='{lisbon.pk}'] .chip.conflict-supersedes") == "supersedes"

    page.goto(f"{base}/memories/{porto.pk}/")
    wait_ready(page)
    assert page.inner_text("#memory-conflict") == "superseded"
    assert page.locator(".relations li").count() == 1
    assert page.inner_text(".relations li .chip.rel") == "superseded by"
    screenshot(page, "memory-superseded")
    page.click("#conflict-notice a")
    page.wait_for_url(f"{base}/memories/{lisbon.pk}/")
    wait_ready(page)
    assert page.inner_text("#memory-conflict") == "supersedes"
    assert page.inner_text("#conflict-notice li a") == "Lives in Porto"
    context.close()

    # at 390 px the notice fits with nothing overlapping
    person("root-operator", is_staff=True)
    narrow = browser.new_context(viewport=NARROW, device_scale_factor=1)
    page = watch.attach(narrow.new_page())
    log_in(page, base, "root-operator", PASSWORD)
    page.goto(f"{base}/memories/{porto.pk}/?owner=alice")
    wait_ready(page)
    assert page.locator("#conflict-notice").is_visible()
    assert _layout_problems(page, "/memories/<id>/") == []
    screenshot(page, "narrow-memory-superseded")
    narrow.close()
    watch.check()


def test_search_shows_each_results_score_breakdown_and_hides_weak_matches_until_asked(server, browser):
    base = server.base
    alice = person("alice")
    for text in ("Sister Ana lives in Porto", "Ana likes Porto wine", "Owns a red bicycle", "Reads sci-fi novels"):
        memory_create(owner=alice, draft=MemoryDraft(content=text), actor="test")
    watch = Watch(base)
    context = browser.new_context(viewport=VIEWPORT)
    page = watch.attach(context.new_page())
    log_in(page, base, "alice", PASSWORD)

    page.goto(f"{base}/memories/")
    wait_ready(page)
    with page.expect_response(lambda r: "/dashboard/api/memories/?" in r.url and "q=Ana" in r.url) as answer:
        page.fill("input[name=q]", "Ana Porto")
    expected = answer.value.json()
    page.wait_for_function("document.querySelectorAll('#memory-rows tr').length === 2")
    assert page.inner_text("#result-count").startswith("2 matches (hybrid search, ")
    assert page.inner_text("#show-weak") == "show 2 weaker"
    for row in expected["results"]:
        details = page.locator(f"tr[data-id='{row['id']}'] details.score-detail")
        assert details.locator("summary").inner_text() == f"score {row['score']:.3f}"
        details.locator("summary").click()
        for key in ("relevance", "similarity", "bm25", "importance", "recency", "strength"):
            assert details.locator(f"dd[data-score='{key}']").inner_text() == f"{row['scores'][key]:.3f}", key
    screenshot(page, "memories-search-scores")

    page.click("#show-weak")
    page.wait_for_function("document.querySelectorAll('#memory-rows tr').length === 4")
    assert page.inner_text("#result-count").startswith("4 matches")
    assert page.locator("#show-weak").count() == 0
    context.close()
    watch.check()
