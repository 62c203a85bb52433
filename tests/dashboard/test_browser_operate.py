"""The overview's "Run lifecycle now" and the import page's export download, in Chromium."""

import pytest

from memories.drafts import MemoryDraft
from memories.models import LifecycleRun
from memories.services.memories import memory_create
from memories.services.transfer import memory_export
from tests.dashboard.browser import VIEWPORT, Watch, log_in, person, wait_ready
from tests.dashboard.conftest import PASSWORD
from tests.dashboard.scenes import XSS

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_run_lifecycle_now_and_download_an_export(server, browser):
    base = server.base
    alice = person("alice")
    memory_create(owner=alice, draft=MemoryDraft(content="Likes green tea", category="preference"), actor="test")
    memory_create(owner=alice, draft=MemoryDraft(content=XSS), actor="test")
    watch = Watch(base)
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    page = watch.attach(context.new_page())
    log_in(page, base, "alice", PASSWORD)

    assert page.inner_text("[data-metric='last_lifecycle_run.status']") == "never"
    page.click("#lifecycle-run")
    page.wait_for_selector(".toast", state="visible")
    run = LifecycleRun.objects.get(owner=alice)
    assert (run.trigger, run.status) == ("dashboard", "completed")
    assert page.inner_text(".toast").startswith("Lifecycle run completed")
    status = "document.querySelector(\"[data-metric='last_lifecycle_run.status']\").textContent"
    page.wait_for_function(f"{status} === 'completed'")

    page.goto(f"{base}/import/")
    wait_ready(page)
    with page.expect_download() as download:
        page.click("#export-download")
    assert download.value.suggested_filename == "memories.jsonl"
    assert open(download.value.path(), encoding="utf-8").read() == memory_export(owner=alice, fmt="jsonl")
    context.close()
    watch.check()
