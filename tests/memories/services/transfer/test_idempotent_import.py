"""Issue 11: importing the same file again changes nothing, whatever its format and entry point."""

import json
from datetime import UTC, datetime

import pytest

from memories.models import DailyDigest, Memory, MemoryEvent
from memories.services.actions import memory_forget
from memories.services.memories import memory_update
from memories.services.transfer import memory_import_text
from tests.factories import MemoryFactory
from tests.memories.services.transfer.conftest import seed_text

pytestmark = pytest.mark.django_db

ACTOR = "cli:import"
SKIP = {"embedding", "search_vector"}
VUE = "用户曾尝试用 Vue 写前端，但后来放弃了"
CODE_STYLE = "用户喜欢简洁的代码风格，不喜欢过多注释"


def rows(owner) -> dict:
    """Every stored column of every memory of `owner`, by id."""
    names = [f.attname for f in Memory._meta.concrete_fields if f.attname not in SKIP]
    return {row["id"]: row for row in Memory.objects.filter(owner=owner).values(*names)}


def history(owner) -> int:
    return MemoryEvent.objects.filter(owner=owner).count()


USER_MD = "# User Profile\n\n## Preferences\n- Prefers dark mode\n\n## Facts\n- Works at Example GmbH\n"
LEARNINGS_MD = (
    "# Agent Learnings\n\n## Active Memories\n\n"
    "### [aa11] rule | 0.90 | 2026-03-01 | 3\nNever deploy on Fridays\n\n"
    "### [bb22] error | 0.70 | 2026-03-02 | 1\npip install fails behind the office proxy without --proxy\n"
)
JSONL_FACTS = "".join(
    json.dumps({"content": text, "category": "fact", "strength": 0.7, "hit_count": 5}) + "\n"
    for text in ("Server db-01 has IP address 10.0.0.11", "The office wifi is called Heron", "Ana lives in Porto")
)


def test_importing_the_same_memory_md_again_changes_nothing(user, seed_memory_md):
    # given seed 002's MEMORY.md imported once: 0.92 with 12 hits, and an archived entry
    memory_import_text(owner=user, text=seed_memory_md, name="MEMORY.md", actor=ACTOR)
    before, events = rows(user), history(user)
    style = Memory.objects.get(owner=user, content=CODE_STYLE)
    assert (style.strength, style.hit_count, style.status) == (0.92, 12, "active")
    assert Memory.objects.get(owner=user, content=VUE).status == "archived"

    # when the same file is imported again
    report = memory_import_text(owner=user, text=seed_memory_md, name="MEMORY.md", actor=ACTOR)

    # then nothing changed: no reinforcement (still 0.92 and 12 hits), the archived entry is still
    # archived, no row and no history was written
    assert (report.mode, report.entries, report.unchanged) == ("merge", 4, 4)
    assert (report.added, report.merged, report.reinforced, report.superseded, report.skipped) == (0, 0, 0, 0, 0)
    assert rows(user) == before
    assert history(user) == events
    style.refresh_from_db()
    assert (style.strength, style.base_strength, style.hit_count, style.status) == (0.92, 0.92, 12, "active")
    vue = Memory.objects.get(owner=user, content=VUE)
    assert (vue.status, vue.strength, vue.hit_count) == ("archived", 0.18, 2)
    assert sorted(report.memory_ids) == sorted(str(pk) for pk in before)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("memory.json", seed_text("004_memory.json")),
        ("logs/2026-02-21.json", seed_text("004_2026-02-21.json")),
        ("USER.md", USER_MD),
        ("learnings.md", LEARNINGS_MD),
        ("facts.jsonl", JSONL_FACTS),
    ],
)
def test_importing_the_same_file_of_any_format_again_changes_nothing(user, name, text):
    # given the file imported once
    first = memory_import_text(owner=user, text=text, name=name, actor=ACTOR)
    before, events = rows(user), history(user)
    digests = list(DailyDigest.objects.filter(owner=user).values("day", "entries", "summary"))
    assert first.added == len(before) > 0

    # when it is imported again
    report = memory_import_text(owner=user, text=text, name=name, actor=ACTOR)

    # then every memory it holds is reported unchanged and no row, history or digest line changed
    assert (report.mode, report.unchanged) == ("merge", len(first.memory_ids))
    assert (report.added, report.merged, report.reinforced, report.superseded, report.digests) == (0, 0, 0, 0, 0)
    assert rows(user) == before
    assert history(user) == events
    assert list(DailyDigest.objects.filter(owner=user).values("day", "entries", "summary")) == digests


def test_an_entry_imported_before_is_left_as_the_owner_changed_it_since(user, seed_memory_md):
    # given MEMORY.md imported, then one entry edited and another forgotten by the owner
    memory_import_text(owner=user, text=seed_memory_md, name="MEMORY.md", actor=ACTOR)
    style = Memory.objects.get(owner=user, content=CODE_STYLE)
    memory_update(memory=style, actor="user:alice", content="User likes concise code and few comments")
    python = Memory.objects.get(owner=user, content__startswith="用户的主要开发语言")
    memory_forget(memory=python, actor="user:alice")
    before, events = rows(user), history(user)

    # when the same file is imported again
    report = memory_import_text(owner=user, text=seed_memory_md, name="MEMORY.md", actor=ACTOR)

    # then the edited entry's old text does not come back, the forgotten one stays forgotten
    assert (report.added, report.unchanged) == (0, 4)
    assert rows(user) == before
    assert history(user) == events
    assert Memory.objects.get(pk=python.pk).status == "forgotten"
    assert not Memory.objects.filter(owner=user, content=CODE_STYLE).exists()


def test_an_entry_already_held_word_for_word_is_not_reinforced_nor_revived(user, seed_memory_md):
    # given the owner already holds one entry's text as an archived memory
    observed = datetime(2025, 12, 1, tzinfo=UTC)
    held = MemoryFactory(owner=user, content=CODE_STYLE, status="archived", strength=0.15, observed_at=observed)
    before = rows(user)[held.pk]

    # when the MEMORY.md that lists it as active is imported
    report = memory_import_text(owner=user, text=seed_memory_md, name="MEMORY.md", actor=ACTOR)

    # then the other three are added and the held memory is left exactly as it was
    assert (report.added, report.unchanged) == (3, 1)
    assert rows(user)[held.pk] == before
    assert Memory.objects.filter(owner=user).count() == 4


def test_the_same_entry_twice_in_one_file_is_written_once(user):
    # given a USER.md listing the same line under two sections
    text = "# User Profile\n\n## Preferences\n- Prefers dark mode\n\n## Notes\n- Prefers dark mode\n"

    # when it is imported
    report = memory_import_text(owner=user, text=text, name="USER.md", actor=ACTOR)

    # then one memory, at its first strength (the repeat did not reinforce it)
    memory = Memory.objects.get(owner=user)
    assert (report.added, report.unchanged, report.reinforced) == (1, 1, 0)
    assert (memory.hit_count, memory.strength) == (0, 0.6)
