"""Whether a text talks time: each way a match can start, in either case, and near misses."""

import re

import pytest

from memories.selectors.temporal import _TIME_EXPRESSION, _TIME_WORDS, mentions_time


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


def test_the_lookahead_lets_through_every_word_of_the_pattern():
    # given every word and CJK run of the pattern, alone and beside the next (phrases), in three cases
    words = re.findall(r"[a-z]+|[\u4e00-\u9fff]+", _TIME_WORDS)
    phrases = words + [f"{a} {b}" for a, b in zip(words, words[1:])] + ["1999", "2020", "12月", "3年"]
    texts = [f"so {form}." for phrase in phrases for form in (phrase, phrase.upper(), phrase.title())]
    plain = re.compile(_TIME_WORDS, re.IGNORECASE)

    # when both the pattern and the pattern behind the lookahead read them
    differ = [text for text in texts if bool(plain.search(text)) != bool(_TIME_EXPRESSION.search(text))]

    # then they agree on every one (a word whose first character the lookahead lacks would differ)
    assert differ == []
    assert sum(bool(plain.search(text)) for text in texts) > 100
