"""Bad input to the memory, search, context and tool endpoints: a 4xx with a reason, nothing written."""

import pytest
from django.conf import settings

from tests.factories import MemoryFactory
from tests.support import assert_error, db_snapshot


@pytest.fixture
def memory(user):
    return MemoryFactory(owner=user, content="Lives in Porto")


# --- POST /memories/ ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "content: This field is required."),
        ({"content": 123}, "content: Must be a string."),
        ({"content": None}, "content: This field may not be null."),
        ({"content": ""}, "content: This field may not be blank."),
        ({"content": "a\x00b"}, "content: NUL bytes are not allowed in text."),
        ({"content": "x", "owner": "bob"}, "owner: Unknown field."),
        ({"content": "x", "id": "5"}, "id: Unknown field."),
        ({"content": "x", "status": "active"}, "status: Unknown field."),
        ({"content": "x", "category": "gossip"}, 'category: "gossip" is not a valid choice.'),
        ({"content": "x", "retention": "forever"}, 'retention: "forever" is not a valid choice.'),
        ({"content": "x", "importance": 1.5}, "importance: importance must be between 0 and 1"),
        ({"content": "x", "importance": -0.1}, "importance: importance must be between 0 and 1"),
        ({"content": "x", "importance": "huge"}, "importance: importance must be a number in [0, 1] or one of"),
        ({"content": "x", "importance": True}, "importance: Must be a number between 0 and 1 or high / medium / low."),
        ({"content": "x", "importance": [0.5]}, "importance: Must be a number between 0 and 1"),
        ({"content": "x", "confidence": 2}, "confidence: Ensure this value is less than or equal to 1."),
        ({"content": "x", "confidence": "NaN"}, "confidence: A valid number is required."),
        ({"content": "x", "structured_data": [1]}, "structured_data: Must be a JSON object."),
        ({"content": "x", "structured_data": {"k": "\x00"}}, "structured_data: NUL bytes are not allowed."),
        ({"content": "x", "subject": "s\x00"}, "subject: NUL bytes are not allowed in text."),
        ({"content": "x", "agent": "a" * 101}, "agent: Ensure this field has no more than 100 characters."),
        ({"content": "x", "observed_at": "last week"}, "observed_at: Datetime has wrong format."),
        ({"content": "x", "pinned": "maybe"}, "pinned: Must be a valid boolean."),
        (["content"], "Expected a JSON object."),
    ],
)
def test_create_memory_with_bad_input_is_a_400_and_writes_nothing(api, memory, body, message):
    # given the database as it is
    before = db_snapshot()

    # when a bad memory is posted
    response = api.post("/api/v1/memories/", body, format="json")

    # then it is refused with its reason and nothing is written
    error = assert_error(response, 400, "invalid")
    assert error["message"].startswith(message), error["message"]
    assert db_snapshot() == before


def test_create_memory_with_infinite_importance_is_a_400(api, memory):
    # given the database as it is (1e999 parses as infinity)
    before = db_snapshot()

    # when a memory with an out-of-range float literal is posted
    response = api.post("/api/v1/memories/", '{"content": "x", "importance": 1e999}', content_type="application/json")

    # then it is refused
    assert_error(response, 400, "invalid", "importance: importance must be between 0 and 1")
    assert db_snapshot() == before


def test_create_memory_with_over_long_content_is_a_400(api, memory):
    # given the database as it is
    before = db_snapshot()

    # when content one character over the limit is posted
    response = api.post("/api/v1/memories/", {"content": "m" * (settings.MAX_CONTENT_CHARS + 1)}, format="json")

    # then it is refused
    limit = settings.MAX_CONTENT_CHARS
    assert_error(response, 400, "invalid", f"content: Ensure this field has no more than {limit} characters.")
    assert db_snapshot() == before


def test_create_memory_over_the_body_size_limit_is_a_413(api, memory, settings):
    # given a small request size limit
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    before = db_snapshot()

    # when a bigger body is posted
    response = api.post("/api/v1/memories/", {"content": "b" * 2048}, format="json")

    # then it is refused as too large
    assert_error(response, 413, "too_large", "Request body exceeds the size limit.")
    assert db_snapshot() == before


