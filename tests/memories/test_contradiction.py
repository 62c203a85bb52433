"""`contradicts`: a new value in the same subject/predicate slot (except multi-valued predicates), or a
negation flip between two statements about the same thing, in English and Chinese."""

import pytest

from memories.contradiction import MULTI_VALUED_PREDICATES, Slot, contradicts


def test_a_new_value_in_the_same_slot_contradicts():
    # given two statements filling "residence / lives in" with different cities
    # when they are compared
    # then they contradict
    assert contradicts(
        "User lives in Berlin",
        "User lives in Munich",
        Slot("residence", "lives in", "Berlin"),
        Slot("residence", "lives in", "Munich"),
    )


def test_the_same_value_in_other_words_does_not_contradict():
    # given the same slot and value, worded differently and in another case
    # when compared, then no contradiction
    assert not contradicts(
        "User lives in Berlin",
        "User has lived in Berlin for years",
        Slot("Residence", "Lives In", "Berlin"),
        Slot("residence", "lives in", " berlin "),
    )


def test_same_slot_without_values_compares_the_texts():
    # given the same slot and no values
    # when the texts differ, then they contradict; when equal but for case, they do not
    editor = Slot("editor", "is")
    assert contradicts("User's editor is vim", "User's editor is emacs", editor, editor)
    assert not contradicts("User's editor is vim", "user's editor is VIM ", editor, editor)


@pytest.mark.parametrize("predicate", sorted(MULTI_VALUED_PREDICATES))
def test_multi_valued_predicates_never_contradict(predicate):
    # given two values of a predicate one subject may hold several times
    # when compared, then no contradiction
    assert not contradicts(
        "User has a dog", "User has a cat", Slot("pet", predicate, "dog"), Slot("pet", predicate, "cat")
    )


def test_different_slots_with_unrelated_texts_do_not_contradict():
    # given two slots of different subjects
    # when compared, then no contradiction
    assert not contradicts(
        "User lives in Berlin",
        "User works at Acme",
        Slot("residence", "lives in", "Berlin"),
        Slot("employer", "works at", "Acme"),
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("User likes jazz", "User does not like jazz"),
        ("User likes jazz", "User doesn't like jazz"),
        ("User doesn’t eat meat", "User eats meat"),  # typographic apostrophe
        ("User drinks coffee", "User never drinks coffee"),
        ("User drinks coffee", "User no longer drinks coffee"),
        ("User drinks coffee", "User doesn't drink coffee anymore"),
        ("User has a car", "User has no car"),
        ("User eats meat", "User never eats meat"),
        ("用户喜欢咖啡", "用户不喜欢咖啡"),
        ("用户喝咖啡", "用户不再喝咖啡"),
        ("用户吃香菜", "用户不要吃香菜"),
        ("用户有车", "用户没有车"),
    ],
)
def test_a_negation_flip_contradicts(old, new):
    # given a statement and its negation (no slots)
    # when compared either way, then they contradict
    assert contradicts(old, new)
    assert contradicts(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("User does not like jazz", "User doesn't like jazz"),  # both negative
        ("User likes jazz", "User likes jazz a lot"),  # both positive
        ("User no longer drinks coffee", "User doesn't drink coffee anymore"),  # both negative
        ("用户不喜欢咖啡", "用户不再喜欢咖啡"),  # both negative
        ("User does not like jazz", "User lives in Lisbon near the river"),  # unrelated
        ("", "User does not like jazz"),
        ("the and of", "not the and of"),  # nothing but stop words
    ],
)
def test_no_flip_or_no_overlap_does_not_contradict(old, new):
    # given statements with the same polarity, or about different things
    # when compared, then they do not contradict
    assert not contradicts(old, new)
    assert not contradicts(new, old)
