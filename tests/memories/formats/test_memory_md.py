"""MEMORY.md store (seed 002 §2.3, §7.1): parse, tolerate, render, round-trip, back up."""

import logging
from datetime import date, datetime

import pytest

from memories.formats.memory_md import (
    MemoryMdEntry,
    file_write_with_backup,
    load_memory_md,
    parse_memory_md,
    parse_user_md,
    render_learnings_md,
    render_memory_md,
    render_user_md,
    split_sections,
)

SEED_EXAMPLE = """# Agent Memory

<!-- Last updated: 2026-02-20T10:30:00 -->
<!-- Total entries: 4 -->

## Active Memories

### [a1b2c3] preference | 0.92 | 2026-02-20 | 12
用户喜欢简洁的代码风格，不喜欢过多注释

### [d4e5f6] fact | 0.88 | 2026-02-19 | 8
用户的主要开发语言是 Python，常用 FastAPI 框架

### [g7h8i9] workflow | 0.85 | 2026-02-20 | 15
用户每天早上 9 点查看 A 股行情，关注新能源板块

## Archived Memories

### [x1y2z3] fact | 0.18 | 2026-01-10 | 2
用户曾尝试用 Vue 写前端，但后来放弃了
"""


def _entry(id, score, section="active", **kw):
    fields = dict(category="fact", last_activated=date(2026, 2, 20), hits=1, content=f"content {id}")
    fields.update(kw)
    return MemoryMdEntry(id=id, score=score, section=section, **fields)


def test_parses_the_seed_example_with_every_field():
    # when the seed's example file is parsed
    result = parse_memory_md(SEED_EXAMPLE)

    # then every field of every entry is extracted, with its section
    assert result.warnings == []
    assert result.title == "Agent Memory"
    assert result.last_updated == datetime(2026, 2, 20, 10, 30)
    assert result.total_entries == 4
    d = date
    assert result.entries == [
        MemoryMdEntry("a1b2c3", "preference", 0.92, d(2026, 2, 20), 12, "用户喜欢简洁的代码风格，不喜欢过多注释"),
        MemoryMdEntry("d4e5f6", "fact", 0.88, d(2026, 2, 19), 8, "用户的主要开发语言是 Python，常用 FastAPI 框架"),
        MemoryMdEntry("g7h8i9", "workflow", 0.85, d(2026, 2, 20), 15, "用户每天早上 9 点查看 A 股行情，关注新能源板块"),
        MemoryMdEntry("x1y2z3", "fact", 0.18, d(2026, 1, 10), 2, "用户曾尝试用 Vue 写前端，但后来放弃了", "archived"),
    ]


@pytest.mark.parametrize("text", ["", "\n\n", "# Agent Memory\n"])
def test_an_empty_file_is_an_empty_list(text):
    result = parse_memory_md(text)
    assert (result.entries, result.warnings) == ([], [])


def test_a_missing_file_is_an_empty_list(tmp_path):
    result = load_memory_md(tmp_path / "nope" / "MEMORY.md")
    assert (result.entries, result.warnings) == ([], [])


def test_a_broken_entry_is_skipped_with_a_warning_and_the_rest_loads(caplog):
    # given the seed example with the second entry's score broken
    text = SEED_EXAMPLE.replace("fact | 0.88 |", "fact | high |")

    # when it is parsed
    with caplog.at_level(logging.WARNING, logger="memories.formats.memory_md"):
        result = parse_memory_md(text)

    # then the other three load, and the broken one is reported with its line number and logged
    assert [e.id for e in result.entries] == ["a1b2c3", "g7h8i9", "x1y2z3"]
    assert [(w.line, w.message) for w in result.warnings] == [
        (11, "entry [d4e5f6] skipped: invalid score 'high'"),
        (4, "header says 4 entries, 3 parsed"),
    ]
    assert "line 11: entry [d4e5f6] skipped: invalid score 'high'" in caplog.text