@pytest.mark.parametrize(
    "raw, message",
    [
        (
            '{"content": "x", "structured_data": {"\\ud800": 1}}',
            "structured_data: Surrogate characters are not allowed.",
        ),
        ('{"content": "x", "structured_data": {"a": ' + "[" * 100 + "]" * 100 + "}}", "structured_data: Nested deeper"),
        ('{"content": "x", "structured_data": {"a": -1e999}}', "structured_data: Value must be valid JSON."),
    ],
)
def test_create_memory_with_unstorable_structured_data_is_a_400(api, memory, raw, message):
    # given the database as it is
    before = db_snapshot()

    # when structured data jsonb could not hold as given is posted
    response = api.post("/api/v1/memories/", raw, content_type="application/json")

    # then it is refused with its reason
    assert_error(response, 400, "invalid", message)
    assert db_snapshot() == before


@pytest.mark.parametrize("path", ["/api/v1/memories/", "/api/v1/search/", "/api/v1/tools/memory_write/"])
def test_body_nested_too_deeply_is_a_400(api, memory, path):
    # given the database as it is
    before = db_snapshot()

    # when a body nested far deeper than any parser allows is posted
    response = api.post(path, '{"content": ' + "[" * 50_000 + "]" * 50_000 + "}", content_type="application/json")

    # then it is refused as unparseable, not a crash
    assert_error(response, 400, "parse_error", "nested too deeply")
    assert db_snapshot() == before


@pytest.mark.parametrize("raw", ["{", '{"content": "x",}', "null x", '{"content": Infinity}'])
def test_create_memory_with_malformed_json_is_a_400(api, memory, raw):
    # given the database as it is
    before = db_snapshot()

    # when malformed JSON is posted
    response = api.post("/api/v1/memories/", raw, content_type="application/json")

    # then it is refused as unparseable
    assert_error(response, 400, "parse_error", "JSON parse error")
    assert db_snapshot() == before


# --- PATCH /memories/{id}/ ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "Nothing to update: send at least one field."),
        ({"agent": "helper"}, "agent: Unknown field."),
        ({"owner": 2}, "owner: Unknown field."),
        ({"version": 9}, "version: Unknown field."),
        ({"content": 5}, "content: Must be a string."),
        ({"content": "\x00"}, "content: NUL bytes are not allowed in text."),
        ({"content": "  "}, "content: This field may not be blank."),
        ({"status": "deleted"}, 'status: "deleted" is not a valid choice.'),
        ({"category": "gossip"}, 'category: "gossip" is not a valid choice.'),
        ({"strength": 1.01}, "strength: Ensure this value is less than or equal to 1."),
        ({"strength": "strong"}, "strength: A valid number is required."),
        ({"importance": 2}, "importance: importance must be between 0 and 1"),
        ({"expires_at": "soon"}, "expires_at: Datetime has wrong format."),
        ({"structured_data": "x"}, "structured_data: Must be a JSON object."),
        ({"predicate": "p\x00"}, "predicate: NUL bytes are not allowed in text."),
        ([{"content": "x"}], "Expected a JSON object."),
    ],
)
def test_patch_memory_with_bad_input_is_a_400_and_writes_nothing(api, memory, body, message):
    # given the database as it is
    before = db_snapshot()

    # when a bad patch is sent
    response = api.patch(f"/api/v1/memories/{memory.id}/", body, format="json")

    # then it is refused with its reason and nothing is written
    error = assert_error(response, 400, "invalid")
    assert error["message"].startswith(message), error["message"]
    assert db_snapshot() == before


def test_patch_with_over_long_content_is_a_400(api, memory):
    # given the database as it is
    before = db_snapshot()

    # when a patch sets content over the limit
    response = api.patch(
        f"/api/v1/memories/{memory.id}/", {"content": "p" * (settings.MAX_CONTENT_CHARS + 1)}, format="json"
    )

    # then it is refused
    assert_error(response, 400, "invalid", "content: Ensure this field has no more than")
    assert db_snapshot() == before


# --- GET /memories/ filters --------------------------------------------------------------------


