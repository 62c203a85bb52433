"""Life events, family, health and finished tasks in Chinese, with relative dates written out."""

from datetime import datetime, timedelta, timezone

import pytest

from memories.extraction.heuristic import extract_candidates
from tests.memories.extraction.builders import turn, user_says

# Monday 2023-05-08, 10:00 in China: dates are the user's own days, not UTC's.
SAID_AT = datetime(2023, 5, 8, 10, 0, tzinfo=timezone(timedelta(hours=8)))


def extracted(line: str) -> list[tuple]:
    return [
        (c.content, c.category, c.subject, c.predicate, c.value, c.event_date)
        for c in extract_candidates(user_says(line, at=SAID_AT), [])
    ]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "跟你说个事，我上个月从北京搬到了深圳。",
            [("用户上个月（2023-04）从北京搬到了深圳", "fact", "residence", "lives in", "深圳", "2023-04")],
        ),
        (
            "我们上周六领养了一只柯基，叫豆豆。",
            [
                (
                    "用户上周六（2023-05-06）领养了一只柯基，叫豆豆",
                    "fact",
                    "领养一只柯基",
                    "event",
                    "一只柯基",
                    "2023-05-06",
                )
            ],
        ),
        (
            "我昨天辞职了，下周一去字节跳动上班。",
            [
                (
                    "用户昨天（2023-05-07）辞职了，下周一（2023-05-15）去字节跳动上班",
                    "fact",
                    "辞职下周一去字节跳动上班",
                    "event",
                    "下周一去字节跳动上班",
                    "2023-05-07",
                )
            ],
        ),
        (
            "我姐姐下个月在成都结婚。",
            [("用户的姐姐下个月（2023-06）在成都结婚", "fact", "姐姐", "", "下个月在成都结婚", "")],
        ),
        (
            "医生说我有轻度高血压，以后要少吃盐。",
            [("医生说用户有轻度高血压，以后要少吃盐", "fact", "轻度高血压 condition", "has", "轻度高血压", "")],
        ),
        (
            "报告终于写完了，昨天交给了老板。",
            [("用户的报告终于写完了，昨天（2023-05-07）交给了老板", "fact", "报告", "done", "写完", "2023-05-07")],
        ),
        (
            "上周日我跑完了人生第一个半程马拉松！",
            [
                (
                    "上周日（2023-05-07）用户跑完了人生第一个半程马拉松",
                    "fact",
                    "跑完人生第一个半程马拉松",
                    "event",
                    "人生第一个半程马拉松",
                    "2023-05-07",
                )
            ],
        ),
        (
            "我是在哈尔滨长大的，2018年来上海读研。",
            [("用户是在哈尔滨长大的，2018年来上海读研", "fact", "origin", "is from", "哈尔滨", "")],
        ),
        (
            "我在一家做跨境电商的公司当后端工程师。",
            [("用户在一家做跨境电商的公司当后端工程师", "fact", "occupation", "is", "后端工程师", "")],
        ),
        (
            "写代码不要用 tab 缩进，统一用四个空格。",
            [
                (
                    "用户要求写代码不要用 tab 缩进，统一用四个空格",
                    "rule",
                    "用 tab 缩进，统一用四个空格",
                    "rule",
                    "never",
                    "",
                )
            ],
        ),
        (
            "6月18号是我爸的生日，记得提醒我买礼物。",
            [
                ("6月18号是用户爸的生日", "fact", "爸的生日", "is", "6月18号", ""),
                ("用户希望被提醒：买礼物", "todo", "买礼物", "due", "", ""),
            ],
        ),
    ],
)
def test_chinese_life_events_become_dated_facts(line, expected):
    # given one user turn said on Monday 2023-05-08 in UTC+8
    # when the heuristic extracts it
    # then each durable statement is one memory, its relative dates written out
    assert extracted(line) == expected


@pytest.mark.parametrize(
    "line", ["我昨天去了超市。", "我是说真的。", "我觉得这个方案不错。", "今天好累啊。", "我妈妈说你很厉害。"]
)
def test_chinese_small_talk_and_errands_are_not_memories(line):
    assert extracted(line) == []


