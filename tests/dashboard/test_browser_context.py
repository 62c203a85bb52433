"""The context-window view in Chromium: every figure it shows is the one GET /api/v1/context/
returns for the same query, agent, session and budget."""

from urllib.parse import urlencode

import pytest

from memories.drafts import MemoryDraft
from memories.services.api_keys import api_key_create
from memories.services.memories import memory_create
from sessions.models import ChatSession
from sessions.services.scratchpad import scratchpad_update
from sessions.services.sessions import session_create, turn_append_many
from tests.dashboard.browser import VIEWPORT, Watch, api_call, log_in, person, screenshot, wait_ready
from tests.dashboard.conftest import PASSWORD

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PARTS = ("instructions", "scratchpad", "pinned", "recalled", "used", "short_term")


def shown_figures(page) -> dict:
    figures = {part: int(page.inner_text(f"#breakdown tr[data-part='{part}'] [data-tokens]")) for part in PARTS}
    figures["budget"] = int(page.inner_text("[data-budget]"))
    figures["tokens"] = int(page.inner_text("[data-prompt-tokens]"))
    figures["short_term_budget"] = int(page.inner_text("[data-short-budget]"))
    figures["memories"] = page.eval_on_selector_all(
        "#context-memories li[data-id]", "items => items.map(li => [li.dataset.kind, li.dataset.id])"
    )
    figures["prompt"] = page.inner_text("#context-prompt")
    return figures


def api_figures(base, key, params) -> dict:
    status, body = api_call(base, key, "GET", "/api/v1/context/?" + urlencode(params))
    assert status == 200, body
    figures = {part: body["breakdown"][part] for part in PARTS}
    figures["budget"] = body["budget"]
    figures["tokens"] = body["tokens"]
    figures["short_term_budget"] = body["breakdown"]["short_term_budget"]
    figures["memories"] = [[m["kind"], m["id"]] for m in body["memories"]]
    figures["prompt"] = body["system_prompt"]
    return figures


def show(page, *, query="", session="", budget=""):
    page.fill("#context-form input[name=query]", query)
    page.select_option("#context-form select[name=session_id]", session)
    page.fill("#context-form input[name=max_tokens]", budget)
    before = page.get_attribute("#context-result", "data-shown")
    page.click("#context-form button[type=submit]")
    page.wait_for_function("(before) => document.getElementById('context-result').dataset.shown !== before", arg=before)


def test_the_context_window_shows_what_the_api_would_inject(server, browser):
    base = server.base
    alice = person("alice")
    _, key = api_key_create(username="alice", name="agent")
    memory_create(
        owner=alice,
        draft=MemoryDraft(content="Allergic to peanuts", category="fact", importance=1.0, pinned=True),
        actor="t",
    )
    memory_create(
        owner=alice,
        draft=MemoryDraft(content="Likes jasmine green tea", category="preference", importance=0.9),
        actor="t",
    )
    for i in range(12):
        memory_create(
            owner=alice, draft=MemoryDraft(content=f"Visited museum number {i} in Lisbon", importance=0.3), actor="t"
        )
    scratchpad_update(owner=alice, current_focus="Planning the Lisbon trip", active_projects=["trip", "garden"])
    session = session_create(owner=alice, channel="api", title="Trip chat")
    turn_append_many(
        session=session,
        turns=[
            {"role": "user", "content": "Which tea should I pack?"},
            {"role": "assistant", "content": "Jasmine green tea travels well."},
            {"role": "user", "content": "And for the museums?"},
        ],
    )
    ChatSession.objects.filter(pk=session.pk).update(rolling_summary="Talked about packing for Lisbon.")

    watch = Watch(base)
    context = browser.new_context(viewport=VIEWPORT)
    page = watch.attach(context.new_page())
    log_in(page, base, "alice", PASSWORD)
    page.click("#sidenav a[data-nav='context']")
    wait_ready(page)
    page.wait_for_selector("#context-result[data-shown]")

    cases = [
        {"query": "which green tea do I like"},  # a first message: pinned memories and implicit recall
        {"query": "museums", "session_id": str(session.pk)},  # mid-session: short-term window, no recall
        {"query": "which green tea do I like", "max_tokens": "100"},  # a budget too small for everything
    ]
    for params in cases:
        show(page, query=params["query"], session=params.get("session_id", ""), budget=params.get("max_tokens", ""))
        shown = shown_figures(page)
        expected = api_figures(base, key, {**params, "agent": ""})
        assert shown == expected, params
        assert shown["used"] == sum(shown[p] for p in ("instructions", "scratchpad", "pinned", "recalled"))
        if params is cases[0]:
            kinds = [kind for kind, _ in shown["memories"]]
            assert kinds.count("recalled") >= 1 and kinds[0] == "pinned"
            assert shown["recalled"] > 0 and shown["scratchpad"] > 0 and shown["short_term"] == 0
            screenshot(page, "context-window")
        if params is cases[1]:
            assert shown["recalled"] == 0 and shown["short_term"] > 0
            assert page.inner_text("#context-short [data-role=summary]") == "Talked about packing for Lisbon."
            assert page.locator("#context-short .turn").count() == 3
        if params is cases[2]:
            assert shown["budget"] == 100 and len(shown["memories"]) < len(expected["memories"]) + 1
    # the preview did not count as a use: only the API calls above touched access counts
    context.close()
    watch.check()


def test_a_bad_budget_is_reported_on_the_page_and_another_owners_session_is_not_found(server, browser):
    base = server.base
    person("alice")
    bob = person("bob")
    theirs = session_create(owner=bob, channel="api", title="Bob's")
    watch = Watch(base)
    context = browser.new_context(viewport=VIEWPORT)
    page = watch.attach(context.new_page())
    log_in(page, base, "alice", PASSWORD)
    page.goto(f"{base}/context/")
    wait_ready(page)
    page.wait_for_selector("#context-result[data-shown]")
    assert page.locator("#context-form select[name=session_id] option").count() == 1  # bob's is not offered
    page.fill("#context-form input[name=max_tokens]", "5")
    # past the browser's own checks, as a hand-made request would be
    page.evaluate("document.getElementById('context-form').noValidate = true")
    page.click("#context-form button[type=submit]")
    page.wait_for_selector("#context-form span:text('max_tokens: Ensure this value is greater than or equal to 100.')")
    status = page.evaluate(
        "(id) => fetch(`/dashboard/api/context/?session_id=${id}`).then(r => r.status)", str(theirs.pk)
    )
    assert status == 404
    context.close()
    watch.check()
