"""Attributes read from memory texts (memories.attributes), without a database: which named thing of
the user's a statement gives a value, and whether a second statement gives it another one."""

import pytest

from memories.attributes import Attribute, attribute_of, names_several, new_value


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            "User's KLM frequent flyer number is KL448120, please keep it handy",
            Attribute("frequent flyer number", "KL448120, please keep it handy"),
        ),
        ("User always uses Chrome as their browser, on every machine", Attribute("browser", "Chrome")),
        ("User switched their browser to Firefox last week", Attribute("browser", "Firefox last week")),
        ("User's parking spot at the office is P2-17", Attribute("parking spot", "P2-17")),
        ("User's rent went down to $1,750", Attribute("rent", "$1,750")),
        ("User's rent's $2,100 now", Attribute("rent", "$2,100 now")),
        ("User's new home address is 48 Pine Avenue", Attribute("home address", "48 Pine Avenue")),
        ("用户的信用卡还款日是每月15号", Attribute("信用卡还款日", "每月15号")),
        ("用户的信用卡还款日改到3号了", Attribute("信用卡还款日", "3号了")),
        # what people have several of, or another person's thing, or a description: no attribute
        ("User's friend is Tom", None),
        ("User's kids are 5 and 7", None),
        ("User's wife's birthday is May 3", None),
        ("User's job is stressful", None),
        ("用户的儿子叫小明", None),
        ("User likes Python", None),
    ],
)
def test_the_attribute_a_memory_gives_a_value(content, expected):
    # when a memory's text is read
    # then the attribute it names and the value it gives are found, or none
    assert attribute_of(content) == expected


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        ("User's bank is Barclays", "User's bank is Monzo now", True),
        ("User's dentist appointment is on Thursday the 9th at 10am", "User's dentist appointment is the 16th", True),
        ("User's rent is $1,850 a month", "User's rent is $1,750", True),
        ("用户的雅思成绩是6.5分", "用户的雅思成绩是7.5分", True),
        ("User's favourite season is autumn", "User's favourite season is spring", True),
        # the same value again, with more words
        ("User's bank is Barclays", "User's bank is Barclays, they have been with them for years", False),
        # two sorts of value: a day and a time of one flight
        ("User's flight is on Monday", "User's flight is at 9am", False),
        # a value against a remark without one
        ("User's rent is $1,850 a month", "User's rent is killing them", False),
        # another attribute
        ("User's phone number is 555-0134", "User's locker number is 4471", False),
    ],
)
def test_whether_a_second_statement_gives_the_attribute_another_value(old, new, changed):
    # given two statements that name attributes
    first, second = attribute_of(old), attribute_of(new)

    # when compared
    # then only another value of the same attribute is a change
    assert (first is not None, second is not None, new_value(first, second)) == (True, True, changed)


@pytest.mark.parametrize(
    ("content", "several"),
    [
        ("User's friend is Tom", True),
        ("User's daughter is called Priya", True),
        ("用户的同事叫小王", True),
        ("User's bank is Barclays", False),
        ("用户的信用卡还款日是每月15号", False),
        ("User likes Tom", False),
    ],
)
def test_whether_a_statement_names_something_people_have_several_of(content, several):
    # when a memory's text is read
    # then it is known whether its attribute is one of several
    assert names_several(content) is several
