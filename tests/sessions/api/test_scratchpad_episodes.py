from datetime import UTC, datetime, timedelta

import pytest

from sessions.models import Episode, Scratchpad
from tests.factories import ChatSessionFactory
from tests.support import assert_error, db_snapshot


def _episode(owner, *, agent="", summary="a summary", ended_at=None):
    session = ChatSessionFactory(owner=owner, agent=agent, status="ended")
    ended_at = ended_at or datetime(2024, 1, 1, tzinfo=UTC)
    return Episode.objects.create(
        owner=owner,
        session=session,
        agent=agent,
        summary=summary,
        goal="plan a trip",
        outcome="booked",
        entities=["Lisbon"],
        tools_used=["search"],
        started_at=ended_at - timedelta(hours=1),
        ended_at=ended_at,
    )


def test_scratchpad_get_of_a_new_owner_is_empty(api, user):
    # when alice reads her scratchpad for the first time
    response = api.get("/api/v1/scratchpad/")

    # then it is empty
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"agent", "current_focus", "active_projects", "recent_completions", "updated_at"}
    assert (body["agent"], body["current_focus"], body["active_projects"], body["recent_completions"]) == (
        "",
        "",
        [],
        [],
    )


def test_scratchpad_put_then_get_round_trips(api, user):
    # when alice writes her scratchpad for agent "helper"
    put = api.put(
        "/api/v1/scratchpad/",
        {
            "agent": "helper",
            "current_focus": "Finish the 報告",
            "active_projects": ["memory service", "garden"],
            "recent_completions": [{"task": "taxes", "completed_at": "2024-04-01T10:00:00Z"}],
        },
        format="json",
    )
    got = api.get("/api/v1/scratchpad/?agent=helper")
    default_agent = api.get("/api/v1/scratchpad/")

    # then the agent's pad holds exactly that, and the default agent's pad is separate
    assert put.status_code == 200
    assert got.status_code == 200
    for body in (put.json(), got.json()):
        assert body["agent"] == "helper"
        assert body["current_focus"] == "Finish the 報告"
        assert body["active_projects"] == ["memory service", "garden"]
        assert body["recent_completions"] == [{"task": "taxes", "completed_at": "2024-04-01T10:00:00+00:00"}]
    assert default_agent.json()["current_focus"] == ""
    assert Scratchpad.objects.filter(owner=user).count() == 2


def test_scratchpad_completion_without_a_time_is_stamped(api, user):
    # when a completion is written without its time
    response = api.put("/api/v1/scratchpad/", {"recent_completions": [{"task": "dishes"}]}, format="json")

    # then it is stamped, and the context block can print it
    assert response.status_code == 200
    completion = response.json()["recent_completions"][0]
    assert completion["task"] == "dishes"
    assert datetime.fromisoformat(completion["completed_at"]).tzinfo is not None
    context = api.get("/api/v1/context/")
    assert context.status_code == 200
    assert f"Done: dishes ({completion['completed_at'][:10]})" in context.json()["system_prompt"]


@pytest.mark.parametrize(
    "body, message",
    [
        ({"colour": "red"}, "colour: Unknown field."),
        ({"current_focus": "a\x00"}, "current_focus: NUL bytes are not allowed in text."),
        ({"current_focus": 5}, "current_focus: Must be a string."),
        ({"active_projects": "garden"}, 'active_projects: Expected a list of items but got type "str".'),
        ({"active_projects": ["ok", "b\x00d"]}, "active_projects: 1: NUL bytes are not allowed in text."),
        ({"recent_completions": [{"task": "x"}] * 6}, "recent_completions: Ensure this field has no more than 5"),
        ({"recent_completions": ["x"]}, "recent_completions: 0: Expected a JSON object."),
        ({"recent_completions": [{"task": "\x00"}]}, "recent_completions: 0: task: NUL bytes are not allowed"),
        ({"recent_completions": [{"\x00": "a", "task": "x"}]}, "recent_completions: 0: \x00: Unknown field."),
        ({"recent_completions": [{"task": "a", "completed_at": 5}]}, "recent_completions: 0: completed_at: Datetime"),
        ({"recent_completions": [{"completed_at": "2024-01-01T00:00:00Z"}]}, "recent_completions: 0: task: This field"),
        ({"agent": "x" * 101}, "agent: Ensure this field has no more than 100 characters."),
        ([], "Expected a JSON object."),
    ],
)
def test_scratchpad_put_with_bad_input_is_a_400_and_writes_nothing(api, user, body, message):
    # given alice's scratchpad with a focus
    api.put("/api/v1/scratchpad/", {"current_focus": "keep me"}, format="json")
    before = db_snapshot()

    # when a bad scratchpad is written
    response = api.put("/api/v1/scratchpad/", body, format="json")

    # then it is refused with its reason and the pad is unchanged
    error = assert_error(response, 400, "invalid")
    assert error["message"].startswith(message), error["message"]
    assert db_snapshot() == before
    assert api.get("/api/v1/context/").status_code == 200


@pytest.mark.parametrize(
    "query, message",
    [("agent=%00", "agent: NUL bytes are not allowed in text."), ("agent=" + "a" * 101, "agent: Ensure this field")],
)
def test_scratchpad_get_with_a_bad_agent_is_a_400_and_creates_nothing(api, user, query, message):
    # given the database as it is
    before = db_snapshot()

    # when the scratchpad of an impossible agent is read
    response = api.get(f"/api/v1/scratchpad/?{query}")

    # then it is refused and no pad is created
    error = assert_error(response, 400, "invalid")
    assert error["message"].startswith(message)
    assert db_snapshot() == before


def test_episodes_are_listed_newest_first_and_filtered_by_agent(api, user):
    # given three episodes of alice for two agents
    old = _episode(user, summary="old", ended_at=datetime(2023, 1, 1, tzinfo=UTC))
    new = _episode(user, summary="new", ended_at=datetime(2024, 1, 1, tzinfo=UTC))
    helper = _episode(user, agent="helper", summary="helper's", ended_at=datetime(2023, 6, 1, tzinfo=UTC))

    # when she lists them, then only the helper's
    everything = api.get("/api/v1/episodes/")
    only_helper = api.get("/api/v1/episodes/?agent=helper")

    # then they come newest first, and the filter keeps only the helper's
    assert everything.status_code == 200
    assert [e["id"] for e in everything.json()["results"]] == [str(new.id), str(helper.id), str(old.id)]
    assert [e["id"] for e in only_helper.json()["results"]] == [str(helper.id)]
    first = everything.json()["results"][0]
    assert first["session_id"] == str(new.session_id)
    assert (first["summary"], first["goal"], first["outcome"], first["entities"], first["tools_used"]) == (
        "new",
        "plan a trip",
        "booked",
        ["Lisbon"],
        ["search"],
    )


def test_episodes_with_a_nul_agent_filter_is_a_400(api, user):
    # given the database as it is
    before = db_snapshot()

    # when the episodes are filtered by an agent with a NUL byte
    response = api.get("/api/v1/episodes/?agent=%00")

    # then it is refused
    assert_error(response, 400, "invalid", "agent: NUL bytes are not allowed in text.")
    assert db_snapshot() == before
