"""BM25 collection figures: stored per owner, or counted at query time."""

import pytest

from memories.models import SearchCorpus
from memories.selectors.retrieval import memory_search
from memories.selectors.search.collection import corpus_counts_forget, owner_speakers
from memories.services.search_stats import search_stats_refresh
from tests.factories import ChatSessionFactory, ConversationTurnFactory, UserFactory
from tests.memories.selectors.search.scene import pottery_owner

pytestmark = pytest.mark.django_db(transaction=True)


def test_stored_statistics_give_the_same_bm25_as_counting_when_nothing_changed_since():
    # given an owner's memories, searched before any statistics were stored (frequencies counted)
    owner = pottery_owner()
    counted = memory_search(owner=owner, query="pottery studio on elm street")

    # when the statistics are stored and the same search runs again (frequencies read from them)
    search_stats_refresh(owner_id=owner.pk, corpus=SearchCorpus.MEMORY)
    stored = memory_search(owner=owner, query="pottery studio on elm street")

    # then the word scores and the ranking are the same
    assert [(r["id"], r["scores"]["bm25"], r["score"]) for r in stored["results"]] == [
        (r["id"], r["scores"]["bm25"], r["score"]) for r in counted["results"]
    ]
    assert [r["scores"]["lexical_rank"] for r in stored["results"]] == [1, 2, None]


def test_an_owners_speakers_are_those_of_their_turns_longest_name_first():
    # given turns by three speakers, one of them twice, and a turn without a speaker
    owner = UserFactory(username="fay")
    session = ChatSessionFactory(owner=owner)
    for sequence, speaker in enumerate(["Jon", "Gina Rossi", "Jon", "Al", ""], 1):
        ConversationTurnFactory(session=session, sequence=sequence, speaker=speaker, content="Hello there")

    # when search reads them
    speakers = owner_speakers(owner_id=owner.pk)

    # then each is listed once, longest first, and another owner has none
    assert speakers == ["Gina Rossi", "Jon", "Al"]
    assert owner_speakers(owner_id=UserFactory(username="gus").pk) == []
    corpus_counts_forget(owner_id=owner.pk)


def test_a_question_naming_a_speaker_is_matched_by_its_other_words_only():
    # given Caroline saying she adores pottery, and Melanie addressing her by name about nothing else
    owner = UserFactory(username="hana")
    session = ChatSessionFactory(owner=owner)
    ConversationTurnFactory(session=session, sequence=1, speaker="Caroline", content="I adore pottery")
    ConversationTurnFactory(session=session, sequence=5, speaker="Melanie", content="Caroline, good morning")

    # when a question names Caroline
    found = memory_search(owner=owner, query="What does Caroline adore?", scope="turns")

    # then only Caroline's turn is a full-text match (on "adore"), the turn naming her is not
    assert [(r["speaker"], r["scores"]["lexical_rank"]) for r in found["results"]] == [
        ("Caroline", 1),
        ("Melanie", None),
    ]
    corpus_counts_forget(owner_id=owner.pk)
