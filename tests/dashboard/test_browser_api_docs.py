"""The interactive API docs (/api/docs/, Swagger UI served from this service) in Chromium: every
operation of the schema listed, a paginated list shown as a page of results with its error
statuses, nothing fetched from elsewhere and no script error (issue 14)."""

import json
import urllib.request

import pytest

from tests.dashboard.browser import Watch

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_the_docs_list_every_operation_with_pages_and_error_statuses(server, browser):
    with urllib.request.urlopen(f"{server.base}/api/schema/?format=json", timeout=30) as response:
        schema = json.load(response)
    operations = sum(
        1 for item in schema["paths"].values() for method in item if method in {"get", "post", "put", "patch", "delete"}
    )
    watch = Watch(server.base)
    page = watch.attach(browser.new_page())

    page.goto(f"{server.base}/api/docs/")
    page.wait_for_selector(".opblock")

    assert page.locator(".opblock").count() == operations
    listing = page.locator(".opblock-get", has=page.locator("[data-path='/api/v1/memories/']"))
    listing.locator(".opblock-summary").click()
    responses = listing.locator(".responses-table .response")
    responses.first.wait_for()
    codes = responses.evaluate_all("rows => rows.map(row => row.getAttribute('data-code'))")
    assert codes == ["200", "400", "401", "403", "404", "414", "429", "503"]
    example = listing.locator(".response[data-code='200'] .microlight").first.inner_text()
    assert set(json.loads(example)) == {"count", "next", "previous", "results"}
    watch.check()
