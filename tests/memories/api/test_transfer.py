"""POST /api/v1/import/, GET /api/v1/export/ and seed 004 §7's endpoints under /api/v1/memory/."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from memories.drafts import MemoryDraft
from memories.models import CoreMemory, Memory
from memories.services.decisions import memory_write
from tests.support import assert_error

pytestmark = pytest.mark.django_db


def test_multipart_upload_of_memory_md_returns_the_report(api, user, seed_memory_md):
    upload = SimpleUploadedFile("MEMORY.md", seed_memory_md.encode(), content_type="text/markdown")

    response = api.post("/api/v1/import/", {"file": upload}, format="multipart")

    assert response.status_code == 200, response.content
    report = response.json()
    assert (report["format"], report["source"], report["added"], report["skipped"]) == ("memory-md", "MEMORY.md", 4, 0)
    assert report["warnings"] == [{"file": "MEMORY.md", "line": 4, "message": "header says 15 entries, 4 parsed"}]
    assert Memory.objects.filter(owner=user, source="import").count() == 4
    assert set(report["memory_ids"]) == {
        str(pk) for pk in Memory.objects.filter(owner=user).values_list("pk", flat=True)
    }


def test_json_body_import_with_an_explicit_format(api, user, seed_memory_json):
    response = api.post("/api/v1/import/", {"format": "memory-json", "content": seed_memory_json}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["added"] == 2 and response.json()["rolling_summary"] is True
    assert CoreMemory.objects.get(owner=user).rolling_summary.startswith("用户是一名")


@pytest.mark.parametrize(
    ("body", "status", "code", "fragment"),
    [
        ({"content": "just words"}, 400, "invalid_format", "cannot tell the format"),
        ({"format": "memory-json", "content": "{broken"}, 400, "invalid_format", "not valid JSON"),
        ({"format": "nope", "content": "x"}, 400, "invalid", "format"),
        ({"content": "x", "unknown": 1}, 400, "invalid", "unknown"),
        ({"content": "bad\x00byte", "format": "jsonl"}, 400, "invalid", "NUL"),
    ],
)
def test_bad_imports_are_4xx_with_a_reason_and_change_nothing(api, user, body, status, code, fragment):
    response = api.post("/api/v1/import/", body, format="json")
    assert_error(response, status, code)
    assert fragment.lower() in response.json()["error"]["message"].lower()
    assert not Memory.objects.filter(owner=user).exists()


def test_an_oversized_upload_is_413(api, settings):
    settings.MEMORY_IMPORT_MAX_BYTES = 100
    upload = SimpleUploadedFile("MEMORY.md", b"# Agent Memory\n" + b"x" * 200)
    response = api.post("/api/v1/import/", {"file": upload}, format="multipart")
    assert_error(response, 413, "too_large")


def test_export_downloads_each_format_as_an_attachment_of_the_owner_only(api, other_api, user, other_user):
    memory_write(owner=user, draft=MemoryDraft(content="User prefers oolong tea", category="preference"), actor="t")
    memory_write(owner=other_user, draft=MemoryDraft(content="Bob collects stamps", category="fact"), actor="t")
    expected = {
        "memory-md": ("MEMORY.md", "text/markdown"),
        "learnings-md": ("learnings.md", "text/markdown"),
        "memory-json": ("memory.json", "application/json"),
        "user-md": ("USER.md", "text/markdown"),
        "jsonl": ("memories.jsonl", "application/x-ndjson"),
    }
    for fmt, (name, content_type) in expected.items():
        response = api.get(f"/api/v1/export/?format={fmt}")
        assert response.status_code == 200, (fmt, response.content)
        assert response["Content-Disposition"] == f'attachment; filename="{name}"'
        assert response["Content-Type"].startswith(content_type)
        text = response.content.decode()
        assert "stamps" not in text
        if fmt != "learnings-md":
            assert "oolong" in text
    assert json.loads(api.get("/api/v1/export/").content.decode().splitlines()[0])["content"] == (
        "User prefers oolong tea"
    )
    assert_error(api.get("/api/v1/export/?format=pdf"), 400, "invalid")


def test_export_then_import_through_the_api_into_another_owner(api, other_api, user, other_user):
    memory_write(
        owner=user,
        draft=MemoryDraft(content="User prefers oolong tea", category="preference", importance=0.9),
        actor="t",
    )
    text = api.get("/api/v1/export/?format=jsonl").content.decode()

    response = other_api.post("/api/v1/import/", {"content": text, "name": "memories.jsonl"}, format="json")

    assert response.json()["added"] == 1
    theirs = Memory.objects.get(owner=other_user)
    assert (theirs.content, theirs.category, theirs.importance) == ("User prefers oolong tea", "preference", 0.9)


# --- seed 004 §7 ---------------------------------------------------------------------------------


def test_entries_get_and_post_speak_salience_and_seed_categories(api, user):
    response = api.post(
        "/api/v1/memory/entries",
        {"content": "喜欢靠窗的座位", "category": "preferences", "salience": 0.85},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["action"] == "ADD"
    entry = response.json()["entry"]
    assert (entry["category"], entry["x_category"], entry["salience"]) == ("preferences", "preference", 0.85)

    again = api.post("/api/v1/memory/entries/", {"content": "喜欢靠窗的座位", "category": "preferences"}, format="json")
    assert again.status_code == 200 and again.json()["action"] == "NOOP"

    listing = api.get("/api/v1/memory/entries?category=preferences").json()
    assert listing["version"] == 2
    assert [(m["content"], m["salience"], m["access_count"]) for m in listing["memories"]] == [
        ("喜欢靠窗的座位", 0.85, 0)
    ]
    assert_error(
        api.post("/api/v1/memory/entries", {"content": "x", "category": "bogus"}, format="json"), 400, "invalid"
    )


def test_search_with_category_and_use_decay(api, user):
    memory_write(
        owner=user, draft=MemoryDraft(content="fetch_url fails on single-page apps", category="error"), actor="t"
    )
    memory_write(
        owner=user,
        draft=MemoryDraft(content="User prefers fetch of news in the morning", category="preference"),
        actor="t",
    )

    procedural = api.post("/api/v1/memory/search", {"query": "fetch", "category": "procedural"}, format="json").json()
    assert [r["content"] for r in procedural["results"]] == ["fetch_url fails on single-page apps"]
    assert procedural["results"][0]["category"] == "procedural"

    plain = api.post("/api/v1/memory/search", {"query": "fetch", "use_decay": False, "top_k": 5}, format="json").json()
    assert len(plain["results"]) == 2
    for result in plain["results"]:
        scores = result["scores"]
        assert result["score"] == pytest.approx(0.6 * scores["relevance"] + 0.25 * scores["importance"], abs=1e-6)
    assert_error(api.post("/api/v1/memory/search", {"query": "x", "category": "bogus"}, format="json"), 400, "invalid")


def test_procedural_lists_skills_errors_and_rules(api, other_api, user):
    memory_write(owner=user, draft=MemoryDraft(content="Never deploy on Fridays", category="rule"), actor="t")
    memory_write(owner=user, draft=MemoryDraft(content="User prefers green tea", category="preference"), actor="t")

    body = api.get("/api/v1/memory/procedural").json()

    assert [(m["content"], m["x_category"]) for m in body["memories"]] == [("Never deploy on Fridays", "rule")]
    assert other_api.get("/api/v1/memory/procedural").json() == {"memories": []}


def test_rolling_summary_get_and_put(api, other_api, user):
    assert api.get("/api/v1/memory/rolling-summary").json()["rolling_summary"] == ""

    response = api.put(
        "/api/v1/memory/rolling-summary", {"rolling_summary": "A Python developer in Berlin."}, format="json"
    )

    assert response.status_code == 200
    assert api.get("/api/v1/memory/rolling-summary/").json()["rolling_summary"] == "A Python developer in Berlin."
    assert other_api.get("/api/v1/memory/rolling-summary").json()["rolling_summary"] == ""
    assert_error(api.put("/api/v1/memory/rolling-summary", {"summary": "x"}, format="json"), 400, "invalid")


@pytest.mark.parametrize(
    ("path", "step"), [("/api/v1/memory/consolidate", "dedup"), ("/api/v1/memory/archive", "digests")]
)
def test_consolidate_and_archive_run_the_lifecycle(api, user, path, step):
    response = api.post(path)

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["step"]) == ("completed", step)
    assert body["run"]["trigger"] == "api"


def test_the_compat_endpoints_need_a_key(client):
    for method, path in [
        ("get", "/api/v1/memory/entries"),
        ("post", "/api/v1/memory/search"),
        ("get", "/api/v1/memory-md/"),
    ]:
        assert getattr(client, method)(path).status_code in (401, 403)


HUGE = "9" * 5000


@pytest.mark.parametrize(
    "fmt,text",
    [
        ("memory-json", '{"version": 2, "memories": [{"content": "x", "salience": ' + HUGE + "}]}"),
        ("daily-log", '{"date": "2026-02-21", "entries": [{"time": "10:00:00", "content": "x", "n": ' + HUGE + "}]}"),
    ],
    ids=["memory-json", "daily-log"],
)
def test_a_file_with_an_integer_python_will_not_parse_is_a_400_and_nothing_is_stored(api, user, fmt, text):
    # Given a file holding an integer of 5,000 digits (Python's JSON parser stops at 4,300)
    # When it is imported
    response = api.post(
        "/api/v1/import/",
        json.dumps({"format": fmt, "content": text, "name": "2026-02-21.json"}),
        content_type="application/json",
    )

    # Then it is refused with the parser's reason and nothing is stored
    assert response.status_code == 400, response.content
    assert "not valid JSON" in response.json()["error"]["message"]
    assert Memory.objects.count() == 0


def test_an_entry_whose_content_is_not_text_is_refused_by_its_own_field(api, user):
    for content in (5, ["a"], {"a": 1}, True):
        response = api.post("/api/v1/memory/entries", {"content": content, "category": "procedural"}, format="json")

        assert response.status_code == 400, response.content
        assert list(response.json()["error"]["details"]) == ["content"]
    assert Memory.objects.count() == 0
