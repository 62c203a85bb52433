"""A dated fact keeps its absolute date through session end, so temporal questions find it."""

from datetime import UTC, datetime

from memories.models import Memory
from memories.selectors.retrieval import memory_search
from tests.engine import conversation, end_and_consolidate

MONDAY = datetime(2023, 5, 8, 9, 15, tzinfo=UTC)


def test_last_saturday_is_stored_as_its_date_and_found_by_a_when_question(user):
    # given a conversation on Monday 2023-05-08 telling of an adoption "last Saturday" and other news
    session = conversation(
        user,
        "user: We adopted a border collie named Biscuit last Saturday!",
        "assistant: Congratulations! Border collies are clever.",
        "user: I'm allergic to penicillin.",
        "user: My favourite cuisine is Thai.",
        start=MONDAY,
    )

    # when the session ends and is consolidated
    end_and_consolidate(session)

    # then the memory says the day it happened, in its text and its structured data
    memory = Memory.objects.get(owner=user, content__contains="Biscuit")
    assert memory.content == ("User and their family adopted a border collie named Biscuit last Saturday (2023-05-06)")
    assert memory.structured_data == {"value": "a border collie named Biscuit", "date": "2023-05-06"}
    assert memory.observed_at == MONDAY
    # and a question about when, or about that day, ranks it first
    for query in ("When did I adopt Biscuit?", "What happened on 2023-05-06?"):
        results = memory_search(owner=user, query=query, top_k=3)["results"]
        assert results[0]["id"] == str(memory.pk), query
