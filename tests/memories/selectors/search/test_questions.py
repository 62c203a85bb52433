"""What a query says about how to search: names to leave out, several things asked for."""

import pytest

from memories.selectors.search.questions import asks_for_several, without_speakers


@pytest.mark.parametrize(
    "query",
    [
        "What activities does Melanie partake in?",
        "Which cities has Jon visited?",
        "What European countries has Maria been to?",
        "What people has Maria met and helped while volunteering?",
        "What has Melanie painted?",
        "Where has Melanie camped?",
        "What do Jon and Gina both have in common?",
        "How many children does Melanie have?",
        "In what ways is Caroline participating in the LGBTQ community?",
    ],
)
def test_a_question_asking_for_several_things(query):
    assert asks_for_several(query) is True


@pytest.mark.parametrize(
    "query",
    [
        "What did Melanie paint recently?",
        "What is Caroline's relationship status?",
        "How long has Melanie been creating art?",
        "What does Gina's tattoo symbolize?",
        "Why did Jon shut down his bank account?",
        "What class does she take?",
        "Where is the pottery studio?",
        "陶艺课在哪里?",
    ],
)
def test_a_question_asking_for_one_thing(query):
    assert asks_for_several(query) is False


def test_speakers_names_are_left_out_whole_or_first_with_their_possessive():
    speakers = ["Caroline", "Jon Smith"]

    assert without_speakers("What did Caroline's kids like?", speakers) == "What did kids like?"
    assert without_speakers("Where did Jon Smith and jon go?", speakers) == "Where did and go?"
    assert without_speakers("Did Carolina see Jonas?", speakers) == "Did Carolina see Jonas?"
    assert without_speakers("Where is Caroline?", []) == "Where is Caroline?"
