"""The core memory editor in Chromium: MEMORY.md, USER.md, the rolling summary and the scratchpad
edited in the page and saved as memory changes, and a concurrent change reported, not overwritten.
"""

import pytest

from memories.drafts import MemoryDraft
from memories.models import CoreMemory, Memory, MemoryEvent
from memories.services.api_keys import api_key_create
from memories.services.memories import memory_create
from memories.services.memory_md_edit import memory_md_get
from sessions.models import Scratchpad
from tests.dashboard.browser import VIEWPORT, Watch, api_call, log_in, person, screenshot, wait_ready
from tests.dashboard.conftest import PASSWORD

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def editor_text(page, tab: str) -> str:
    return page.evaluate("(tab) => window.memoryDashboard.editors[tab].state.doc.toString()", tab)


def undated(text: str) -> str:
    """The file without its "Last updated" line (the time of rendering)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("<!-- Last updated"))


def replace_editor_text(page, tab: str, text: str) -> None:
    """As a person does it: click into the editor, select everything, type (paste) the new text."""
    page.click(f"[data-editor='{tab}'] .cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(text)


def _alice():
    alice = person("alice")
    return alice, {
        "tea": memory_create(
            owner=alice, draft=MemoryDraft(content="Likes green tea", category="preference", importance=0.9), actor="t"
        ),
        "cat": memory_create(
            owner=alice, draft=MemoryDraft(content="Has a cat named Miso", category="fact", importance=0.7), actor="t"
        ),
        "gym": memory_create(
            owner=alice, draft=MemoryDraft(content="Goes to the gym on Mondays", category="workflow"), actor="t"
        ),
    }


def test_memory_md_round_trip_in_the_editor(server, browser):
    base = server.base
    alice, notes = _alice()
    watch = Watch(base)
    context = browser.new_context(viewport=VIEWPORT)
    page = watch.attach(context.new_page())
    log_in(page, base, "alice", PASSWORD)
    page.click("#sidenav a[data-nav='core']")
    wait_ready(page)
    assert page.locator("[data-editor='memory-md'] .cm-editor").is_visible()
    shown = editor_text(page, "memory-md")
    assert undated(shown) == undated(memory_md_get(owner=alice)["content"])
    screenshot(page, "core-memory-md")

    edited = (
        shown.replace("Has a cat named Miso", "Has a cat named Tofu")
        .replace(_entry_block(shown, "Goes to the gym on Mondays"), "")
        .rstrip("\n")
        + "\n\n### fact\nSpeaks Portuguese\n"
    )
    replace_editor_text(page, "memory-md", edited)
    assert page.locator("[data-tab='memory-md'].dirty").count() == 1
    page.click("[data-save='memory-md']")
    page.locator("#toasts .toast.msg-success", has_text="MEMORY.md saved: 1 updated, 1 added, 1 forgotten.").wait_for()

    cat, gym = Memory.objects.get(pk=notes["cat"].pk), Memory.objects.get(pk=notes["gym"].pk)
    assert (cat.content, gym.status) == ("Has a cat named Tofu", "forgotten")
    added = Memory.objects.get(owner=alice, content="Speaks Portuguese")
    assert (added.category, added.status) == ("fact", "active")
    assert MemoryEvent.objects.get(memory=cat, event_type="update").actor == "dashboard:alice"
    # the editor now holds the file as the server renders it after the save, and is clean
    assert undated(editor_text(page, "memory-md")) == undated(memory_md_get(owner=alice)["content"])
    assert "Speaks Portuguese" in editor_text(page, "memory-md")
    assert page.locator("[data-tab='memory-md'].dirty").count() == 0
    context.close()
    watch.check()


def _entry_block(text: str, content: str) -> str:
    """The '### …' heading and body of the entry whose body is `content`."""
    lines = text.splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.strip() == content)
    return lines[index - 1] + lines[index]


def test_a_change_made_elsewhere_meanwhile_is_reported_not_overwritten(server, browser):
    base = server.base
    alice, notes = _alice()
    _, key = api_key_create(username="alice", name="agent")
    watch = Watch(base)
    context = browser.new_context(viewport=VIEWPORT)
    page = watch.attach(context.new_page())
    log_in(page, base, "alice", PASSWORD)
    page.goto(f"{base}/core/")
    wait_ready(page)

    # an agent changes the cat memory while the page is open
    status, _ = api_call(
        base, key, "PATCH", f"/api/v1/memories/{notes['cat'].pk}/", {"content": "Has a cat named Udon"}
    )
    assert status == 200
    mine = editor_text(page, "memory-md").replace("Likes green tea", "Likes matcha")
    replace_editor_text(page, "memory-md", mine)
    page.click("[data-save='memory-md']")
    conflict = page.locator("[data-conflict='memory-md']")
    conflict.wait_for()
    assert "MEMORY.md changed since you loaded it" in conflict.inner_text()
    assert editor_text(page, "memory-md") == mine  # the person's edit is kept in the editor
    assert Memory.objects.get(pk=notes["tea"].pk).content == "Likes green tea"  # nothing was applied
    assert Memory.objects.get(pk=notes["cat"].pk).content == "Has a cat named Udon"
    screenshot(page, "core-conflict")

    conflict.locator("button").click()
    conflict.wait_for(state="hidden")
    assert "Has a cat named Udon" in editor_text(page, "memory-md")
    assert "Likes matcha" not in editor_text(page, "memory-md")
    context.close()
    watch.check()


def test_user_md_rolling_summary_and_scratchpad_are_edited_in_the_page(server, browser):
    base = server.base
    alice, notes = _alice()
    CoreMemory.objects.create(owner=alice, rolling_summary="Talked about tea.")
    Scratchpad.objects.create(owner=alice, current_focus="Garden", active_projects=["beds"])
    watch = Watch(base)
    context = browser.new_context(viewport=VIEWPORT)
    page = watch.attach(context.new_page())
    log_in(page, base, "alice", PASSWORD)
    page.goto(f"{base}/core/#user-md")
    wait_ready(page)
    assert page.get_attribute("[data-tab='user-md']", "aria-selected") == "true"
    profile = editor_text(page, "user-md")
    assert "## Preferences\n\n- Likes green tea" in profile
    edited = (
        profile.replace("- Has a cat named Miso", "- Has a cat named Miso and a dog named Bo").replace(
            "- Likes green tea\n", ""
        )
        + "\n## Open items\n\n- Renew the passport\n"
    )
    replace_editor_text(page, "user-md", edited)
    page.click("[data-save='user-md']")
    page.locator("#toasts .toast.msg-success", has_text="USER.md saved: 1 updated, 1 added, 1 forgotten.").wait_for()
    assert Memory.objects.get(pk=notes["cat"].pk).content == "Has a cat named Miso and a dog named Bo"
    assert Memory.objects.get(pk=notes["tea"].pk).status == "forgotten"
    assert Memory.objects.get(owner=alice, content="Renew the passport").category == "todo"
    screenshot(page, "core-user-md")

    page.click("[data-tab='rolling-summary']")
    assert editor_text(page, "rolling-summary") == "Talked about tea."
    replace_editor_text(page, "rolling-summary", "Talked about tea and a new dog.")
    page.click("[data-save='rolling-summary']")
    page.locator("#toasts .toast.msg-success", has_text="Rolling summary saved.").wait_for()
    assert CoreMemory.objects.get(owner=alice, agent="").rolling_summary == "Talked about tea and a new dog."

    page.click("[data-tab='scratchpad']")
    assert page.input_value("#pad-focus") == "Garden"
    page.fill("#pad-focus", "Passport renewal")
    page.fill("#pad-projects", "beds\npassport\n")
    page.click("[data-save='scratchpad']")
    page.locator("#toasts .toast.msg-success", has_text="Scratchpad saved.").wait_for()
    pad = Scratchpad.objects.get(owner=alice, agent="")
    assert (pad.current_focus, pad.active_projects) == ("Passport renewal", ["beds", "passport"])
    screenshot(page, "core-scratchpad")
    context.close()
    watch.check()
