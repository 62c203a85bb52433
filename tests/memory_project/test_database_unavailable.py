from django.db import OperationalError

from memories.api import views


def test_database_outage_is_a_503_with_retry_after(api, monkeypatch):
    # given the database refuses connections (e.g. "too many clients")
    def refuse(**kwargs):
        raise OperationalError("FATAL: sorry, too many clients already")

    monkeypatch.setattr(views, "memory_search_run", refuse)

    # when a search comes in
    response = api.post("/api/v1/search/", {"query": "tea"}, format="json")

    # then the client is told to retry, in the one error shape
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json() == {
        "error": {"code": "unavailable", "message": "The database is unavailable; retry shortly.", "details": None}
    }
