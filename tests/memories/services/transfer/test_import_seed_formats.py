"""Importing the seed formats: seed 002's MEMORY.md, seed 004's memory.json and daily logs, USER.md."""

from datetime import UTC, date, datetime

import pytest

from memories.formats.categories import category_from_seed
from memories.formats.memory_json import FormatError
from memories.models import CoreMemory, DailyDigest, Memory, MemoryEvent
from memories.services.import_validation import ImportInvalid
from memories.services.transfer import memory_import, memory_import_text

pytestmark = pytest.mark.django_db

ACTOR = "cli:import"


def by_content(owner) -> dict[str, Memory]:
    return {m.content: m for m in Memory.objects.filter(owner=owner)}


def test_seed_002_memory_md_imports_its_four_entries_with_scores_dates_and_hits(user, seed_memory_md):
    # when seed 002's example MEMORY.md is imported
    report = memory_import(owner=user, path_or_text=seed_memory_md, actor=ACTOR)

    # then its four entries are four memories with the file's category, score, last activation and hits
    assert (report.format, report.entries, report.added, report.skipped) == ("memory-md", 4, 4, 0)
    memories = by_content(user)
    expected = {
        "用户喜欢简洁的代码风格，不喜欢过多注释": ("preference", 0.92, date(2026, 2, 20), 12, "active"),
        "用户的主要开发语言是 Python，常用 FastAPI 框架": ("fact", 0.88, date(2026, 2, 19), 8, "active"),
        "用户每天早上 9 点查看 A 股行情，关注新能源板块": ("workflow", 0.85, date(2026, 2, 20), 15, "active"),
        "用户曾尝试用 Vue 写前端，但后来放弃了": ("fact", 0.18, date(2026, 1, 10), 2, "archived"),
    }
    assert set(memories) == set(expected)
    for content, (category, score, day, hits, status) in expected.items():
        memory = memories[content]
        midnight = datetime.combine(day, datetime.min.time(), tzinfo=UTC)
        assert (memory.category, memory.status, memory.hit_count) == (category, status, hits)
        assert memory.strength == pytest.approx(score) and memory.importance == pytest.approx(score)
        assert memory.base_strength == pytest.approx(score)
        assert memory.last_reinforced_at == midnight and memory.observed_at == midnight
        assert memory.source == "import"
        # seed 002 memories fade by decay, never by an expiry computed from their old date
        assert memory.expires_at is None
    # and the header's stale count is reported, with its line
    assert [(w.line, w.message) for w in report.warnings] == [(4, "header says 15 entries, 4 parsed")]


def test_every_imported_memory_says_in_its_history_where_it_came_from(user, seed_memory_md):
    # when MEMORY.md is imported
    memory_import_text(owner=user, text=seed_memory_md, name="MEMORY.md", actor=ACTOR)

    # then each memory's history is the merge decision's add, then the import with the file's values
    for memory in Memory.objects.filter(owner=user):
        events = list(MemoryEvent.objects.filter(memory=memory).order_by("created_at", "id"))
        assert [e.event_type for e in events] == ["add", "import"]
        assert {e.actor for e in events} == {ACTOR}
        assert events[1].reason.startswith("imported from MEMORY.md (memory-md), entry [")
        assert events[1].after["strength"] == pytest.approx(memory.strength)


def test_broken_memory_md_entries_refuse_the_file_with_their_line_numbers(user):
    # given a MEMORY.md with a heading missing a field and a score out of range between good entries
    text = "\n".join(
        [
            "# Agent Memory",
            "",
            "## Active Memories",
            "",
            "### [aaa111] preference | 0.70 | 2026-03-01 | 1",
            "The user likes tea",
            "",
            "### [bbb222] fact | 0.50 | 2026-03-01",
            "Broken: three fields",
            "",
            "### [ccc333] fact | 1.70 | 2026-03-01 | 0",
            "Broken: score out of range",
            "",
            "### [ddd444] experience | 0.60 | 2026-03-02 | 3",
            "Restart nginx after changing its config",
        ]
    )

    # when it is imported
    with pytest.raises(ImportInvalid) as refused:
        memory_import_text(owner=user, text=text, name="MEMORY.md", actor=ACTOR)

    # then the broken entries are reported by line and nothing is imported, the good entries included
    assert [p.line for p in refused.value.problems] == [8, 11]
    assert "expected 4 fields" in refused.value.problems[0].message
    assert "outside [0, 1]" in refused.value.problems[1].message
    assert Memory.objects.filter(owner=user).count() == 0


