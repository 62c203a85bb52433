"""Issue 12, finding 4: every import payload the API would refuse is a 400 naming its line, and
nothing of the file is stored (the good entries before it included)."""

import json

import pytest

from memories.models import CoreMemory, DailyDigest, Memory, MemoryEvent

pytestmark = pytest.mark.django_db

GOOD = {"content": "User prefers green tea", "category": "preference"}


def jsonl(*items) -> str:
    # ensure_ascii keeps a lone surrogate as its \\ud800 escape: only the import's parser decodes it
    return "".join(json.dumps(item) + "\n" for item in items)


def memory_json(*items, rolling_summary="") -> str:
    memories = [{"id": f"m{n}", "category": "facts", **item} for n, item in enumerate(items)]
    return json.dumps({"version": 2, "rolling_summary": rolling_summary, "memories": memories}, indent=2)


LONG = "x" * 40_000
PAYLOADS = {
    "observed_at in year 0 (UTC)": (
        "jsonl",
        jsonl(GOOD, {**GOOD, "content": "b", "observed_at": "0001-01-01T00:00:00+14:00"}),
    ),
    "created_at in year 10000 (UTC)": (
        "jsonl",
        jsonl(GOOD, {"content": "b", "created_at": "9999-12-31T23:59:59-14:00"}),
    ),
    "last_reinforced_at in year 0": (
        "jsonl",
        jsonl(GOOD, {"content": "b", "last_reinforced_at": "0001-01-01T00:00:00+14:00"}),
    ),
    "updated_at in year 10000 (UTC)": (
        "jsonl",
        jsonl(GOOD, {"content": "b", "updated_at": "9999-12-31T23:59:59-14:00"}),
    ),
    "updated_at in year 0 (UTC)": ("jsonl", jsonl(GOOD, {"content": "b", "updated_at": "0001-01-01T00:00:00+14:00"})),
    "expires_at in year 10000": ("jsonl", jsonl(GOOD, {"content": "b", "expires_at": "9999-12-31T23:00:00-14:00"})),
    "lone surrogate in content": ("jsonl", jsonl(GOOD, {"content": "bad \ud800 text"})),
    "NUL in structured_data": ("jsonl", jsonl(GOOD, {"content": "b", "structured_data": {"k": "a\x00b"}})),
    "lone surrogate in structured_data": ("jsonl", jsonl(GOOD, {"content": "b", "structured_data": {"\udfff": 1}})),
    "agent longer than 100": ("jsonl", jsonl(GOOD, {"content": "b", "agent": "a" * 101})),
    "content over 32,000 characters": ("jsonl", jsonl(GOOD, {"content": LONG})),
    "NUL in memory.json content": ("memory-json", memory_json(GOOD, {"content": "bad\x00content"})),
    "year 0 in memory.json created_at": (
        "memory-json",
        memory_json(GOOD, {"content": "b", "created_at": "0001-01-01T00:00:00+14:00"}),
    ),
    "NUL in the rolling summary": ("memory-json", memory_json(GOOD, rolling_summary="summary\x00")),
    "lone surrogate in the rolling summary": ("memory-json", memory_json(GOOD, rolling_summary="summary \ud800")),
}


def post(api, fmt: str, text: str, **extra):
    body = json.dumps({"format": fmt, "content": text, **extra})  # ASCII: surrogates stay escaped
    return api.post("/api/v1/import/", body, content_type="application/json")


@pytest.mark.parametrize("fmt,text", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_each_bad_payload_is_a_400_listing_its_line_and_nothing_is_stored(user, api, fmt, text):
    response = post(api, fmt, text)

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_entries"
    assert error["message"].startswith("Nothing was imported: ")
    problems = error["details"]["entries"]
    # the bad entry's line (the second entry), or none for the file's rolling summary
    lines = {p["line"] for p in problems}
    assert lines == ({None} if "rolling_summary" in error["message"] else {2 if fmt == "jsonl" else 10})
    assert error["details"]["count"] == len(problems) >= 1
    assert Memory.objects.count() == 0
    assert MemoryEvent.objects.count() == 0
    assert CoreMemory.objects.count() == 0


def test_the_problems_name_each_bad_line_and_field(user, api):
    text = (
        jsonl(
            GOOD,
            {"content": "b", "agent": "a" * 101},
            "not an object",
            {"content": "c", "observed_at": "0001-01-01T00:00:00+14:00", "importance": 7},
        )
        + "{broken\n"
    )

    response = post(api, "jsonl", text)

    assert response.status_code == 400
    entries = response.json()["error"]["details"]["entries"]
    assert sorted((e["line"], e["field"]) for e in entries) == [
        (2, "agent"),
        (3, ""),
        (4, ""),
        (5, ""),
    ]
    assert [e["message"] for e in entries if e["line"] == 4] == ["importance must be a number between 0 and 1"]
    assert Memory.objects.count() == 0


def test_a_daily_log_line_that_jsonb_cannot_hold_is_refused_before_its_digest_is_written(user, api):
    log = json.dumps({"date": "2026-02-21", "entries": [{"time": "10:00:00", "type": "event", "content": "x \ud800"}]})

    response = post(api, "daily-log", log, name="2026-02-21.json")

    assert response.status_code == 400, response.content
    assert response.json()["error"]["details"]["entries"][0]["line"] is not None
    assert DailyDigest.objects.count() == 0


def test_the_api_refuses_the_same_timestamps_and_text_itself(api):
    for body in (
        {"content": "x", "observed_at": "0001-01-01T00:00:00+14:00"},
        {"content": "x", "expires_at": "9999-12-31T23:59:59-14:00"},
    ):
        response = api.post("/api/v1/memories/", body, format="json")
        assert response.status_code == 400, response.content
        assert "out of range" in response.json()["error"]["message"]
    response = api.post("/api/v1/memories/", '{"content": "bad \\ud800"}', content_type="application/json")
    assert response.status_code == 400
    assert Memory.objects.count() == 0


def test_a_good_file_still_imports(user, api):
    response = post(api, "jsonl", jsonl(GOOD, {"content": "User lives in Lisbon", "agent": "a" * 100}))

    assert response.status_code == 200, response.content
    assert response.json()["added"] == 2


@pytest.mark.parametrize("when", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"])
def test_a_restore_with_an_updated_at_out_of_range_is_refused_and_stores_nothing(user, api, when):
    # Given an export line whose updated_at PostgreSQL cannot hold once in UTC
    line = {"id": "4eacb944-2b4c-4e8e-9c55-1c0d3c1a0f11", "content": "poison", "category": "fact", "status": "active"}

    # When it is restored
    response = post(api, "jsonl", jsonl({**line, "updated_at": when}), mode="restore")

    # Then it is a 400 naming the line and field, and the memory list still reads
    assert response.status_code == 400, response.content
    assert [(e["line"], e["field"]) for e in response.json()["error"]["details"]["entries"]] == [(1, "updated_at")]
    assert Memory.objects.count() == 0
    assert api.get("/api/v1/memories/").status_code == 200
