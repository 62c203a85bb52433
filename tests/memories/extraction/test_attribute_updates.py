"""A sentence that gives an attribute the user's memories already hold a new value, however it is
worded (memories.extraction.attribute_updates, through the heuristic extractor)."""

import pytest

from memories.extraction.heuristic import extract_candidates
from tests.memories.extraction.builders import brief, user_says

KNOWN = [
    "User's rent is $1,850 a month, which is honestly brutal",
    "User's KLM frequent flyer number is KL448120",
    "用户的信用卡还款日是每月15号",
    "User likes hiking",
]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "Good news, the landlord dropped my rent to $1,750 when I renewed.",
            ("User's rent is $1,750", "fact", 0.6, "rent", "is", "$1,750"),
        ),
        (
            "KLM merged my accounts after a glitch, so my frequent flyer number is KL907736 now.",
            (
                "User's frequent flyer number is KL907736",
                "fact",
                0.6,
                "frequent flyer number",
                "is",
                "KL907736",
            ),
        ),
        ("信用卡还款日改到3号了。", ("用户的信用卡还款日是3号", "fact", 0.6, "信用卡还款日", "is", "3号")),
    ],
)
def test_a_new_value_of_a_known_attribute_is_extracted(line, expected):
    # given memories naming the attributes
    # when the user gives one of them another value, in words no sentence rule reads
    candidates = extract_candidates(user_says(line), known=KNOWN)

    # then the sentence is kept as the attribute's new value
    assert [brief(c) for c in candidates] == [expected]


@pytest.mark.parametrize(
    "line",
    [
        "I paid my rent on the 3rd.",  # the attribute named, no new value given to it
        "My rent went up to $1,850 a month.",  # the value already known
        "My locker number is 4471.",  # an attribute no memory holds: the sentence rules alone read it
        "The landlord dropped the price of parking to $50.",
    ],
)
def test_a_sentence_giving_no_new_value_to_a_known_attribute_adds_none(line):
    # given memories naming attributes
    # when the sentence is read with them and without them
    with_known = [brief(c) for c in extract_candidates(user_says(line), known=KNOWN)]
    without = [brief(c) for c in extract_candidates(user_says(line))]

    # then knowing them changes nothing
    assert with_known == without


def test_without_known_memories_such_a_sentence_is_not_read_as_an_update():
    # when the same sentence is read with nothing known
    candidates = extract_candidates(user_says("Good news, the landlord dropped my rent to $1,750 when I renewed."))

    # then no sentence rule keeps it
    assert candidates == []


def test_a_new_value_the_sentence_rules_read_already_is_kept_once():
    # given the rent remembered
    # when the user gives it a new value in words a sentence rule reads
    candidates = extract_candidates(user_says("My rent's $2,100 now."), known=KNOWN)

    # then that reading is the only candidate: no second one for the same attribute
    assert [c.content for c in candidates] == ["User's rent's $2,100 now"]