def test_seed_004_memory_json_imports_with_mapped_categories_salience_and_timestamps(user, seed_memory_json):
    # when seed 004's example memory.json is imported
    report = memory_import_text(owner=user, text=seed_memory_json, name="memory.json", actor=ACTOR)

    # then both memories are there: the preference, and the tool failure as an error lesson
    assert (report.format, report.entries, report.added, report.skipped, report.warnings) == (
        "memory-json",
        2,
        2,
        0,
        [],
    )
    memories = by_content(user)
    airline = memories["用户偏好东方航空，尤其是早班机"]
    fetch = memories["fetch_url 工具对动态渲染网页（如 React/Vue SPA）无效，需提示用户使用浏览器插件获取内容"]
    assert (airline.category, fetch.category) == ("preference", "error")
    assert (airline.importance, fetch.importance) == (pytest.approx(0.85), pytest.approx(0.9))
    # salience is the importance, so the strength starts there (seed 002 §3.4)
    assert (airline.strength, fetch.strength) == (pytest.approx(0.85), pytest.approx(0.9))
    assert airline.created_at == datetime(2026, 2, 21, 10, 30, tzinfo=UTC)
    assert airline.observed_at == datetime(2026, 2, 21, 10, 30, tzinfo=UTC)
    assert airline.last_accessed_at == datetime(2026, 2, 21, 14, 0, tzinfo=UTC)
    assert fetch.created_at == datetime(2026, 2, 20, 15, 20, tzinfo=UTC)
    assert (airline.access_count, fetch.access_count) == (3, 5)
    assert fetch.structured_data == {
        "tool": "fetch_url",
        "error_type": "dynamic_content",
        "learned_from": "session_abc123",
    }
    # and its rolling summary is the owner's
    assert report.rolling_summary is True
    assert CoreMemory.objects.get(owner=user, agent="").rolling_summary.startswith("用户是一名 Python 开发者")
    reasons = set(MemoryEvent.objects.filter(memory=airline, event_type="import").values_list("reason", flat=True))
    assert reasons == {"imported from memory.json (memory-json), id a1b2c3d4, source user_explicit"}


@pytest.mark.parametrize(
    ("name", "content", "context", "expected"),
    [
        ("preferences", "", None, "preference"),
        ("facts", "", None, "fact"),
        ("tasks", "", None, "todo"),
        ("reflections", "", None, "skill"),
        ("general", "", None, "fact"),
        ("procedural", "Windows 脚本需要用 .bat 运行", None, "skill"),
        ("procedural", "fetch_url 对动态网页无效", None, "error"),
        ("procedural", "Use the staging database for migrations", {"error": "timeout"}, "error"),
        ("experience", "", None, "skill"),
        ("skill_usage", "", None, "workflow"),
        ("pattern", "", None, "workflow"),
        ("knowledge", "", None, "fact"),
        ("RULE", "", None, "rule"),
        ("nonsense", "", None, None),
    ],
)
def test_seed_category_names_map_as_design_section_3_says(name, content, context, expected):
    assert category_from_seed(name, content=content, context=context) == expected


def test_memory_json_of_every_seed_004_category(user):
    # given one memory of each of seed 004's six categories
    text = """{"version": 2, "memories": [
      {"id": "1", "category": "preferences", "content": "Likes window seats", "salience": 0.7},
      {"id": "2", "category": "facts", "content": "The API lives at api.example.com", "salience": 0.6},
      {"id": "3", "category": "tasks", "content": "Prepare the demo for Wednesday", "salience": 0.8},
      {"id": "4", "category": "reflections", "content": "Short answers work better in the morning"},
      {"id": "5", "category": "procedural", "content": "terminal scripts fail with bash syntax on Windows"},
      {"id": "6", "category": "general", "content": "Has a cat named Miso"}
    ]}"""

    # when it is imported
    report = memory_import_text(owner=user, text=text, name="memory.json", actor=ACTOR)

    # then each maps to our category, salience to importance
    assert {m.content: (m.category, m.importance) for m in Memory.objects.filter(owner=user)} == {
        "Likes window seats": ("preference", pytest.approx(0.7)),
        "The API lives at api.example.com": ("fact", pytest.approx(0.6)),
        "Prepare the demo for Wednesday": ("todo", pytest.approx(0.8)),
        "Short answers work better in the morning": ("skill", pytest.approx(0.6)),
        "terminal scripts fail with bash syntax on Windows": ("error", pytest.approx(0.6)),
        "Has a cat named Miso": ("fact", pytest.approx(0.6)),
    }
    assert (report.added, report.skipped, report.warnings) == (6, 0, [])


def test_a_memory_json_entry_without_content_refuses_the_file_by_its_line(user):
    text = """{"version": 2, "memories": [
      {"id": "1", "category": "facts", "content": "Has a cat named Miso"},
      {"id": "2", "category": "facts", "salience": 0.4}
    ]}"""

    with pytest.raises(ImportInvalid) as refused:
        memory_import_text(owner=user, text=text, name="memory.json", actor=ACTOR)

    assert [(p.line, p.message) for p in refused.value.problems] == [(3, "memory #2 skipped: no content")]
    assert Memory.objects.filter(owner=user).count() == 0


