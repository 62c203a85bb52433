"""The OpenAPI schema is true to the responses (issue 14): paginated lists, every error status with the
one error shape, each response's content type, and real components instead of free-form objects."""

import io
import re

import pytest
from django.core.management import call_command

from memories.drafts import MemoryDraft
from memories.services.actions import memory_forget
from memories.services.memories import memory_create

pytestmark = pytest.mark.django_db

PAGINATED = {
    "/api/v1/memories/": "MemoryOutput",
    "/api/v1/memories/{memory_id}/history/": "MemoryEventOutput",
    "/api/v1/sessions/": "SessionOutput",
    "/api/v1/sessions/{session_id}/turns/": "TurnOutput",
    "/api/v1/episodes/": "EpisodeOutput",
    "/api/v1/lifecycle/runs/": "LifecycleRunOutput",
    "/api/v1/import/jobs/": "ImportJobOutput",
    "/api/v1/webhooks/": "WebhookOutput",
    "/api/v1/webhooks/{webhook_id}/deliveries/": "WebhookDeliveryOutput",
    "/api/v1/erasure/receipts/": "ErasureReceipt",
    "/api/v1/access-log/": "QueryLogOutput",
    "/api/v1/attachments/": "AttachmentOutput",
    "/api/v1/groups/": "GroupOutput",
}
METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture
def schema(client):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def _ref(content: dict) -> str:
    return content["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]


def _operations(schema):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield path, method, operation


def test_every_paginated_list_is_documented_as_a_page_of_results(schema):
    for path, component in PAGINATED.items():
        operation = schema["paths"][path]["get"]
        page = _ref(operation["responses"]["200"]["content"])
        assert page == f"Paginated{component}List", path
        properties = schema["components"]["schemas"][page]["properties"]
        assert set(properties) == {"count", "next", "previous", "results"}
        assert properties["results"]["items"]["$ref"] == f"#/components/schemas/{component}"
        assert {p["name"] for p in operation["parameters"] if p["in"] == "query"} >= {"page", "page_size"}, path


def test_no_operation_answers_a_bare_array(schema):
    # every list of the API is paginated, so none may be documented as an array (a view that
    # paginates by hand must declare pagination_class)
    bare = [
        (method, path)
        for path, method, operation in _operations(schema)
        for status, response in operation["responses"].items()
        if response.get("content", {}).get("application/json", {}).get("schema", {}).get("type") == "array"
    ]
    assert bare == []


def test_every_operation_documents_its_error_statuses_with_the_one_error_shape(schema):
    error = schema["components"]["schemas"]["Error"]
    assert error["required"] == ["error"]
    body = schema["components"]["schemas"][error["properties"]["error"]["$ref"].rsplit("/", 1)[1]]
    assert set(body["properties"]) == {"code", "message", "details"}
    checked = 0
    for path, method, operation in _operations(schema):
        if not path.startswith("/api/v1/"):
            continue
        expected = {"400", "401", "403", "404", "414", "429", "503"}
        if method in ("post", "put", "patch"):
            expected |= {"413", "415"}
        assert expected <= set(operation["responses"]), (method, path)
        for status in expected:
            assert _ref(operation["responses"][status]["content"]) == "Error", (method, path, status)
        checked += 1
    assert checked >= 46  # the 46 operations of issue 14's count, and any added since


def test_conflicts_are_documented_where_they_happen(schema):
    paths = schema["paths"]
    for path, method in [
        ("/api/v1/sessions/{session_id}/turns/", "post"),
        ("/api/v1/memory-md/", "put"),
        ("/api/v1/learnings-md/", "put"),
        ("/api/v1/groups/", "post"),
        ("/api/v1/groups/{group_id}/", "patch"),
    ]:
        assert _ref(paths[path][method]["responses"]["409"]["content"]) == "Error"
    assert _ref(paths["/api/v1/lifecycle/run/"]["post"]["responses"]["409"]["content"]) == "LifecycleRunOutput"
    assert "409" not in paths["/api/v1/metrics/"]["get"]["responses"]


def test_export_documents_the_content_type_of_each_format(schema, api):
    documented = schema["paths"]["/api/v1/export/"]["get"]["responses"]["200"]["content"]
    assert set(documented) == {"application/json", "application/x-ndjson", "text/markdown"}
    for fmt in ("memory-md", "learnings-md", "memory-json", "user-md", "jsonl"):
        response = api.get(f"/api/v1/export/?format={fmt}")
        assert response.status_code == 200
        assert response["Content-Type"].split(";")[0] in documented, fmt


def test_context_metrics_tools_and_compat_responses_are_components_not_free_form(schema):
    paths = schema["paths"]
    for path, method, status, component in [
        ("/api/v1/context/", "get", "200", "ContextOutput"),
        ("/api/v1/metrics/", "get", "200", "MetricsOutput"),
        ("/api/v1/tools/", "get", "200", "ToolListOutput"),
        ("/api/v1/tools/{name}/", "post", "200", "ToolResult"),
        ("/api/v1/memory/entries/", "get", "200", "CompatEntriesOutput"),
        ("/api/v1/memory/entries/", "post", "201", "CompatEntryWriteOutput"),
        ("/api/v1/memory/search/", "post", "200", "CompatSearchOutput"),
        ("/api/v1/memory/procedural/", "get", "200", "CompatProceduralOutput"),
        ("/api/v1/memory/rolling-summary/", "get", "200", "CompatRollingSummaryOutput"),
        ("/api/v1/memory/consolidate/", "post", "200", "CompatLifecycleOutput"),
    ]:
        assert _ref(paths[path][method]["responses"][status]["content"]) == component, path


def test_the_fields_of_context_and_metrics_responses_are_the_documented_ones(schema, api):
    components = schema["components"]["schemas"]
    for path, component in [("/api/v1/context/", "ContextOutput"), ("/api/v1/metrics/", "MetricsOutput")]:
        body = api.get(path).json()
        assert set(body) == set(components[component]["properties"]), path
        assert set(components[component]["required"]) == set(body), path


def test_status_enums_have_one_name_each(schema):
    names = set(schema["components"]["schemas"])
    assert {"MemoryStatusEnum", "CategoryEnum", "Seed004CategoryEnum"} <= names
    # a collision spectacular resolved itself ends in three characters of a hash: "StatusE9cEnum"
    hashed = re.compile(r"[0-9A-F][0-9a-f]{2}Enum$")
    assert [name for name in names if hashed.search(name) and any(c.isdigit() for c in name[-7:-4])] == []


def test_schema_generation_has_no_warnings():
    out, err = io.StringIO(), io.StringIO()

    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out, stderr=err)

    assert "Warning" not in err.getvalue()


def test_status_all_lists_every_status_forgotten_included(api, user):
    # given an active and a forgotten memory
    kept = memory_create(owner=user, draft=MemoryDraft(content="User likes tea"), actor="test")
    gone = memory_forget(
        memory=memory_create(owner=user, draft=MemoryDraft(content="User likes coffee"), actor="test"), actor="test"
    )

    # when the list is filtered by status=all, and without a status
    everything = api.get("/api/v1/memories/?status=all").json()
    default = api.get("/api/v1/memories/").json()

    # then all lists both, the default leaves the forgotten one out
    assert sorted(m["id"] for m in everything["results"]) == sorted([str(kept.pk), str(gone.pk)])
    assert [m["id"] for m in default["results"]] == [str(kept.pk)]


def test_fields_a_response_leaves_out_are_not_required(schema):
    # POST /memories/ names a superseded memory only when there was one
    components = schema["components"]["schemas"]
    assert "previous_id" not in components["MemoryWriteOutput"]["required"]
    assert "previous_id" not in components["CompatEntryWriteOutput"]["required"]
    assert "action" in components["MemoryWriteOutput"]["required"]
