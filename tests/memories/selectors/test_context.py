"""`context_build`: tools description, scratchpad, pinned memories (strength ≥ 0.5, top 20, strongest
first; never archived, pending, superseded, forgotten or expired), implicit recall of the top 3 for a
session's first message (seed 004), all within a token budget (seed 002 §7.4 get_prompt_memories)."""

from datetime import timedelta

from django.utils import timezone

from memories.models import MemoryRelation
from memories.selectors.context import context_build
from memories.tools import TOOLS_DESCRIPTION
from memory_project.text import estimate_tokens
from sessions.services.scratchpad import scratchpad_complete, scratchpad_update
from tests.factories import ChatSessionFactory, ConversationTurnFactory, MemoryFactory, UserFactory

CORE = "# What you know about the user"
RECALL = "# Possibly relevant memories"


def _section(prompt: str, header: str) -> list[str]:
    """The "- …" lines under `header`, in order ([] when the section is absent)."""
    if header not in prompt:
        return []
    lines = prompt.split(header + "\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return [line[2:] for line in lines]


def test_only_strong_memories_are_pinned_at_most_twenty_strongest_first(user):
    # given 30 active memories from strength 0.99 down to 0.41 (every 0.02): 25 of them are ≥ 0.5
    strengths = [round(0.99 - 0.02 * i, 2) for i in range(30)]
    for i, strength in enumerate(strengths):
        MemoryFactory(owner=user, content=f"Core fact {i:02d}", strength=strength)

    # when the context is built
    context = context_build(owner=user)

    # then the 20 strongest of those at or above 0.5 are pinned, strongest first
    expected = [f"Core fact {i:02d}" for i in range(20)]
    assert [m["content"] for m in context["memories"]] == expected
    assert [m["strength"] for m in context["memories"]] == strengths[:20]
    assert {m["kind"] for m in context["memories"]} == {"pinned"}
    assert _section(context["system_prompt"], CORE) == expected
    assert "Core fact 20" not in context["system_prompt"]


def test_the_pin_threshold_is_inclusive_at_one_half(user):
    # given memories at 0.5 and just below
    MemoryFactory(owner=user, content="Exactly at the threshold", strength=0.5)
    MemoryFactory(owner=user, content="Just below the threshold", strength=0.4999)

    # when the context is built
    context = context_build(owner=user)

    # then only the one at 0.5 is pinned
    assert [m["content"] for m in context["memories"]] == ["Exactly at the threshold"]


def test_archived_pending_superseded_forgotten_expired_and_foreign_memories_are_never_pinned(user):
    # given one pinnable memory and strong ones that must stay out of the prompt
    MemoryFactory(owner=user, content="Visible core memory", strength=0.7)
    for status in ("archived", "pending_review", "rejected", "forgotten"):
        MemoryFactory(owner=user, content=f"Hidden {status} memory", status=status, strength=0.9)
    MemoryFactory(
        owner=user, content="Hidden expired memory", strength=0.9, expires_at=timezone.now() - timedelta(minutes=1)
    )
    old = MemoryFactory(owner=user, content="Hidden superseded memory", strength=0.9)
    new = MemoryFactory(owner=user, content="Visible superseding memory", strength=0.6)
    MemoryRelation.objects.create(owner=user, source=new, target=old, type="supersedes")
    MemoryFactory(owner=UserFactory(username="bob"), content="Hidden memory of bob", strength=0.95)
    MemoryFactory(owner=user, agent="helper", content="Hidden memory of another agent", strength=0.95)

    # when the default agent's context is built, with a query that matches every one of them
    context = context_build(owner=user, query="Hidden memory", agent="")

    # then only the visible ones appear, pinned or recalled
    assert [m["content"] for m in context["memories"]] == ["Visible core memory", "Visible superseding memory"]
    assert "Hidden" not in context["system_prompt"]


def test_another_agent_sees_its_own_pinned_memories(user):
    # given a memory for the default agent and one for "helper"
    MemoryFactory(owner=user, content="Default agent memory", strength=0.9)
    MemoryFactory(owner=user, agent="helper", content="Helper agent memory", strength=0.9)

    # when helper's context is built
    context = context_build(owner=user, agent="helper")

    # then it holds helper's memory only
    assert [m["content"] for m in context["memories"]] == ["Helper agent memory"]


def test_the_first_message_recalls_the_top_three_relevant_memories(user):
    # given weak (unpinned) memories about sailing and one strong pinned memory
    pinned = MemoryFactory(owner=user, content="Sailing club member since 2019", strength=0.9)
    for i, text in enumerate(
        [
            "Sailing boat is named Aurora",
            "Sailing trip to Crete planned",
            "Sailing course in May",
            "Sailing gloves lost",
        ]
    ):
        MemoryFactory(owner=user, content=text, strength=0.45 - i * 0.05)
    MemoryFactory(owner=user, content="Knits scarves in winter", strength=0.45)
    session = ChatSessionFactory(owner=user)
    ConversationTurnFactory(session=session, sequence=1, content="Tell me about my sailing plans")

    # when the context for the session's first message is built
    context = context_build(owner=user, query="sailing", session_id=session.pk)

    # then the pinned memory is listed once as pinned, and three other sailing memories are recalled
    kinds = [(m["kind"], m["content"]) for m in context["memories"]]
    assert kinds[0] == ("pinned", pinned.content)
    recalled = [content for kind, content in kinds if kind == "recalled"]
    assert len(recalled) == 3
    assert all(content.startswith("Sailing") for content in recalled)
    assert pinned.content not in recalled
    assert _section(context["system_prompt"], RECALL) == recalled
    assert all("score" in m for m in context["memories"] if m["kind"] == "recalled")


def test_no_implicit_recall_after_the_first_message(user):
    # given a weak memory and a session with two user messages already
    MemoryFactory(owner=user, content="Sailing boat is named Aurora", strength=0.3)
    session = ChatSessionFactory(owner=user)
    ConversationTurnFactory(session=session, sequence=1, content="hello")
    ConversationTurnFactory(session=session, sequence=2, content="what about sailing?")

    # when the context is built for that session
    context = context_build(owner=user, query="sailing", session_id=session.pk)

    # then nothing is recalled
    assert context["memories"] == []
    assert RECALL not in context["system_prompt"]


def test_implicit_recall_skips_superseded_and_archived_memories(user):
    # given a superseded and an archived memory matching the query, and a current weak one
    old = MemoryFactory(owner=user, content="Drinks tea every morning", strength=0.3)
    new = MemoryFactory(owner=user, content="Drinks coffee every morning", strength=0.45)
    MemoryRelation.objects.create(owner=user, source=new, target=old, type="supersedes")
    MemoryFactory(owner=user, content="Drinks tea every evening", strength=0.15, status="archived")

    # when the first message asks about tea
    context = context_build(owner=user, query="tea every morning")

    # then only the current memory is recalled
    assert [(m["kind"], m["content"]) for m in context["memories"]] == [("recalled", "Drinks coffee every morning")]
    assert "tea" not in context["system_prompt"]


def test_the_token_budget_limits_the_pinned_memories(user):
    # given 10 strong memories of about 10 tokens each
    for i in range(10):
        MemoryFactory(owner=user, content=f"Important fact number {i} about the user and life", strength=0.9 - i * 0.01)
    full = context_build(owner=user)
    header_cost = estimate_tokens("# Memory tools") + estimate_tokens(TOOLS_DESCRIPTION)
    line_cost = estimate_tokens("- Important fact number 0 about the user and life")

    # when the budget leaves room for exactly three lines
    context = context_build(owner=user, max_tokens=header_cost + 3 * line_cost)

    # then the three strongest are pinned and the rest left out
    assert len(full["memories"]) == 10
    assert [m["content"] for m in context["memories"]] == [m["content"] for m in full["memories"][:3]]
    assert context["budget"] == header_cost + 3 * line_cost
    assert context["tokens"] == estimate_tokens(context["system_prompt"])


def test_the_prompt_describes_the_tools_and_shows_the_scratchpad(user):
    # given a scratchpad with a focus, projects and a finished task
    scratchpad_update(owner=user, current_focus="Tax return", active_projects=["Garden shed"])
    scratchpad_complete(owner=user, task="Booked the dentist")

    # when the context is built with no memories
    context = context_build(owner=user)

    # then the prompt has the tools description and the scratchpad, and no memory section
    prompt = context["system_prompt"]
    assert prompt.startswith("# Memory tools\n" + TOOLS_DESCRIPTION)
    assert "Current focus: Tax return" in prompt
    assert "Active projects: Garden shed" in prompt
    assert "Done: Booked the dentist (" in prompt
    assert CORE not in prompt
    assert context["scratchpad"]["current_focus"] == "Tax return"
    assert context["memories"] == []
