"""A 400 that quotes what the client sent is rendered even when that holds a lone surrogate (JSON
"\\ud800"): it was a 500 while the error body was encoded."""

import pytest

from memories.models import Memory
from sessions.models import ConversationTurn
from tests.factories import ChatSessionFactory

pytestmark = pytest.mark.django_db

CASES = {
    "an unknown field's name": ("/api/v1/memories/", '{"content": "x", "\\ud800": 1}', "\\ud800"),
    "a category that is no choice": ("/api/v1/memories/", '{"content": "x", "category": "\\ud800"}', "\\ud800"),
    "a search scope that is no choice": ("/api/v1/search/", '{"query": "x", "scope": "\\udfff"}', "\\udfff"),
    "a listed category that is no choice": ("/api/v1/search/", '{"query": "x", "categories": ["\\udabc"]}', "\\udabc"),
}


@pytest.mark.parametrize("path,body,escape", CASES.values(), ids=CASES.keys())
def test_an_error_quoting_a_lone_surrogate_is_a_400_showing_its_escape(api, path, body, escape):
    response = api.post(path, body, content_type="application/json")

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert escape in error["message"] or escape in str(error["details"])
    assert Memory.objects.count() == 0


def test_a_turn_with_an_unknown_surrogate_field_is_refused_and_nothing_is_stored(user, api):
    session = ChatSessionFactory(owner=user)

    response = api.post(
        f"/api/v1/sessions/{session.pk}/turns/",
        '{"role": "user", "content": "hi", "\\ud800": true}',
        content_type="application/json",
    )

    assert response.status_code == 400, response.content
    assert response.json()["error"]["details"] == {"\\ud800": ["Unknown field."]}
    assert ConversationTurn.objects.count() == 0