@pytest.mark.parametrize(
    "query, message",
    [
        ("category=gossip", 'category: "gossip" is not a valid choice.'),
        ("status=deleted", 'status: "deleted" is not a valid choice.'),
        ("source=rumour", 'source: "rumour" is not a valid choice.'),
        ("ordering=owner", 'ordering: "owner" is not a valid choice.'),
        ("q=%00", "q: Null characters are not allowed."),
        ("agent=%00", "agent: Null characters are not allowed."),
        ("q=" + "q" * 501, "q: Ensure this field has no more than 500 characters."),
    ],
)
def test_list_memories_with_a_bad_filter_is_a_400(api, memory, query, message):
    # given the database as it is
    before = db_snapshot()

    # when the list is filtered with a bad value
    response = api.get(f"/api/v1/memories/?{query}")

    # then it is refused with its reason
    error = assert_error(response, 400, "invalid")
    assert error["message"] == message
    assert db_snapshot() == before


@pytest.mark.parametrize("query", ["page=0", "page=99", "page=abc", "page=-1"])
def test_list_memories_out_of_range_page_is_a_404(api, memory, query):
    # when a page that does not exist is asked
    response = api.get(f"/api/v1/memories/?{query}")

    # then it is a 404 with a reason
    assert_error(response, 404, "not_found", "Invalid page.")


# --- POST /search/ -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "query: This field is required."),
        ({"query": ""}, "query: This field may not be blank."),
        ({"query": 5}, "query: Must be a string."),
        ({"query": "a\x00b"}, "query: NUL bytes are not allowed in text."),
        ({"query": "q" * 4001}, "query: Ensure this field has no more than 4000 characters."),
        ({"query": "x", "top_k": 0}, "top_k: Ensure this value is greater than or equal to 1."),
        ({"query": "x", "top_k": -3}, "top_k: Ensure this value is greater than or equal to 1."),
        ({"query": "x", "top_k": "x"}, "top_k: A valid integer is required."),
        ({"query": "x", "top_k": 2.5}, "top_k: A valid integer is required."),
        ({"query": "x", "top_k": None}, "top_k: This field may not be null."),
        ({"query": "x", "scope": "everything"}, 'scope: "everything" is not a valid choice.'),
        ({"query": "x", "categories": "fact"}, 'categories: Expected a list of items but got type "str".'),
        ({"query": "x", "categories": ["gossip"]}, 'categories: 0: "gossip" is not a valid choice.'),
        ({"query": "x", "include_archived": "maybe"}, "include_archived: Must be a valid boolean."),
        ({"query": "x", "agent": "\x00"}, "agent: NUL bytes are not allowed in text."),
        ({"query": "x", "since": "yesterday"}, "since: Datetime has wrong format."),
        ({"query": "x", "limit": 5}, "limit: Unknown field."),
        ([{"query": "x"}], "Expected a JSON object."),
    ],
)
def test_search_with_bad_input_is_a_400_and_writes_nothing(api, memory, body, message):
    # given the database as it is
    before = db_snapshot()

    # when a bad search is posted
    response = api.post("/api/v1/search/", body, format="json")

    # then it is refused with its reason
    error = assert_error(response, 400, "invalid")
    assert error["message"].startswith(message), error["message"]
    assert db_snapshot() == before


def test_search_top_k_over_the_maximum_is_a_400(api, memory):
    # when top_k is one over the configured maximum
    response = api.post("/api/v1/search/", {"query": "x", "top_k": settings.MAX_TOP_K + 1}, format="json")

    # then it is refused, naming the maximum
    assert_error(response, 400, "invalid", f"top_k: Ensure this value is less than or equal to {settings.MAX_TOP_K}.")


def test_search_top_k_at_the_bounds_is_accepted(api, memory):
    # when top_k is exactly 1 and exactly the maximum
    low = api.post("/api/v1/search/", {"query": "Porto", "top_k": 1}, format="json")
    high = api.post("/api/v1/search/", {"query": "Porto", "top_k": settings.MAX_TOP_K}, format="json")

    # then both are served
    assert low.status_code == high.status_code == 200
    assert len(low.json()["results"]) == 1


def test_search_with_malformed_json_is_a_400(api, memory):
    # when the body is not JSON
    response = api.post("/api/v1/search/", '{"query": ', content_type="application/json")

    # then it is refused as unparseable
    assert_error(response, 400, "parse_error", "JSON parse error")


def test_search_get_is_a_405(api, memory):
    # when search is called with GET
    response = api.get("/api/v1/search/?query=x")

    # then the method is refused in the error shape
    assert_error(response, 405, "method_not_allowed", 'Method "GET" not allowed.')


