"""MEMORY.md / USER.md / learnings.md exports: CoreMemory rows, files, .bak, and the parser round trip."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.formats.memory_md import load_memory_md, parse_memory_md, parse_user_md
from memories.models import CoreMemory, Memory
from memories.services.lifecycle import export_dir_for, lifecycle_run
from tests.memories.services.lifecycle.conftest import memory_at


def _scene(user, now):
    def at(days, strength, category, content, **fields):
        return memory_at(user, now=now, days=days, strength=strength, category=category, content=content, **fields)

    return [
        at(1, 0.92, "preference", "Likes concise code", hit_count=12),
        at(20, 0.88, "fact", "Works with Python and FastAPI"),
        at(3, 0.61, "workflow", "Checks the markets at 9"),
        at(2, 0.15, "fact", "Once tried Vue", status="archived"),
        at(1, 0.7, "skill", "Restart nginx after a 502"),
        at(1, 0.5, "error", "rm -rf lost data once"),
        at(1, 0.9, "fact", "Forgotten", status="forgotten"),
        at(1, 0.9, "fact", "Needs review", status="pending_review"),
    ]


def _check_entries(text: str, memories: list[Memory]):
    parsed = parse_memory_md(text)
    assert parsed.warnings == []
    assert parsed.total_entries == len(memories)
    by_prefix = {e.id: e for e in parsed.entries}
    assert len(by_prefix) == len(memories)
    for memory in memories:
        memory.refresh_from_db()
        (entry,) = [e for key, e in by_prefix.items() if memory.pk.hex.startswith(key)]
        assert len(entry.id) >= 8
        assert entry.category == memory.category
        assert entry.score == round(memory.strength, 2)
        assert entry.last_activated == timezone.localtime(memory.last_reinforced_at).date()
        assert entry.hits == memory.hit_count
        assert entry.content == memory.content
        assert entry.section == ("archived" if memory.status == "archived" else "active")
    return parsed


def test_exports_round_trip_through_the_memory_md_parser(user, now, tmp_path):
    # given semantic and procedural memories in every status
    memories = _scene(user, now)
    semantic = memories[:4]
    procedural = memories[4:6]

    # when the lifecycle runs with an export directory
    run = lifecycle_run(owner=user, now=now, export_dir=tmp_path)

    # then the CoreMemory row and the files hold the same text
    core = CoreMemory.objects.get(owner=user, agent="")
    folder = tmp_path / "alice"
    assert (folder / "MEMORY.md").read_text() == core.memory_md
    assert (folder / "learnings.md").read_text() == core.learnings_md
    assert (folder / "USER.md").read_text() == core.user_md
    assert core.generated_at == now
    # and every exported entry parses back (id prefix, category, score to 2 decimals, date, hits)
    parsed = _check_entries(core.memory_md, semantic)
    _check_entries(core.learnings_md, procedural)
    # and Active is sorted by score, the archived memory is in Archived
    active = [e.score for e in parsed.entries if e.section == "active"]
    assert active == sorted(active, reverse=True) == [0.92, round(0.88 * 0.99**13, 2), 0.61]
    assert parsed.title == "Agent Memory"
    assert parse_memory_md(core.learnings_md).title == "Agent Learnings"
    assert run.counts["exports"] == {"agents": 1, "entries": 6, "files": 3}


def test_user_md_is_a_profile_grouped_by_category(user, now, tmp_path):
    # given the scene
    _scene(user, now)

    # when the lifecycle runs
    lifecycle_run(owner=user, now=now, export_dir=tmp_path)

    # then USER.md lists active preferences, facts and habits under their headings
    text = (tmp_path / "alice" / "USER.md").read_text()
    assert text.startswith("# User Profile: alice\n")
    assert parse_user_md(text) == {
        "Preferences": ["Likes concise code"],
        "Facts": ["Works with Python and FastAPI"],
        "Habits and workflows": ["Checks the markets at 9"],
    }


def test_each_overwrite_keeps_the_previous_file_as_bak(user, now, tmp_path):
    # given a first export
    memory_at(user, now=now, strength=0.8, content="Prefers tea")
    lifecycle_run(owner=user, now=now, export_dir=tmp_path)
    path = tmp_path / "alice" / "MEMORY.md"
    first = path.read_text()
    assert not (tmp_path / "alice" / "MEMORY.md.bak").exists()

    # when a new memory arrives and the lifecycle runs the next day
    memory_at(user, now=now + timedelta(days=1), strength=0.7, content="Lives in Porto")
    lifecycle_run(owner=user, now=now + timedelta(days=1), export_dir=tmp_path)

    # then MEMORY.md.bak holds the first version and MEMORY.md the new one
    assert (tmp_path / "alice" / "MEMORY.md.bak").read_text() == first
    second = path.read_text()
    assert second != first
    assert [e.content for e in load_memory_md(path).entries] == ["Prefers tea", "Lives in Porto"]
    assert (tmp_path / "alice" / "USER.md.bak").exists()
    assert (tmp_path / "alice" / "learnings.md.bak").exists()


def test_settings_export_dir_is_used_when_none_is_given(user, now, tmp_path, settings):
    # given MEMORY_EXPORT_DIR in settings
    settings.MEMORY_EXPORT_DIR = str(tmp_path)
    memory_at(user, now=now, content="Settings export")

    # when the lifecycle runs without an export_dir
    lifecycle_run(owner=user, now=now)

    # then the files are written there
    assert "Settings export" in (tmp_path / "alice" / "MEMORY.md").read_text()


def test_agents_get_their_own_core_memory_and_a_safe_folder(user, now, tmp_path):
    # given memories of the default agent and of an agent with an unsafe name
    memory_at(user, now=now, content="Default agent memory")
    memory_at(user, now=now, content="Bot memory", agent="../bot")

    # when the lifecycle runs
    run = lifecycle_run(owner=user, now=now, export_dir=tmp_path)

    # then each agent has its own CoreMemory and files, inside the owner's folder
    assert set(CoreMemory.objects.filter(owner=user).values_list("agent", flat=True)) == {"", "../bot"}
    folder = export_dir_for(tmp_path, username="alice", agent="../bot")
    assert folder.parent == tmp_path / "alice" / "agents"
    bot_md = (folder / "MEMORY.md").read_text()
    assert "Bot memory" in bot_md and "Default agent memory" not in bot_md
    assert "Bot memory" not in (tmp_path / "alice" / "MEMORY.md").read_text()
    assert run.counts["exports"]["files"] == 6


def test_long_exports_are_truncated_with_a_note(user, now, settings):
    # given more active memories than the export shows
    settings.MEMORY_LIFECYCLE = {"EXPORT_MAX_ACTIVE": 2}
    for i in range(4):
        memory_at(user, now=now, strength=0.5 + i / 10, content=f"memory {i}")

    # when the lifecycle runs
    lifecycle_run(owner=user, now=now)

    # then the strongest two are exported and the rest are mentioned
    text = CoreMemory.objects.get(owner=user).memory_md
    parsed = parse_memory_md(text)
    assert [e.content for e in parsed.entries] == ["memory 3", "memory 2"]
    assert "<!-- 2 weaker active entries not shown -->" in text
    assert parsed.warnings == []


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "ok-name"])
def test_export_dir_for_never_escapes_the_base(tmp_path, name):
    # when an export folder is computed for an odd name
    folder = export_dir_for(tmp_path, username=name or "x", agent=name)

    # then it stays under the base
    assert tmp_path in folder.resolve().parents
