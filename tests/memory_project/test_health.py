"""Health probes, the OpenAPI schema and the interactive docs (served without any CDN)."""

import re

import pytest


def test_healthz_is_200_without_credentials(client, db):
    # when the liveness probe is called without a key
    response = client.get("/healthz")

    # then it answers ok
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_reports_the_database_ok(client, db):
    # when the readiness probe is called
    response = client.get("/readyz")

    # then the database (with pgvector) is ready
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ready"
    assert body["checks"]["database"] == "ok"
    assert "broker" in body["checks"]


def test_schema_is_served_and_describes_the_api(client, db):
    # when the OpenAPI schema is fetched as JSON
    response = client.get("/api/schema/?format=json")

    # then it is OpenAPI 3 and lists the contract's paths
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    for path in [
        "/api/v1/sessions/",
        "/api/v1/sessions/{session_id}/",
        "/api/v1/sessions/{session_id}/turns/",
        "/api/v1/sessions/{session_id}/end/",
        "/api/v1/memories/",
        "/api/v1/memories/{memory_id}/",
        "/api/v1/memories/{memory_id}/history/",
        "/api/v1/search/",
        "/api/v1/context/",
        "/api/v1/episodes/",
        "/api/v1/scratchpad/",
        "/api/v1/metrics/",
        "/api/v1/tools/",
        "/api/v1/tools/{name}/",
    ]:
        assert path in schema["paths"], path
    turns_post = schema["paths"]["/api/v1/sessions/{session_id}/turns/"]["post"]
    assert "requestBody" in turns_post


def test_schema_default_format_is_yaml(client, db):
    # when the schema is fetched without a format
    response = client.get("/api/schema/")

    # then it is served (YAML)
    assert response.status_code == 200
    assert response.content.startswith(b"openapi: 3.")


def test_docs_page_references_only_local_static_assets(client, db):
    # when the interactive docs are fetched
    response = client.get("/api/docs/")

    # then the page loads nothing from a CDN: every asset is under /static/
    assert response.status_code == 200
    html = response.content.decode()
    assert re.findall(r"https?://", html) == []
    assert re.findall(r"//cdn|unpkg|jsdelivr", html) == []
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets, "the docs page references its assets"
    assert all(a.startswith("/static/") for a in assets), assets
    assert "/api/schema/" in html


def test_docs_static_assets_are_served(client, db):
    # given the assets the docs page references
    html = client.get("/api/docs/").content.decode()
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', html)

    # when each is fetched
    # then each is served locally
    for asset in assets:
        response = client.get(asset)
        assert response.status_code == 200, asset


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/api/schema/", "/api/docs/"])
def test_probe_and_doc_paths_need_no_key(client, db, path):
    # when called without credentials, then they are served
    assert client.get(path).status_code == 200
