"""Request analytics in Chromium: requests agents make over REST show up per day and per owner and
agent, as stored rows (not a process's memory)."""

import pytest

from analytics.models import RequestDaily
from memories.services.api_keys import api_key_create
from tests.dashboard.browser import VIEWPORT, Watch, api_call, canvas_ink, log_in, person, screenshot, wait_ready
from tests.dashboard.conftest import PASSWORD

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_adds_and_searches_per_day_and_latency_per_owner_and_agent(server, browser):
    base = server.base
    person("alice")
    person("root", is_staff=True)
    person("bob")
    _, alice_key = api_key_create(username="alice", name="bot")
    _, bob_key = api_key_create(username="bob", name="bot")
    for i in range(3):
        assert (
            api_call(base, alice_key, "POST", "/api/v1/memories/", {"content": f"Fact {i}", "agent": "bot"})[0] == 201
        )
    for _ in range(5):
        assert api_call(base, alice_key, "POST", "/api/v1/search/", {"query": "fact"})[0] == 200
    assert api_call(base, alice_key, "POST", "/api/v1/search/", {"query": ""})[0] == 400
    assert api_call(base, bob_key, "POST", "/api/v1/search/", {"query": "x"})[0] == 200

    watch = Watch(base)
    context = browser.new_context(viewport=VIEWPORT)
    page = watch.attach(context.new_page())
    log_in(page, base, "alice", PASSWORD)
    page.click("#sidenav a[data-nav='analytics']")
    wait_ready(page)
    rows = {
        (row.get_attribute("data-agent"), row.get_attribute("data-kind")): (
            row.locator("[data-role=count]").inner_text(),
            row.locator("[data-role=errors]").inner_text(),
        )
        for row in page.locator("#latency tbody tr[data-kind]").all()
    }
    assert rows == {("bot", "add"): ("3", "0"), ("", "search"): ("6", "1")}
    assert page.inner_text("#total-requests") == "9"
    assert canvas_ink(page, "#chart-per-day") > 0
    # what the page shows is stored: the rows are in the database
    stored = {(r.agent, r.kind): r.count for r in RequestDaily.objects.filter(owner__username="alice")}
    assert stored == {("bot", "add"): 3, ("", "search"): 6}
    screenshot(page, "analytics")
    context.close()

    staff = browser.new_context(viewport=VIEWPORT)
    page = watch.attach(staff.new_page())
    log_in(page, base, "root", PASSWORD)
    page.goto(f"{base}/analytics/?all=1")
    wait_ready(page)
    owners = sorted({row.get_attribute("data-owner") for row in page.locator("#latency tbody tr[data-kind]").all()})
    assert owners == ["alice", "bob"]
    staff.close()
    watch.check()
