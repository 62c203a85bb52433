"""Export → import round trips into another owner, and seed 004 §10's folder migration."""

import json
from datetime import UTC, date, datetime, timedelta

import pytest

from memories.drafts import MemoryDraft
from memories.models import DailyDigest, Memory
from memories.services.decisions import memory_write
from memories.services.memories import memory_update
from memories.services.transfer import memory_export, memory_import, memory_import_text
from tests.memories.services.transfer.conftest import seed_text

pytestmark = pytest.mark.django_db

ACTOR = "cli:import"
OLD = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC)


@pytest.fixture
def alice_memories(user):
    """Memories of several categories and states, some with a past of their own."""
    rows = [
        ("User prefers dark roast coffee", "preference", 0.8),
        ("User works at Example GmbH as a data engineer", "fact", 0.6),
        ("Deploys go through the staging cluster first", "workflow", 0.7),
        ("Never run migrations on Friday afternoons", "rule", 0.9),
        ("pip install fails behind the office proxy without --proxy", "error", 0.5),
        ("Prepare the quarterly report by December", "todo", 0.4),
    ]
    written = {}
    for index, (content, category, importance) in enumerate(rows):
        observed = OLD + timedelta(days=index)
        result = memory_write(
            owner=user,
            draft=MemoryDraft(content=content, category=category, importance=importance, observed_at=observed),
            actor="test",
        )
        written[content] = result.memory
    # a faded, archived one and a reinforced one
    memory_update(
        memory=written["Prepare the quarterly report by December"], actor="test", strength=0.15, status="archived"
    )
    Memory.objects.filter(pk=written["User prefers dark roast coffee"].pk).update(
        hit_count=4, strength=0.93, base_strength=0.93, last_reinforced_at=OLD + timedelta(days=20)
    )
    Memory.objects.filter(owner=user).update(created_at=OLD - timedelta(hours=1))
    return written


FIELDS = (
    "category",
    "importance",
    "strength",
    "status",
    "observed_at",
    "created_at",
    "last_reinforced_at",
    "hit_count",
)


def state(owner) -> dict:
    return {
        m.content: {name: getattr(m, name) for name in FIELDS}
        for m in Memory.objects.filter(owner=owner).exclude(status="forgotten")
    }


def test_jsonl_round_trip_into_another_owner_keeps_everything(user, other_user, alice_memories):
    # when alice's memories are exported as JSONL and imported for bob
    exported = memory_export(owner=user, fmt="jsonl")
    report = memory_import_text(owner=other_user, text=exported, name="memories.jsonl", actor=ACTOR)

    # then bob has the same memories with the same category, importance, strength, status and times
    assert report.added == 6 and report.warnings == []
    assert state(other_user) == state(user)
    assert len(exported.splitlines()) == 6
    assert json.loads(exported.splitlines()[0])["content"] == "User prefers dark roast coffee"
    # and alice's own memories are untouched, bob's are his own rows
    assert not Memory.objects.filter(owner=other_user, pk__in=[m.pk for m in alice_memories.values()]).exists()


def test_jsonl_round_trip_keeps_a_superseded_pair_as_it_was(user, other_user):
    # given a value that changed: the old memory superseded (penalised) by the new one
    for city in ("Berlin", "Hamburg"):
        draft = MemoryDraft(
            content=f"User lives in {city}", subject="user", predicate="lives in", structured_data={"value": city}
        )
        memory_write(owner=user, draft=draft, actor="t")
    before = state(user)
    assert before["User lives in Berlin"]["strength"] < before["User lives in Hamburg"]["strength"]

    # when exported and imported for bob (the import replays the contradiction)
    memory_import_text(owner=other_user, text=memory_export(owner=user, fmt="jsonl"), fmt="jsonl", actor=ACTOR)

    # then bob's pair has alice's strengths, not a second penalty
    assert state(other_user) == before


def test_memory_md_round_trip_keeps_content_category_score_and_section(user, other_user, alice_memories):
    # when alice's MEMORY.md export is imported for bob
    text = memory_export(owner=user, fmt="memory-md")
    report = memory_import_text(owner=other_user, text=text, name="MEMORY.md", actor=ACTOR)

    # then bob's memories match at MEMORY.md's precision: the score to two places, the day of last activation
    assert report.added == 6 and report.skipped == 0
    mine, his = state(user), state(other_user)
    assert set(his) == set(mine)
    for content, theirs in mine.items():
        assert his[content]["category"] == theirs["category"]
        assert his[content]["status"] == theirs["status"]
        assert his[content]["strength"] == pytest.approx(round(theirs["strength"], 2))
        assert his[content]["hit_count"] == theirs["hit_count"]
        assert his[content]["last_reinforced_at"].date() == theirs["last_reinforced_at"].date()