# --- GET /context/ -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query, message",
    [
        ("query=%00", "query: NUL bytes are not allowed in text."),
        ("agent=%00", "agent: NUL bytes are not allowed in text."),
        ("max_tokens=5", "max_tokens: Ensure this value is greater than or equal to 100."),
        ("max_tokens=lots", "max_tokens: A valid integer is required."),
        ("session_id=abc", "session_id: Must be a valid UUID."),
        ("colour=red", "colour: Unknown field."),
    ],
)
def test_context_with_bad_parameters_is_a_400_and_writes_nothing(api, memory, query, message):
    # given the database as it is
    before = db_snapshot()

    # when the context is asked with a bad parameter
    response = api.get(f"/api/v1/context/?{query}")

    # then it is refused and not even a scratchpad is created
    error = assert_error(response, 400, "invalid")
    assert error["message"] == message
    assert db_snapshot() == before


def test_context_with_an_unknown_session_is_a_404(api, memory):
    # when the context is asked for a session id that does not exist
    response = api.get("/api/v1/context/?session_id=00000000-0000-4000-8000-000000000000")

    # then it is a 404
    assert_error(response, 404, "not_found")


# --- POST /tools/{name}/ -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, body, message",
    [
        ("search_memory", {}, "query: This field is required."),
        ("search_memory", {"query": "x", "top_k": 0}, "top_k: Ensure this value is greater than or equal to 1."),
        ("search_memory", {"query": "x", "top_k": 51}, "top_k: Ensure this value is less than or equal to 50."),
        ("search_memory", {"query": "x", "categories": ["gossip"]}, 'categories: 0: "gossip" is not a valid choice.'),
        ("search_memory", {"query": "x", "scope": "all"}, "scope: Unknown field."),
        ("search_conversation_traces", {"query": "\x00"}, "query: NUL bytes are not allowed in text."),
        ("memory_write", {}, "content: This field is required."),
        ("memory_write", {"content": 7}, "content: Must be a string."),
        ("memory_write", {"content": "x", "importance": 3}, "importance: Ensure this value is less than or equal"),
        ("memory_write", {"content": "x", "category": "gossip"}, 'category: "gossip" is not a valid choice.'),
        ("memory_write", {"content": "x", "owner": "bob"}, "owner: Unknown field."),
        ("memory_forget", {"query": ""}, "query: This field may not be blank."),
        ("memory_forget", [], "The body must be a JSON object with the tool's arguments."),
    ],
)
def test_tool_with_bad_arguments_is_a_400_and_writes_nothing(api, memory, name, body, message):
    # given the database as it is
    before = db_snapshot()

    # when a tool is run with bad arguments
    response = api.post(f"/api/v1/tools/{name}/", body, format="json")

    # then it is refused with its reason
    error = assert_error(response, 400, "invalid")
    assert error["message"].startswith(message), error["message"]
    assert db_snapshot() == before


@pytest.mark.parametrize(
    "query, message",
    [("agent=%00", "agent: NUL bytes are not allowed in text."), ("agent=" + "a" * 101, "agent: Ensure this field")],
)
@pytest.mark.parametrize("name", ["search_memory", "search_conversation_traces", "memory_write", "memory_forget"])
def test_tool_with_a_bad_agent_parameter_is_a_400(api, memory, name, query, message):
    # given the database as it is
    before = db_snapshot()
    arguments = {"content": "A new fact"} if name == "memory_write" else {"query": "Porto"}

    # when the tool is run for an impossible agent
    response = api.post(f"/api/v1/tools/{name}/?{query}", arguments, format="json")

    # then it is refused and nothing is written
    error = assert_error(response, 400, "invalid")
    assert error["message"].startswith(message)
    assert db_snapshot() == before


def test_unknown_tool_is_a_404(api, memory):
    # given the database as it is
    before = db_snapshot()

    # when a tool that does not exist is run
    response = api.post("/api/v1/tools/rm_rf/", {"query": "x"}, format="json")

    # then it is a 404 naming the known tools
    assert_error(response, 404, "not_found", "Unknown tool 'rm_rf'.", "search_memory")
    assert db_snapshot() == before


def test_tool_with_malformed_json_is_a_400(api, memory):
    # when a tool body is not JSON
    response = api.post("/api/v1/tools/memory_write/", "{'content': 'x'}", content_type="application/json")

    # then it is refused as unparseable
    assert_error(response, 400, "parse_error", "JSON parse error")