@pytest.mark.parametrize(
    ("heading", "message"),
    [
        ("### no brackets at all", "entry skipped: heading is not '### [id] category | score | YYYY-MM-DD | hits'"),
        (
            "### [k1] fact | 0.5 | 2026-02-20",
            "entry [k1] skipped: expected 4 fields 'category | score | YYYY-MM-DD | hits', found 3",
        ),
        ("### [k1] fact | 1.5 | 2026-02-20 | 1", "entry [k1] skipped: score '1.5' is outside [0, 1]"),
        ("### [k1] fact | nan | 2026-02-20 | 1", "entry [k1] skipped: score 'nan' is outside [0, 1]"),
        ("### [k1] fact | 0.5 | 2026-02-31 | 1", "entry [k1] skipped: invalid date '2026-02-31'"),
        ("### [k1] fact | 0.5 | 20/02/2026 | 1", "entry [k1] skipped: invalid date '20/02/2026' (expected YYYY-MM-DD)"),
        ("### [k1] fact | 0.5 | 2026-02-20 | -3", "entry [k1] skipped: invalid hit count '-3'"),
        ("### [k1] two words | 0.5 | 2026-02-20 | 1", "entry [k1] skipped: invalid category 'two words'"),
    ],
)
def test_each_kind_of_broken_heading_is_reported(heading, message):
    # given a broken entry between two good ones
    text = (
        "## Active Memories\n\n### [ok1] fact | 0.5 | 2026-02-20 | 1\nfine\n\n"
        f"{heading}\nbroken\n\n### [ok2] fact | 0.4 | 2026-02-20 | 1\nfine too\n"
    )

    # when parsed
    result = parse_memory_md(text)

    # then only the broken one is skipped, with its line
    assert [e.id for e in result.entries] == ["ok1", "ok2"]
    assert [(w.line, w.message) for w in result.warnings] == [(6, message)]


def test_an_entry_without_content_or_with_a_duplicate_id_is_skipped():
    text = (
        "### [a] fact | 0.5 | 2026-02-20 | 1\n\n"
        "### [b] fact | 0.5 | 2026-02-20 | 1\nB\n"
        "### [b] fact | 0.6 | 2026-02-20 | 1\nB again\n"
    )
    result = parse_memory_md(text)
    assert [e.content for e in result.entries] == ["B"]
    assert [(w.line, w.message) for w in result.warnings] == [
        (1, "entry [a] skipped: no content"),
        (5, "entry [b] skipped: duplicate id"),
    ]


def test_save_then_load_round_trips(tmp_path):
    # given entries in both sections, with multi-line content and lines that look like headings
    entries = [
        _entry("a1", 0.92, category="preference", hits=12, content="Likes concise code"),
        _entry("b2", 0.5, content="Line one\n  indented line two\n\nafter a blank"),
        _entry("c3", 0.3, content="# not a title\n## not a section\n### [x] not | an | entry | 1\n\\# already escaped"),
        _entry("d4", 0.18, section="archived", last_activated=date(2025, 12, 31), hits=0, content="Old"),
        _entry("e5", 0.75, section="archived", content="Archived by compression despite its score"),
    ]
    path = tmp_path / "MEMORY.md"

    # when rendered, saved and loaded again
    file_write_with_backup(path, render_memory_md(entries, updated_at=datetime(2026, 2, 20, 10, 30)))
    loaded = load_memory_md(path)

    # then the same entries come back (Active by score first, then Archived by score)
    assert loaded.warnings == []
    assert loaded.entries == [entries[0], entries[1], entries[2], entries[4], entries[3]]
    assert loaded.last_updated == datetime(2026, 2, 20, 10, 30)
    assert loaded.total_entries == 5


def test_render_matches_the_seed_layout():
    # when the seed's entries are rendered
    text = render_memory_md(parse_memory_md(SEED_EXAMPLE).entries, updated_at=datetime(2026, 2, 20, 10, 30))

    # then the file is the seed's example, byte for byte
    assert text == SEED_EXAMPLE


def test_scores_are_written_with_two_decimals():
    text = render_memory_md([_entry("a", 0.123456), _entry("b", 0.125)], updated_at=datetime(2026, 1, 1))
    assert "### [a] fact | 0.12 | 2026-02-20 | 1" in text
    assert [e.score for e in parse_memory_md(text).entries] == [0.12, round(0.125, 2)]


def test_active_and_archived_split_at_0_2():
    # given scores around the threshold, all claiming to be active
    entries = [_entry("low", 0.19), _entry("edge", 0.2), _entry("high", 0.21), _entry("tiny", 0.0)]

    # when rendered and parsed
    parsed = parse_memory_md(render_memory_md(entries))

    # then >= 0.2 is Active and < 0.2 is Archived
    assert {e.id: e.section for e in parsed.entries} == {
        "high": "active",
        "edge": "active",
        "low": "archived",
        "tiny": "archived",
    }


def test_the_threshold_is_a_parameter():
    active, archived = split_sections([_entry("a", 0.4), _entry("b", 0.6)], archive_below=0.5)
    assert ([e.id for e in active], [e.id for e in archived]) == (["b"], ["a"])