def test_seed_004_daily_log_fills_the_digest_and_writes_its_noteworthy_lines(user, seed_daily_log):
    # when seed 004's example log is imported
    report = memory_import_text(owner=user, text=seed_daily_log, name="logs/2026-02-21.json", actor=ACTOR)

    # then the day's digest holds its three lines
    digest = DailyDigest.objects.get(owner=user, day=date(2026, 2, 21))
    assert [(e["time"], e["type"], e["content"]) for e in digest.entries] == [
        ("14:30:00", "log.event", "完成了项目 API 文档编写"),
        ("15:45:00", "log.auto_extract", "用户喜欢在下午3点开会"),
        ("16:20:00", "log.reflection", "fetch_url 对 https://example.com 失败，该站点是 React SPA"),
    ]
    assert {e["source"] for e in digest.entries} == {"import:logs/2026-02-21.json"}
    # and the extracted preference and the tool failure are memories, observed at their time of day
    memories = by_content(user)
    assert {c: m.category for c, m in memories.items()} == {
        "用户喜欢在下午3点开会": "preference",
        "fetch_url 对 https://example.com 失败，该站点是 React SPA": "error",
    }
    assert memories["用户喜欢在下午3点开会"].observed_at == datetime(2026, 2, 21, 15, 45, tzinfo=UTC)
    assert (report.entries, report.added, report.digests) == (3, 2, 1)


def test_v1_markdown_daily_log_lines_are_kept_and_statements_become_memories(user):
    # given a v1 log: an event, a tagged fact and an untagged third-person preference
    text = (
        "# 2026-02-20\n\n- 09:10 Reviewed the pull requests\n- 10:00 [facts] The office moved to Hamburg\n"
        "- 11:30 The user prefers green tea in the afternoon\n"
    )

    # when it is imported (the day comes from its heading)
    memory_import_text(owner=user, text=text, fmt="daily-log", actor=ACTOR)

    # then all three lines are in the digest and the two statements are memories
    digest = DailyDigest.objects.get(owner=user, day=date(2026, 2, 20))
    assert [e["content"] for e in digest.entries] == [
        "Reviewed the pull requests",
        "The office moved to Hamburg",
        "The user prefers green tea in the afternoon",
    ]
    assert {m.category for m in Memory.objects.filter(owner=user)} == {"fact", "preference"}
    assert Memory.objects.get(owner=user, category="fact").content == "The office moved to Hamburg"


def test_a_daily_log_without_a_day_is_refused_whole(user):
    with pytest.raises(FormatError, match="needs its day"):
        memory_import_text(owner=user, text="- something happened\n", fmt="daily-log", actor=ACTOR)
    assert not Memory.objects.filter(owner=user).exists()


def test_user_md_profile_lines_become_preferences_and_facts(user):
    # given a hand-written USER.md with Chinese and English sections and a top-level bullet
    text = (
        "# 用户档案\n\n- 姓名: 张三\n\n## 偏好\n\n- 喜欢用中文交流\n- Prefers dark mode\n\n## Facts\n\n"
        "- Works at Example GmbH\n1. Lives in Berlin\n"
    )

    # when it is imported
    report = memory_import_text(owner=user, text=text, name="USER.md", actor=ACTOR)

    # then every profile line is a memory: the preference section's as preferences, the rest as facts
    assert {m.content: m.category for m in Memory.objects.filter(owner=user)} == {
        "姓名: 张三": "fact",
        "喜欢用中文交流": "preference",
        "Prefers dark mode": "preference",
        "Works at Example GmbH": "fact",
        "Lives in Berlin": "fact",
    }
    assert (report.format, report.added) == ("user-md", 5)


def test_importing_the_same_file_twice_neither_duplicates_nor_reinforces(user, seed_memory_json):
    # given memory.json imported once
    memory_import_text(owner=user, text=seed_memory_json, name="memory.json", actor=ACTOR)

    # when it is imported again
    report = memory_import_text(owner=user, text=seed_memory_json, name="memory.json", actor=ACTOR)

    # then nothing new is added and nothing is reinforced (issue 11: re-importing changes nothing)
    assert Memory.objects.filter(owner=user).count() == 2
    assert (report.added, report.reinforced, report.unchanged) == (0, 0, 2)


def test_unknown_content_is_refused_with_a_clear_reason(user):
    with pytest.raises(FormatError, match="cannot tell the format"):
        memory_import_text(owner=user, text="just some words", actor=ACTOR)
