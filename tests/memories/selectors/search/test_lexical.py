"""memory_search over turns: BM25F with the neighbouring turns as lighter fields, and session scores."""

import math

import pytest

from memories.selectors.retrieval import memory_search
from tests.factories import ChatSessionFactory, ConversationTurnFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

# Every turn holds three distinct lexemes, so each has the average length and BM25's length
# normalisation is 1: the expected scores below are the BM25F formula by hand.
TRIP = [
    "Any plans lately, friend?",
    "Summer holidays finished",
    "We hiked the Dolomites yesterday",
    "Sounds truly wonderful",
    "Photos arrive tomorrow",
]
OTHER = ["Kitten sneezes often", "Veterinarian visit booked", "Medicine tastes bitter"]


def _scene():
    owner = UserFactory(username="dana")
    trip, other = ChatSessionFactory(owner=owner), ChatSessionFactory(owner=owner)
    turns = {}
    for session, texts in ((trip, TRIP), (other, OTHER)):
        for sequence, text in enumerate(texts, 1):
            turns[text] = ConversationTurnFactory(session=session, sequence=sequence, content=text).id
    return owner, turns


def _saturated(tf: float, k1: float = 1.2) -> float:
    return tf * (k1 + 1) / (tf + k1)


def test_a_turn_is_scored_with_its_neighbours_words_as_lighter_fields():
    # given a session where one turn names the Dolomites and another session that never does
    owner, turns = _scene()

    # when searching the turns for the word
    found = memory_search(owner=owner, query="dolomites", scope="turns", top_k=8)

    # then the turn itself ranks first, the turns one place away next (field weight 0.5), then
    # those two places away (0.2), and no turn of the other session is a full-text match
    idf = math.log(1 + (8 - 1 + 0.5) / (1 + 0.5))
    lexical = {r["content"]: (r["scores"]["lexical_rank"], r["scores"]["bm25"]) for r in found["results"]}
    assert lexical == {
        "We hiked the Dolomites yesterday": (1, round(idf * _saturated(1.0), 6)),
        "Summer holidays finished": (2, round(idf * _saturated(0.5), 6)),
        "Sounds truly wonderful": (3, round(idf * _saturated(0.5), 6)),
        "Any plans lately, friend?": (4, round(idf * _saturated(0.2), 6)),
        "Photos arrive tomorrow": (5, round(idf * _saturated(0.2), 6)),
        **{text: (None, 0.0) for text in OTHER},
    }
    assert found["results"][0]["content"] == "We hiked the Dolomites yesterday"
    assert {r["content"] for r in found["results"][1:3]} == {"Summer holidays finished", "Sounds truly wonderful"}


def test_a_turn_of_a_session_about_the_question_gets_its_session_score(settings):
    # given the same two sessions
    owner, turns = _scene()

    # when searching for the Dolomites with the neighbouring fields off
    settings.MEMORY_RETRIEVAL = {**settings.MEMORY_RETRIEVAL, "TURN_FIELD_WEIGHTS": (1.0, 0.0, 0.0)}
    found = memory_search(owner=owner, query="dolomites", scope="turns", top_k=8)

    # then every turn of the trip's session carries SESSION_WEIGHT of the session's BM25 score (the
    # session holds the word once), found by full text or not, and the other session's turns none
    idf = math.log(1 + (8 - 1 + 0.5) / (1 + 0.5))
    session_score = round(settings.MEMORY_RETRIEVAL["SESSION_WEIGHT"] * idf * _saturated(1.0), 6)
    by_text = {r["content"]: r["scores"]["session_bm25"] for r in found["results"]}
    assert by_text == {**{text: session_score for text in TRIP}, **{text: 0.0 for text in OTHER}}