def test_active_is_sorted_by_score_descending():
    # given entries in no particular order
    entries = [_entry(str(i), s) for i, s in enumerate([0.3, 0.9, 0.55, 0.91, 0.2, 0.7])]

    # when rendered
    parsed = parse_memory_md(render_memory_md(entries))

    # then Active lists them by score, highest first
    assert [e.score for e in parsed.entries] == [0.91, 0.9, 0.7, 0.55, 0.3, 0.2]


def test_an_unknown_section_and_stray_text_are_reported_but_tolerated():
    text = "intro text\n## Notes\n### [a] fact | 0.5 | 2026-02-20 | 1\nA\n### [b] fact | 0.1 | 2026-02-20 | 1\nB\n"
    result = parse_memory_md(text)
    assert {e.id: e.section for e in result.entries} == {"a": "active", "b": "archived"}
    assert [(w.line, w.message) for w in result.warnings] == [
        (1, "text outside an entry ignored"),
        (2, "unknown section 'Notes': its entries are placed by score"),
    ]


def test_rendering_refuses_an_id_that_would_not_parse():
    with pytest.raises(ValueError, match="invalid entry id"):
        render_memory_md([_entry("a]b", 0.5)])


def test_learnings_md_uses_the_same_format_under_its_own_title():
    text = render_learnings_md([_entry("s1", 0.7, category="skill", content="Restart nginx on a 502")])
    parsed = parse_memory_md(text)
    assert parsed.title == "Agent Learnings"
    assert [(e.category, e.content) for e in parsed.entries] == [("skill", "Restart nginx on a 502")]


def test_backup_is_written_before_each_overwrite(tmp_path):
    # given a first version of the file
    path = tmp_path / "MEMORY.md"
    assert file_write_with_backup(path, "version 1\n") is None
    assert not (tmp_path / "MEMORY.md.bak").exists()

    # when it is overwritten twice
    first_backup = file_write_with_backup(path, "version 2\n")
    first_backup_text = first_backup.read_text()
    file_write_with_backup(path, "version 3\n")

    # then each time the .bak held the version just replaced, and no temporary file is left behind
    assert first_backup == tmp_path / "MEMORY.md.bak"
    assert first_backup_text == "version 1\n"
    assert (tmp_path / "MEMORY.md.bak").read_text() == "version 2\n"
    assert path.read_text() == "version 3\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md", "MEMORY.md.bak"]


def test_a_failed_write_leaves_the_old_file_intact(tmp_path, monkeypatch):
    # given an existing file and a disk that fails mid-replace
    path = tmp_path / "MEMORY.md"
    path.write_text("good\n")

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr("memories.formats.memory_md.os.replace", failing_replace)

    # when writing fails
    with pytest.raises(OSError):
        file_write_with_backup(path, "new\n")

    # then the file still holds the old content and no temporary file is left
    assert path.read_text() == "good\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md"]


def test_user_md_groups_by_category_and_parses_back():
    # given profile memories
    entries = [
        _entry("p1", 0.9, category="preference", content="Prefers tea"),
        _entry("p2", 0.95, category="preference", content="Likes short answers"),
        _entry("f1", 0.8, category="fact", content="Lives in Porto"),
        _entry("r1", 0.7, category="rule", content="Never share my address"),
    ]

    # when rendered
    text = render_user_md(entries, name="alice", updated_at=datetime(2026, 2, 20, 10, 30))

    # then it reads as a profile, strongest first within each section
    assert text == (
        "# User Profile: alice\n\n<!-- Last updated: 2026-02-20T10:30:00 -->\n\n"
        "## Preferences\n\n- Likes short answers\n- Prefers tea\n\n"
        "## Facts\n\n- Lives in Porto\n\n"
        "## Rules\n\n- Never share my address\n"
    )
    assert parse_user_md(text) == {
        "Preferences": ["Likes short answers", "Prefers tea"],
        "Facts": ["Lives in Porto"],
        "Rules": ["Never share my address"],
    }


def test_user_md_for_nobody_says_so():
    assert "Nothing is known about the user yet." in render_user_md([])


def test_user_md_caps_each_section():
    entries = [_entry(f"p{i}", 0.5, category="preference", content=f"pref {i}") for i in range(5)]
    text = render_user_md(entries, per_section=2)
    assert "- … and 3 more" in text
    assert len(parse_user_md(text)["Preferences"]) == 2
