"""Whether a text talks time: each way a match can start, in either case, and near misses."""

import pytest

from memories.selectors.temporal import mentions_time


@pytest.mark.parametrize(
    "text",
    [
        "I went there yesterday.",
        "TODAY is the day",
        "see you Tonight",
        "two weeks ago",
        "Recently I moved",
        "we met last week",
        "LAST SUMMER was hot",
        "next month, maybe",
        "this weekend?",
        "on the weekend",
        "back in 1999",
        "since 2021.",
        "every Monday",
        "Saturday's game",
        "in January",
        "May is busy",
        "in December",
        "late october",
        "我昨天去了",
        "今天很好",
        "上个月的事",
        "去年夏天",
        "周末见",
        "3月开始",
        "2019年",
        "ſunday brunch",  # the long s folds to s, as in the pattern before the lookahead
    ],
)
def test_a_text_that_mentions_a_time(text):
    assert mentions_time(text) is True


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Nothing here but pottery and the lake",
        "the 1999s",
        "x2020 and 2020x",
        "_2021",
        "last  week",  # two spaces: the pattern wants one
        "lastweek",
        "mayonnaise and sundays",
        "ago" + "go",
        "3 apples",
        "明白了",
    ],
)
def test_a_text_without_a_time(text):
    assert mentions_time(text) is False
