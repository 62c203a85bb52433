"""The data types the engine and its LLM providers exchange (memories.providers.llm_types)."""

from datetime import UTC, datetime

from memories.providers.llm_types import TurnView
from tests.factories import ConversationTurnFactory


def test_a_turn_view_of_a_stored_turn_reads_every_field_it_has(db):
    # given a stored tool turn
    said = {
        "sequence": 4,
        "role": "tool",
        "speaker": "deploy-bot",
        "content": "exit code 1",
        "created_at": datetime(2025, 6, 2, 9, 30, tzinfo=UTC),
        "tool_name": "deploy",
        "tool_error": "timeout",
    }
    turn = ConversationTurnFactory(**said)

    # when the engine's view of it is taken
    view = TurnView.of(turn)

    # then it says what the row says
    assert view == TurnView(**said)
