"""The import page in Chromium: a file becomes a background import job whose progress bar reaches
100%, and a file with a bad entry lists its line and imports nothing."""

import hashlib
import json

import pytest

from memories.models import ImportJob, Memory
from tests.dashboard.browser import VIEWPORT, Watch, log_in, person, wait_ready
from tests.dashboard.conftest import PASSWORD

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def jsonl(n: int) -> bytes:
    lines = (json.dumps({"content": f"Code {hashlib.sha256(str(i).encode()).hexdigest()[:24]}"}) for i in range(n))
    return "".join(line + "\n" for line in lines).encode()


def test_an_import_shows_its_progress_and_its_refused_lines(server, browser):
    base = server.base
    alice = person("alice")
    watch = Watch(base)
    context = browser.new_context(viewport=VIEWPORT)
    page = watch.attach(context.new_page())
    log_in(page, base, "alice", PASSWORD)
    page.goto(f"{base}/import/")
    wait_ready(page)

    # a good file: the job runs in the background and the bar fills
    page.set_input_files(
        "#import-form input[type=file]",
        {"name": "memories.jsonl", "mimeType": "application/x-ndjson", "buffer": jsonl(30)},
    )
    page.click("#import-form button[type=submit]")
    page.wait_for_selector("#import-job:not([hidden]) [data-role='status']:text-is('done')", timeout=60_000)
    assert page.get_attribute("#import-progress", "value") == "100"
    assert page.inner_text("#import-job [data-role='count']") == "30 of 30 entries (100%)"
    assert page.inner_text("#import-job [data-role='outcome']") == (
        "merge: 30 added, 0 merged, 0 reinforced, 0 superseding, 0 unchanged"
    )
    assert Memory.objects.filter(owner=alice).count() == 30

    # the same file again: nothing changes, and the page says so
    page.click("#import-form button[type=submit]")
    page.wait_for_selector("#import-job [data-role='outcome']:text-is('merge: 0 added, 0 merged, 0 reinforced, "
                           "0 superseding, 30 unchanged')", timeout=60_000)  # fmt: skip
    assert Memory.objects.filter(owner=alice).count() == 30

    # a file with a bad line: refused, its line listed, nothing imported
    bad = b'{"content": "fine"}\n{"content": "bad", "observed_at": "0001-01-01T00:00:00+14:00"}\n'
    page.set_input_files(
        "#import-form input[type=file]", {"name": "bad.jsonl", "mimeType": "application/x-ndjson", "buffer": bad}
    )
    page.click("#import-form button[type=submit]")
    page.wait_for_selector("#import-job [data-role='status']:text-is('failed')", timeout=60_000)
    assert page.inner_text("#import-problems").startswith("line 2: observed_at: ")
    assert Memory.objects.filter(owner=alice).count() == 30
    assert not page.is_visible("#import-job [data-role='outcome']")
    assert list(ImportJob.objects.filter(owner=alice).order_by("created_at").values_list("status", flat=True)) == [
        "done",
        "done",
        "failed",
    ]
    context.close()
    watch.check()
