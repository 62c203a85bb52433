"""Bad input to the turn endpoints: a 4xx with a JSON reason, never a 500, and nothing written."""

import json

import pytest
from django.conf import settings

from tests.factories import ChatSessionFactory, ConversationTurnFactory
from tests.support import assert_error, db_snapshot

OK_TURN = {"role": "user", "content": "hello"}


@pytest.fixture
def session(user):
    # an open session that already holds one turn, so "nothing written" also covers numbering
    session = ChatSessionFactory(owner=user)
    ConversationTurnFactory(session=session, sequence=1, content="first")
    session.turn_count = 1
    session.save()
    return session


def _url(session) -> str:
    return f"/api/v1/sessions/{session.id}/turns/"


@pytest.mark.parametrize(
    "body, message",
    [
        ({**OK_TURN, "colour": "red"}, "colour: Unknown field."),
        ({**OK_TURN, "session": "x", "sequence": 9}, "sequence: Unknown field."),
        ({"role": "user", "content": 123}, "content: Must be a string."),
        ({"role": "user", "content": ["a"]}, "content: Must be a string."),
        ({"role": "user", "content": None}, "content: This field may not be null."),
        ({"role": "user"}, "content: This field is required."),
        ({"content": "hi"}, "role: This field is required."),
        ({"role": "robot", "content": "hi"}, 'role: "robot" is not a valid choice.'),
        ({"role": 1, "content": "hi"}, 'role: "1" is not a valid choice.'),
        ({"role": "user", "content": "   "}, "content: This field may not be blank."),
        ({"role": "user", "content": "a\x00b"}, "content: NUL bytes are not allowed in text."),
        ({**OK_TURN, "speaker": "bo\x00b"}, "speaker: NUL bytes are not allowed in text."),
        ({**OK_TURN, "speaker": "s" * 101}, "speaker: Ensure this field has no more than 100 characters."),
        ({**OK_TURN, "metadata": [1]}, "metadata: Must be a JSON object."),
        ({**OK_TURN, "metadata": "x"}, "metadata: Must be a JSON object."),
        ({**OK_TURN, "metadata": {"k": "v\x00"}}, "metadata: NUL bytes are not allowed."),
        ({**OK_TURN, "metadata": {"k\x00": "v"}}, "metadata: NUL bytes are not allowed."),
        ({**OK_TURN, "metadata": {"deep": [{"x": ["\x00"]}]}}, "metadata: NUL bytes are not allowed."),
        ({**OK_TURN, "tool_calls": [{"arguments": {"q": "\x00"}}]}, "tool_calls: NUL bytes are not allowed."),
        ({**OK_TURN, "tool_error": "boom\x00"}, "tool_error: NUL bytes are not allowed in text."),
        ({**OK_TURN, "created_at": "yesterday"}, "created_at: Datetime has wrong format."),
        ({**OK_TURN, "created_at": 1700000000}, "created_at: Datetime has wrong format."),
        ({"turns": []}, "turns: This list may not be empty."),
        ({"turns": "abc"}, 'turns: Expected a list of items but got type "str".'),
        ({"turns": None}, "turns: This field may not be null."),
        ({"turns": [1]}, "turns: 0: Expected a JSON object."),
        ({"turns": [OK_TURN], "extra": 1}, "extra: Unknown field."),
        ({"turns": [OK_TURN, {"role": "user", "content": "ok\x00"}]}, "turns: 1: content: NUL bytes are not allowed"),
        ({"turns": [OK_TURN, OK_TURN, {"role": "bot", "content": "x"}]}, 'turns: 2: role: "bot" is not a valid'),
        ([OK_TURN], "Expected a JSON object."),
        ("a string", "Expected a JSON object."),
    ],
)
def test_bad_turn_is_a_400_with_its_reason_and_writes_nothing(api, session, body, message):
    # given the database as it is
    before = db_snapshot()

    # when a bad turn (or bulk) is posted
    response = api.post(_url(session), body, format="json")

    # then it is refused with the reason, and no turn, job or counter changed
    error = assert_error(response, 400, "invalid")
    assert error["message"].startswith(message), error["message"]
    assert db_snapshot() == before


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _turn_with(field: str, raw_value: str) -> str:
    """A turn's JSON body with one field given as raw JSON text."""
    return '{"role": "user", "content": "x", "' + field + '": ' + raw_value + "}"


