"""Turns for the extraction tests: a fixed clock (Tuesday 2026-03-10 09:00 UTC) and short builders."""

from datetime import UTC, datetime, timedelta

from memories.providers.llm_types import CandidateMemory, TurnView

NOW = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)  # a Tuesday


def turn(sequence: int, role: str, content: str, *, at: datetime | None = None, **extra) -> TurnView:
    return TurnView(
        sequence=sequence,
        role=role,
        speaker=extra.pop("speaker", ""),
        content=content,
        created_at=at or NOW + timedelta(minutes=sequence),
        **extra,
    )


def user_says(*lines: str, at: datetime | None = None) -> list[TurnView]:
    """One user turn per line, all said at `at` (NOW by default)."""
    return [turn(i, "user", line, at=at or NOW) for i, line in enumerate(lines, start=1)]


def brief(candidate: CandidateMemory) -> tuple:
    return (
        candidate.content,
        candidate.category,
        candidate.importance,
        candidate.subject,
        candidate.predicate,
        candidate.value,
    )