def test_a_name_introduced_earlier_carries_the_next_statement():
    # given the user names their new dog, then talks about it by name (Chinese) or by pronoun (English)
    turns = [
        turn(1, "user", "我们上周六领养了一只柯基，叫豆豆。", at=SAID_AT),
        turn(2, "user", "豆豆今年两岁，已经会握手了。", at=SAID_AT),
        turn(3, "user", "We adopted a border collie named Biscuit last Saturday!", at=SAID_AT),
        turn(4, "user", "Yeah, he's two years old and already knows how to sit.", at=SAID_AT),
    ]

    # when the heuristic extracts the conversation
    contents = [c.content for c in extract_candidates(turns, [])]

    # then the statements about them are memories that name them
    assert contents == [
        "用户上周六（2023-05-06）领养了一只柯基，叫豆豆",
        "豆豆今年两岁，已经会握手了",
        "User and their family adopted a border collie named Biscuit last Saturday (2023-05-06)",
        "Biscuit is two years old and already knows how to sit",
    ]


def test_a_correction_replaces_what_was_said_about_the_same_person():
    # given a statement about the user's son, corrected two turns later
    turns = [
        turn(1, "user", "我儿子今年上三年级。", at=SAID_AT),
        turn(2, "assistant", "三年级的孩子正是好奇心强的时候。", at=SAID_AT),
        turn(3, "user", "不对，我说错了，我儿子上的是四年级。", at=SAID_AT),
    ]

    # when the heuristic extracts it
    found = extract_candidates(turns, [])

    # then only the corrected statement is kept, with a correction's confidence
    assert [(c.content, c.confidence, c.source_sequences) for c in found] == [("用户的儿子上的是四年级", 0.95, [3])]


def test_a_chinese_correction_of_one_value_rewrites_what_was_said():
    turns = [
        turn(1, "user", "我在德勤的广州办公室工作。", at=SAID_AT),
        turn(2, "assistant", "在那边工作多久了？", at=SAID_AT),
        turn(3, "user", "更正一下，是深圳办公室，不是广州。", at=SAID_AT),
    ]

    found = extract_candidates(turns, [])

    assert [(c.content, c.subject, c.confidence, c.source_sequences) for c in found] == [
        ("用户在德勤的深圳办公室工作", "employer", 0.95, [3])
    ]


def test_a_value_correction_with_nothing_before_it_is_not_a_memory():
    assert extracted("更正一下，是深圳办公室，不是广州。") == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "昨天从救助站领养了一只橘猫，取名叫橘子。",
            [
                (
                    "用户昨天（2023-05-07）从救助站领养了一只橘猫，取名叫橘子",
                    "fact",
                    "领养一只橘猫",
                    "event",
                    "一只橘猫",
                    "2023-05-07",
                )
            ],
        ),
        ("我乳糖不耐受。", [("用户乳糖不耐受", "fact", "乳糖不耐受 condition", "has", "乳糖不耐受", "")]),
        (
            "挺忙的，我们的App六月一号上线。",
            [("用户的App六月一号（2023-06-01）上线", "todo", "的app上线", "due", "2023-06-01", "")],
        ),
        (
            "我的答辩在7月20号上午十点。",
            [("用户的答辩在7月20号（2023-07-20）上午十点", "todo", "的答辩上午十点", "due", "2023-07-20", "")],
        ),
    ],
)
def test_chinese_subjectless_news_conditions_and_dated_plans(line, expected):
    assert extracted(line) == expected


@pytest.mark.parametrize(
    ("line", "content", "category"),
    [
        ("我从一月份开始吃素了。", "用户从一月份开始吃素了", "fact"),
        ("我们家的老狗旺财上个月走了，它十四岁了。", "用户的狗旺财上个月（2023-04）走了，它十四岁了", "fact"),
        ("从春天开始，我每周二晚上去学陶艺。", "从春天开始，用户每周二晚上去学陶艺", "workflow"),
        ("生产环境的查询不要用 SELECT *。", "用户要求生产环境的查询不要用 SELECT *", "rule"),
    ],
)
def test_chinese_new_habits_losses_and_scoped_rules(line, content, category):
    assert [(c[0], c[1]) for c in extracted(line)] == [(content, category)]
