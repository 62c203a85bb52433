"""Statements of change through the heuristic extractor: each keeps its cue for the merge decision."""

import pytest

from memories.extraction.heuristic import extract_candidates
from tests.memories.extraction.builders import brief, user_says


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("I have quit coffee completely.", ("User has quit coffee completely", "preference", 0.8, "", "", "")),
        ("I stopped eating meat.", ("User stopped eating meat", "fact", 0.8, "", "", "")),
        ("I no longer eat meat.", ("User no longer eats meat", "fact", 0.8, "", "", "")),
        ("I don't drink coffee anymore.", ("User doesn't drink coffee anymore", "preference", 0.8, "", "", "")),
        ("I switched from vim to VS Code.", ("User switched from vim to VS Code", "fact", 0.8, "", "", "")),
        (
            "Actually I switched to green tea instead of coffee.",
            ("User switched to green tea instead of coffee", "preference", 0.9, "", "", ""),
        ),
        (
            "We moved from Berlin to Lisbon last month.",
            ("User moved from Berlin to Lisbon last month (2026-02)", "fact", 0.8, "residence", "lives in", "Lisbon"),
        ),
        (
            "I relocated to Osaka this spring.",
            ("User relocated to Osaka this spring", "fact", 0.8, "residence", "lives in", "Osaka"),
        ),
        (
            "I joined Stripe as a designer.",
            ("User joined Stripe as a designer", "fact", 0.8, "employer", "works at", "Stripe"),
        ),
        (
            "I started working at St. Mary's Hospital in June.",
            (
                "User started working at St. Mary's Hospital in June",
                "fact",
                0.8,
                "employer",
                "works at",
                "St. Mary's Hospital",
            ),
        ),
        (
            "These days I only drink green tea in the morning.",
            ("User only drinks green tea in the morning", "preference", 0.6, "", "", ""),
        ),
        ("I cycle every evening now.", ("User cycles every evening now", "workflow", 0.6, "", "", "")),
        ("我不再喝咖啡了。", ("用户不再喝咖啡了", "preference", 0.8, "", "", "")),
        ("我戒了烟。", ("用户戒了烟", "fact", 0.8, "", "", "")),
        ("我把编辑器换成了VS Code。", ("用户把编辑器换成了VS Code", "fact", 0.8, "", "", "")),
        ("我从杭州搬到了深圳。", ("用户从杭州搬到了深圳", "fact", 0.8, "residence", "lives in", "深圳")),
        ("我现在只喝绿茶。", ("用户现在只喝绿茶", "preference", 0.8, "", "", "")),
        ("我跳槽到了腾讯。", ("用户跳槽到了腾讯", "fact", 0.8, "employer", "works at", "腾讯")),
        ("我已经搬去广州住了。", ("用户已经搬去广州住了", "fact", 0.8, "residence", "lives in", "广州")),
        ("我现在早餐改喝豆浆了。", ("用户现在早餐改喝豆浆了", "preference", 0.8, "", "", "")),
        ("Cancelled the gym in January.", ("User cancelled the gym in January", "fact", 0.8, "", "", "")),
        (
            "We've swapped city life for a little cottage just outside York.",
            ("User has swapped city life for a little cottage just outside York", "fact", 0.8, "", "", ""),
        ),
        (
            "I've just started as a research scientist at Genentech.",
            (
                "User has just started as a research scientist at Genentech",
                "fact",
                0.8,
                "employer",
                "works at",
                "Genentech",
            ),
        ),
        (
            "年初我们全家搬到昆明了，四季如春。",
            ("年初用户全家搬到昆明了，四季如春", "fact", 0.8, "residence", "lives in", "昆明"),
        ),
        ("已经在合肥安顿下来了。", ("用户已经在合肥安顿下来了", "fact", 0.8, "residence", "lives in", "合肥")),
    ],
)
def test_a_statement_of_change_becomes_one_memory_with_its_cue(line, expected):
    # given one user turn saying that something changed
    # when it is extracted
    candidates = extract_candidates(user_says(line), [])

    # then one memory keeps the change in the user's words (and the slot for moves and new jobs)
    assert [brief(c) for c in candidates] == [expected]


def test_a_sentiment_that_stopped_keeps_its_opinion_slot():
    # given "not … anymore" about a liking
    # when it is extracted
    [candidate] = extract_candidates(user_says("I don't like jazz anymore."), [])

    # then the sentiment rule fills the opinion slot, so it replaces "likes jazz" by slot
    assert brief(candidate) == ("User doesn't like jazz", "preference", 0.6, "jazz", "opinion", "dislikes")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("我现在早餐改喝豆浆了，不喝牛奶了。", ["用户现在早餐改喝豆浆了", "用户不喝牛奶了"]),
        ("我以前喜欢看恐怖片，现在更喜欢看纪录片。", ["用户现在更喜欢看纪录片"]),
    ],
)
def test_a_chinese_clause_without_its_own_subject_is_a_statement_of_the_first_ones(line, expected):
    # given one sentence whose second clause drops the subject (a habit given up, what is liked now)
    # when it is extracted
    candidates = extract_candidates(user_says(line), [])

    # then each clause that states something is a memory of the user (the past one is not kept)
    assert [c.content for c in candidates] == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Honestly I'm off sushi now.", ["User is off sushi now"]),
        ("I'm done with the Kindle, honestly.", ["User is done with the Kindle, honestly"]),
        (
            "Since March I've been teaching nursing students at Fairview Community College.",
            ["User has been teaching nursing students at Fairview Community College since March"],
        ),
        (
            "Funny thing, since last spring I've become a morning person.",
            ["User has become a morning person since last spring"],
        ),
        (
            "Groceries have gotten so expensive — my weekly grocery budget is $150 now.",
            ["User's weekly grocery budget is $150"],
        ),
        ("Quick update on my end: I accepted an offer from Atlassian.", ["User accepted an offer from Atlassian"]),
        ("对了，从上个月开始我改坐地铁上班了。", ["从上个月（2026-02）开始用户改坐地铁上班了"]),
        ("上周刚搬完家，现在住在青岛了。", ["上周（2026-03-02）刚搬完家，用户现在住在青岛了"]),
        ("其实我早就不冥想了。", ["用户早就不冥想了"]),
    ],
)
def test_a_change_no_rule_knows_the_verb_of_is_still_kept(line, expected):
    # given a user turn saying that something about them changed, in words no statement rule reads
    # when it is extracted
    candidates = extract_candidates(user_says(line), [])

    # then the statement is kept in the user's words, so the memory it makes stale can be replaced
    assert [c.content for c in candidates] == expected


@pytest.mark.parametrize(
    "line",
    [
        "I'm so tired now after the trip.",
        "I'm at the airport now, boarding soon.",
        "I'm fine now, thanks.",
        "Now I see what you mean.",
        "我现在好累啊，想睡觉。",
        "我现在在机场等飞机。",
    ],
)
def test_how_the_user_is_at_the_moment_is_not_a_change_to_keep(line):
    # given a turn about the moment ("now" without anything that lasts)
    # when it is extracted
    candidates = extract_candidates(user_says(line), [])

    # then nothing is kept
    assert candidates == []


def test_a_sentence_without_i_about_what_the_assistant_said_is_not_the_users_news():
    # given a dropped-"I" sentence about the assistant's suggestion
    # when it is extracted
    candidates = extract_candidates(user_says("Started reading your suggestion, looks good."), [])

    # then nothing is kept
    assert candidates == []
