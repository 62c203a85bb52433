"""Search by meaning with the real offline model: a paraphrase sharing no content word still finds it."""

import pytest

from tests.factories import ChatSessionFactory, ConversationTurnFactory, MemoryFactory

pytestmark = pytest.mark.slow


def test_turn_is_found_by_a_paraphrase_with_no_shared_content_word(local_embedder, api, user):
    # given turns about unrelated things, one about a new puppy
    session = ChatSessionFactory(owner=user)
    target = ConversationTurnFactory(session=session, sequence=1, content="We adopted a small puppy last week")
    for i, content in enumerate(
        [
            "The quarterly budget spreadsheet is due on Friday",
            "My favourite programming language is Rust",
            "The train to Porto leaves at nine",
            "I need to renew my passport before the summer",
        ],
        start=2,
    ):
        ConversationTurnFactory(session=session, sequence=i, content=content)

    # when alice searches with a paraphrase that shares none of its content words
    response = api.post(
        "/api/v1/search/", {"query": "recently got a young dog", "scope": "turns", "top_k": 5}, format="json"
    )

    # then that turn comes first
    assert response.status_code == 200
    results = response.json()["results"]
    assert results[0]["id"] == str(target.id)
    assert results[0]["scores"]["lexical_rank"] is None


def test_memory_is_found_by_a_paraphrase_with_no_shared_content_word(local_embedder, api, user):
    # given memories about unrelated things, one about a food allergy
    target = MemoryFactory(owner=user, content="The user is allergic to peanuts")
    for content in [
        "The user lives in Lisbon",
        "The user works as a nurse on night shifts",
        "The user plays the cello in an orchestra",
    ]:
        MemoryFactory(owner=user, content=content)

    # when alice searches with a paraphrase
    response = api.post("/api/v1/search/", {"query": "which nuts must they avoid eating", "top_k": 4}, format="json")

    # then that memory comes first, found by meaning alone
    assert response.status_code == 200
    results = response.json()["results"]
    assert results[0]["id"] == str(target.id)
    assert results[0]["scores"]["lexical_rank"] is None