@pytest.mark.parametrize(
    "raw, code, message",
    [
        (_turn_with("metadata", '{"\\ud800": 1}'), "invalid", "metadata: Surrogate characters are not allowed."),
        (_turn_with("metadata", '{"k": "\\udfff"}'), "invalid", "metadata: Surrogate characters are not allowed."),
        ('{"role": "user", "content": "\\ud800"}', "invalid", "content: Surrogate characters are not allowed"),
        (_turn_with("tool_calls", '["\\ud800"]'), "invalid", "tool_calls: Surrogate characters are not allowed."),
        (_turn_with("metadata", '{"a": 1e999}'), "invalid", "metadata: Value must be valid JSON."),
        (_turn_with("metadata", '{"a": ' + _nested(65) + "}"), "invalid", "metadata: Nested deeper than 64 levels."),
        (_turn_with("metadata", '{"a": ' + _nested(900) + "}"), "invalid", "metadata: Nested deeper than 64 levels."),
        (_turn_with("tool_calls", _nested(500)), "invalid", "tool_calls: Nested deeper than 64 levels."),
        (_turn_with("metadata", '{"a": ' + _nested(5000) + "}"), "parse_error", "nested too deeply"),
        (_nested(100_000), "parse_error", "JSON parse error - the body is nested too deeply."),
        (_turn_with("metadata", '{"n": 1' + "0" * 5000 + "}"), "parse_error", "JSON parse error"),
    ],
    ids=[
        "surrogate-key",
        "surrogate-value",
        "surrogate-content",
        "surrogate-tool-call",
        "infinite-number",
        "depth-65",
        "depth-900",
        "tool-calls-depth-500",
        "depth-5000",
        "body-depth-100000",
        "huge-integer",
    ],
)
def test_json_that_postgres_cannot_store_is_a_400_and_writes_nothing(api, session, raw, code, message):
    # given the database as it is
    before = db_snapshot()

    # when a turn whose JSON jsonb could not hold as given is posted
    response = api.post(_url(session), raw, content_type="application/json")

    # then it is refused with its reason (never a 500) and nothing is written
    assert_error(response, 400, code, message)
    assert db_snapshot() == before


def test_metadata_nested_64_levels_is_stored_as_given(api, session):
    # given metadata nested exactly to the limit
    metadata = {"a": 1}
    for _ in range(63):
        metadata = {"n": metadata}

    # when it is posted
    response = api.post(_url(session), {"role": "user", "content": "deep", "metadata": metadata}, format="json")

    # then it is stored and returned exactly
    assert response.status_code == 201
    assert response.json()["metadata"] == metadata


def test_over_long_content_is_a_400(api, session):
    # given content one character over the limit
    before = db_snapshot()
    content = "x" * (settings.MAX_CONTENT_CHARS + 1)

    # when it is posted
    response = api.post(_url(session), {"role": "user", "content": content}, format="json")

    # then it is refused and nothing is written
    limit = settings.MAX_CONTENT_CHARS
    assert_error(response, 400, "invalid", f"content: Ensure this field has no more than {limit} characters.")
    assert db_snapshot() == before


def test_content_at_the_limit_is_accepted(api, session):
    # when content of exactly the maximum length is posted
    content = "y" * settings.MAX_CONTENT_CHARS
    response = api.post(_url(session), {"role": "user", "content": content}, format="json")

    # then it is stored whole
    assert response.status_code == 201
    assert response.json()["content"] == content
    assert response.json()["sequence"] == 2


def test_bulk_over_the_limit_is_a_400_and_writes_nothing(api, session):
    # given one turn more than a bulk may hold
    before = db_snapshot()
    turns = [{"role": "user", "content": f"t{i}"} for i in range(settings.MAX_BULK_TURNS + 1)]

    # when the bulk is posted
    response = api.post(_url(session), {"turns": turns}, format="json")

    # then it is refused as a whole
    assert_error(
        response, 400, "invalid", f"turns: Ensure this field has no more than {settings.MAX_BULK_TURNS} elements."
    )
    assert db_snapshot() == before


def test_body_over_the_size_limit_is_a_413(api, session, settings):
    # given a small request size limit
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    before = db_snapshot()

    # when a body over it is posted
    response = api.post(_url(session), {"role": "user", "content": "z" * 4096}, format="json")

    # then it is refused as too large, and nothing is written
    assert_error(response, 413, "too_large", "Request body exceeds the size limit.")
    assert db_snapshot() == before