def test_memory_json_round_trip_keeps_category_importance_and_timestamps(user, other_user, alice_memories):
    # when alice's memory.json export (seed 004's shape plus x_* keys) is imported for bob
    text = memory_export(owner=user, fmt="memory-json")
    document = json.loads(text)
    assert document["version"] == 2 and len(document["memories"]) == 6
    assert {m["category"] for m in document["memories"]} <= {
        "preferences",
        "facts",
        "tasks",
        "reflections",
        "procedural",
        "general",
    }
    memory_import_text(owner=other_user, text=text, name="memory.json", actor=ACTOR)

    # then category (exact, through x_category), importance, strength, status and the times survive
    mine, his = state(user), state(other_user)
    assert set(his) == set(mine)
    for content, theirs in mine.items():
        for name in ("category", "status", "observed_at", "created_at"):
            assert his[content][name] == theirs[name], (content, name)
        assert his[content]["importance"] == pytest.approx(theirs["importance"], abs=1e-4)
        assert his[content]["strength"] == pytest.approx(theirs["strength"], abs=1e-6)


def test_user_md_export_lists_active_memories_by_section(user, alice_memories):
    text = memory_export(owner=user, fmt="user-md")
    assert text.startswith("# User Profile: alice")
    assert "## Preferences\n\n- User prefers dark roast coffee" in text
    assert "Prepare the quarterly report" not in text  # archived


def test_export_is_scoped_to_the_owner(user, other_user, alice_memories):
    memory_write(owner=other_user, draft=MemoryDraft(content="Bob likes chess", category="preference"), actor="t")
    for fmt in ("jsonl", "memory-md", "memory-json", "user-md"):
        text = memory_export(owner=other_user, fmt=fmt)
        assert "Bob likes chess" in text
        assert "dark roast" not in text


@pytest.fixture
def legacy_folder(tmp_path):
    """A seed 004 workspace before migration: MEMORY.md, memory.json, USER.md and logs."""
    folder = tmp_path / "memory"
    (folder / "logs").mkdir(parents=True)
    (folder / "MEMORY.md").write_text(seed_text("002_MEMORY.md"), encoding="utf-8")
    (folder / "memory.json").write_text(seed_text("004_memory.json"), encoding="utf-8")
    (folder / "USER.md").write_text("# User Profile\n\n## Preferences\n\n- Prefers window seats\n", encoding="utf-8")
    (folder / "logs" / "2026-02-21.json").write_text(seed_text("004_2026-02-21.json"), encoding="utf-8")
    (folder / "logs" / "2026-02-20.md").write_text("- 09:00 [facts] The team uses GitLab\n", encoding="utf-8")
    (folder / "notes.txt").write_text("not a memory file", encoding="utf-8")
    return folder


def test_folder_migration_imports_everything_and_leaves_migrated_files(user, legacy_folder):
    # when the folder is imported
    report = memory_import(owner=user, path_or_text=legacy_folder, actor=ACTOR)

    # then each file was imported (older format first) and renamed to <name>.migrated
    assert [(f.source, f.format) for f in report.files] == [
        ("MEMORY.md", "memory-md"),
        ("memory.json", "memory-json"),
        ("USER.md", "user-md"),
        ("logs/2026-02-20.md", "daily-log"),
        ("logs/2026-02-21.json", "daily-log"),
    ]
    remaining = sorted(p.relative_to(legacy_folder).as_posix() for p in legacy_folder.rglob("*") if p.is_file())
    assert remaining == [
        "MEMORY.md.migrated",
        "USER.md.migrated",
        "logs/2026-02-20.md.migrated",
        "logs/2026-02-21.json.migrated",
        "memory.json.migrated",
        "notes.txt",
    ]
    assert len(report.migrated) == 5
    # and the memories of all of them are there: 4 + 2 + 1 + 1 + 2
    assert Memory.objects.filter(owner=user).count() == 10
    assert report.added == 10
    assert set(DailyDigest.objects.filter(owner=user).values_list("day", flat=True)) == {
        date(2026, 2, 20),
        date(2026, 2, 21),
    }

    # when it is migrated a second time
    again = memory_import(owner=user, path_or_text=str(legacy_folder), actor=ACTOR)

    # then there is nothing left to import
    assert again.files == [] and again.added == 0
    assert "nothing to import" in again.warnings[0].message
    assert Memory.objects.filter(owner=user).count() == 10


def test_a_broken_file_in_the_folder_is_left_in_place_and_the_rest_is_migrated(user, legacy_folder):
    (legacy_folder / "memory.json").write_text("{not json", encoding="utf-8")

    report = memory_import(owner=user, path_or_text=legacy_folder, actor=ACTOR)

    assert (legacy_folder / "memory.json").exists()
    assert not (legacy_folder / "MEMORY.md").exists()
    broken = next(f for f in report.files if f.source == "memory.json")
    assert broken.error.startswith("not valid JSON")
    assert any(w.file == "memory.json" and "not imported" in w.message for w in report.warnings)
