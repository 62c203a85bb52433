"""Issue 11 through the entry points: POST /api/v1/import/ (in its request and as a background job) and
`manage.py import`: importing again changes nothing, a JSONL export is restored row for row."""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from memories.models import Memory, MemoryEvent
from memories.services.import_jobs import import_job_drain
from memories.services.transfer import memory_export
from tests.conftest import client_for
from tests.factories import MemoryFactory, UserFactory
from tests.memories.services.transfer.conftest import seed_text
from tests.memories.services.transfer.test_idempotent_import import CODE_STYLE, VUE, rows
from tests.memories.services.transfer.test_restore import fill
from tests.memories.services.transfer.test_restore import rows as exact_rows
from tests.support import assert_error

COUNTS = ("added", "merged", "reinforced", "superseded", "unchanged", "skipped")


def _counts(report: dict) -> tuple:
    return tuple(report[name] for name in COUNTS)


@pytest.mark.django_db
def test_posting_the_same_memory_md_twice_changes_nothing(api, user, seed_memory_md):
    # given MEMORY.md uploaded once
    upload = SimpleUploadedFile("MEMORY.md", seed_memory_md.encode(), content_type="text/markdown")
    assert api.post("/api/v1/import/", {"file": upload}, format="multipart").status_code == 200
    before, events = rows(user), MemoryEvent.objects.filter(owner=user).count()

    # when the same file is posted again
    response = api.post("/api/v1/import/", {"content": seed_memory_md, "name": "MEMORY.md"}, format="json")

    # then all four entries are reported unchanged and no memory or history row changed
    assert response.status_code == 200, response.content
    assert response.json()["mode"] == "merge"
    assert _counts(response.json()) == (0, 0, 0, 0, 4, 0)
    assert rows(user) == before
    assert MemoryEvent.objects.filter(owner=user).count() == events
    style = Memory.objects.get(owner=user, content=CODE_STYLE)
    assert (style.strength, style.hit_count) == (0.92, 12)
    assert Memory.objects.get(owner=user, content=VUE).status == "archived"


@pytest.mark.django_db
def test_an_export_posted_back_is_restored_then_left_alone(api, user):
    # given alice's JSONL export, after every memory of hers was deleted
    fill(user, servers=40)
    before = exact_rows(user, with_ids=True)
    exported = api.get("/api/v1/export/?format=jsonl").content.decode()
    Memory.objects.filter(owner=user).delete()

    # when she posts it back, twice
    first = api.post("/api/v1/import/", {"content": exported, "name": "memories.jsonl"}, format="json")
    second = api.post("/api/v1/import/", {"content": exported, "name": "memories.jsonl"}, format="json")

    # then the first restores the 50 rows as they were (ids included), the second changes nothing
    assert first.status_code == second.status_code == 200
    assert (first.json()["mode"], _counts(first.json())) == ("restore", (50, 0, 0, 0, 0, 0))
    assert (second.json()["mode"], _counts(second.json())) == ("restore", (0, 0, 0, 0, 50, 0))
    assert exact_rows(user, with_ids=True) == before


@pytest.mark.django_db
def test_the_import_mode_is_chosen_by_the_client(api, user, seed_memory_md):
    # given an export holding one memory
    MemoryFactory(owner=user, content="Ana lives in Porto")
    exported = memory_export(owner=user, fmt="jsonl")

    # when it is posted in merge mode, it is merged (its text is already held: nothing changes)
    merged = api.post("/api/v1/import/", {"content": exported, "format": "jsonl", "mode": "merge"}, format="json")
    assert (merged.json()["mode"], _counts(merged.json())) == ("merge", (0, 0, 0, 0, 1, 0))

    # and a restore of anything but JSONL is refused with the reason, importing nothing
    refused = api.post("/api/v1/import/", {"content": seed_memory_md, "mode": "restore"}, format="json")
    assert_error(refused, 400, "invalid_format", "only a JSONL export can be restored")
    unknown = api.post("/api/v1/import/", {"content": exported, "mode": "overwrite"}, format="json")
    assert_error(unknown, 400, "invalid")
    assert Memory.objects.filter(owner=user).count() == 1


@pytest.mark.django_db(transaction=True)
def test_background_imports_are_idempotent_and_restore_row_for_row(settings):
    # given imports above the size answered in the request
    settings.MEMORY_IMPORT_SYNC_MAX_BYTES = 100
    owner, empty = UserFactory(username="hana"), UserFactory(username="ivan")
    api = client_for(owner)
    memory_md = seed_text("002_MEMORY.md")

    # when the same MEMORY.md runs as two jobs, one after the other
    first = api.post("/api/v1/import/", {"content": memory_md, "name": "MEMORY.md"}, format="json")
    assert first.status_code == 202, first.content
    import_job_drain()
    before = rows(owner)
    second = api.post("/api/v1/import/", {"content": memory_md, "name": "MEMORY.md"}, format="json").json()
    import_job_drain()

    # then the second job's report says nothing changed, and nothing did
    done = api.get(second["url"]).json()
    assert (done["status"], done["mode"], done["report"]["mode"]) == ("done", "", "merge")
    assert _counts(done["report"]) == (0, 0, 0, 0, 4, 0)
    assert rows(owner) == before

    # and when her export is restored for another owner as a job, twice, it arrives row for row, once
    fill(owner, servers=30)
    exported = memory_export(owner=owner, fmt="jsonl")
    restorer = client_for(empty)
    jobs = [
        restorer.post("/api/v1/import/", {"content": exported, "format": "jsonl", "mode": "restore"}, format="json")
        for _ in range(2)
    ]
    import_job_drain()
    reports = [restorer.get(job.json()["url"]).json()["report"] for job in jobs]
    assert [(r["mode"], r["added"], r["unchanged"]) for r in reports] == [("restore", 44, 0), ("restore", 0, 44)]
    assert exact_rows(empty) == exact_rows(owner)


@pytest.mark.django_db
def test_the_cli_imports_the_same_file_twice_without_changing_anything(user, tmp_path, seed_memory_md):
    # given MEMORY.md imported with `manage.py import`
    path = tmp_path / "MEMORY.md"
    path.write_text(seed_memory_md, encoding="utf-8")
    call_command("import", str(path), "--owner", "alice", stdout=io.StringIO(), stderr=io.StringIO())
    before = rows(user)

    # when the same file is imported again
    out = io.StringIO()
    call_command("import", str(path), "--owner", "alice", stdout=out, stderr=io.StringIO())

    # then it says so, and nothing changed
    assert "MEMORY.md (memory-md): 4 entries: 0 added, 0 merged, 0 reinforced, 0 superseding, 4 unchanged" in (
        out.getvalue()
    )
    assert rows(user) == before