def test_body_under_the_size_limit_is_accepted(api, session, settings):
    # given the same small limit
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048

    # when a body under it is posted
    response = api.post(_url(session), {"role": "user", "content": "z" * 1000}, format="json")

    # then it is stored
    assert response.status_code == 201


@pytest.mark.parametrize("raw", ['{"role": "user", "content": ', "{bad json}", "[1, 2", '{"role": NaN}', "\x00"])
def test_malformed_json_is_a_400_parse_error(api, session, raw):
    # given the database as it is
    before = db_snapshot()

    # when a body that is not valid JSON is posted
    response = api.post(_url(session), raw, content_type="application/json")

    # then it is refused as unparseable
    assert_error(response, 400, "parse_error", "JSON parse error")
    assert db_snapshot() == before


def test_form_encoded_body_is_a_415(api, session):
    # given the database as it is
    before = db_snapshot()

    # when a form-encoded body is posted
    response = api.post(_url(session), "role=user&content=hi", content_type="application/x-www-form-urlencoded")

    # then only JSON is accepted
    assert_error(response, 415, "unsupported_media_type", "application/x-www-form-urlencoded")
    assert db_snapshot() == before


@pytest.mark.parametrize("path", ["not-a-uuid", "123", "00000000-0000-0000-0000-00000000000g"])
def test_invalid_session_id_in_the_path_is_a_json_404(api, session, path):
    # given the database as it is
    before = db_snapshot()

    # when turns are posted to a path whose id is not a UUID
    response = api.post(f"/api/v1/sessions/{path}/turns/", OK_TURN, format="json")
    listing = api.get(f"/api/v1/sessions/{path}/turns/")
    ending = api.post(f"/api/v1/sessions/{path}/end/")
    detail = api.get(f"/api/v1/sessions/{path}/")

    # then each is a 404 with the error shape
    for r in (response, listing, ending, detail):
        assert_error(r, 404, "not_found", "Not found.")
    assert db_snapshot() == before


def test_unknown_session_is_a_404(api, session):
    # given the database as it is
    before = db_snapshot()

    # when turns are posted to a well-formed id no session has
    response = api.post("/api/v1/sessions/00000000-0000-4000-8000-000000000000/turns/", OK_TURN, format="json")

    # then it is a 404
    assert_error(response, 404, "not_found")
    assert db_snapshot() == before


@pytest.mark.parametrize("body", [OK_TURN, {"turns": [OK_TURN, OK_TURN]}])
def test_turns_posted_to_an_ended_session_are_a_409(api, user, body):
    # given an ended session with one turn
    session = ChatSessionFactory(owner=user, status="ended", turn_count=1)
    ConversationTurnFactory(session=session, sequence=1)
    before = db_snapshot()

    # when a turn (or a bulk) is posted to it
    response = api.post(_url(session), body, format="json")

    # then it is a conflict with its reason, and nothing is written (not even an embedding)
    assert_error(response, 409, "session_ended", "This session has ended")
    assert db_snapshot() == before


def test_turn_posted_to_an_ended_session_is_refused_by_the_service_too(user):
    # given an ended session
    from memory_project.exceptions import Conflict
    from sessions.models import ConversationTurn
    from sessions.services.sessions import turn_append_many

    session = ChatSessionFactory(owner=user, status="ended")

    # when the service is called directly
    with pytest.raises(Conflict) as raised:
        turn_append_many(session=session, turns=[{"role": "user", "content": "late"}])

    # then it refuses under the lock and stores nothing
    assert raised.value.code == "session_ended"
    assert ConversationTurn.objects.filter(session=session).count() == 0


def test_error_response_is_json_even_for_a_huge_bad_bulk(api, session):
    # given a bulk of the maximum size whose last turn is bad
    turns = [{"role": "user", "content": "ok"}] * (settings.MAX_BULK_TURNS - 1) + [{"role": "user", "content": 5}]
    before = db_snapshot()

    # when it is posted
    response = api.post(_url(session), json.dumps({"turns": turns}), content_type="application/json")

    # then the reason names the bad turn and nothing is written
    assert_error(response, 400, "invalid", f"turns: {settings.MAX_BULK_TURNS - 1}: content: Must be a string.")
    assert db_snapshot() == before
