"""Dated todos: relative dates resolved against the turn's time, expires_at at the end of the due day."""

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memories.extraction.dates import end_of_day, find_date
from memories.extraction.heuristic import extract_candidates
from tests.memories.extraction.builders import NOW, user_says

SHANGHAI = ZoneInfo("Asia/Shanghai")


@pytest.mark.parametrize(
    ("text", "due"),
    [
        ("call her tomorrow", date(2026, 3, 11)),
        ("finish it today", date(2026, 3, 10)),
        ("see you tonight", date(2026, 3, 10)),
        ("the day after tomorrow", date(2026, 3, 12)),
        ("by Friday", date(2026, 3, 13)),
        ("on Tuesday", date(2026, 3, 17)),
        ("next Friday", date(2026, 3, 20)),
        ("this Friday", date(2026, 3, 13)),
        ("next week", date(2026, 3, 22)),
        ("by the end of the week", date(2026, 3, 15)),
        ("next month", date(2026, 4, 30)),
        ("end of the month", date(2026, 3, 31)),
        ("in 3 days", date(2026, 3, 13)),
        ("in two weeks", date(2026, 3, 24)),
        ("on 2026-12-01", date(2026, 12, 1)),
        ("on December 1", date(2026, 12, 1)),
        ("by Jan 5th", date(2027, 1, 5)),
        ("明天", date(2026, 3, 11)),
        ("后天", date(2026, 3, 12)),
        ("下周三之前", date(2026, 3, 18)),
        ("周五", date(2026, 3, 13)),
        ("这周日", date(2026, 3, 15)),
        ("下周", date(2026, 3, 22)),
        ("下个月", date(2026, 4, 30)),
        ("12月1日", date(2026, 12, 1)),
        ("2026年12月1日", date(2026, 12, 1)),
        ("3天后", date(2026, 3, 13)),
    ],
)
def test_date_expressions_resolve_against_the_turn_time(text, due):
    # given an expression said on Tuesday 2026-03-10
    # when resolved
    found = find_date(text, NOW)

    # then it names the expected day
    assert found is not None
    assert found.due == due


@pytest.mark.parametrize(
    "text",
    [
        "last Friday",
        "yesterday",
        "every Monday",
        "on Mondays",
        "上周五",
        "每周一",
        "昨天",
        "no date here",
        "我住在北京",
    ],
)
def test_past_and_recurring_references_are_not_due_dates(text):
    # given a reference to the past, a recurrence, or no date at all
    # when resolved
    # then there is no due date
    assert find_date(text, NOW) is None


def test_the_end_of_the_due_day_is_in_the_turns_timezone():
    # given a turn said in Shanghai
    said_at = datetime(2026, 3, 10, 23, 30, tzinfo=SHANGHAI)

    # when a due date is turned into an expiry
    expires = end_of_day(date(2026, 3, 11), said_at)

    # then it is midnight after the due day, Shanghai time
    assert expires == datetime(2026, 3, 12, 0, 0, tzinfo=SHANGHAI)


@pytest.mark.parametrize(
    ("line", "content", "retention", "expires_at"),
    [
        (
            "I need to finish the quarterly report by Friday.",
            "User needs to finish the quarterly report by Friday (2026-03-13)",
            "short",
            datetime(2026, 3, 14, tzinfo=SHANGHAI),
        ),
        (
            "I have a dentist appointment tomorrow at 3pm.",
            "User has a dentist appointment tomorrow (2026-03-11) at 3pm",
            "short",
            datetime(2026, 3, 12, tzinfo=SHANGHAI),
        ),
        (
            "Remind me to call mom next week.",
            "User wants to be reminded to call mom next week (2026-03-22)",
            "long",
            datetime(2026, 3, 23, tzinfo=SHANGHAI),
        ),
        (
            "I need to renew my passport on 2026-12-01.",
            "User needs to renew their passport on 2026-12-01",
            "long",
            datetime(2026, 12, 2, tzinfo=SHANGHAI),
        ),
        (
            "My deadline is next Monday.",
            "User's deadline is next Monday (2026-03-16)",
            "long",
            datetime(2026, 3, 17, tzinfo=SHANGHAI),
        ),
        ("我明天要交报告。", "用户明天（2026-03-11）要交报告", "short", datetime(2026, 3, 12, tzinfo=SHANGHAI)),
        (
            "我下周三要做产品评审。",
            "用户下周三（2026-03-18）要做产品评审",
            "long",
            datetime(2026, 3, 19, tzinfo=SHANGHAI),
        ),
        (
            "提醒我下周五之前交季度报告",
            "用户希望被提醒：下周五（2026-03-20）之前交季度报告",
            "long",
            datetime(2026, 3, 21, tzinfo=SHANGHAI),
        ),
    ],
)
def test_dated_todos_expire_at_the_end_of_their_day(line, content, retention, expires_at):
    # given a plan with a date, said on Tuesday 2026-03-10 in Shanghai
    said_at = datetime(2026, 3, 10, 9, 0, tzinfo=SHANGHAI)

    # when extracted
    candidates = extract_candidates(user_says(line, at=said_at), [])

    # then it is one todo with the absolute date in its text and in expires_at
    assert [(c.content, c.category, c.retention, c.expires_at) for c in candidates] == [
        (content, "todo", retention, expires_at)
    ]
    assert candidates[0].predicate == "due"
    assert candidates[0].value == (expires_at - timedelta(days=1)).date().isoformat()


def test_reminders_are_explicit_and_important():
    # given "remind me to …"
    candidates = extract_candidates(user_says("Please remind me to book the flights tomorrow."), [])

    # then it is an explicit, important todo
    assert [(c.content, c.importance, c.explicit) for c in candidates] == [
        ("User wants to be reminded to book the flights tomorrow (2026-03-11)", 0.9, True)
    ]


def test_undated_reminders_and_todo_labels_have_no_expiry():
    # given a reminder and a todo note without dates
    candidates = extract_candidates(user_says("Don't forget to water the plants.", "TODO: update the README"), [])

    # then both are todos left to the default retention
    assert [(c.content, c.category, c.retention, c.expires_at) for c in candidates] == [
        ("User wants to be reminded to water the plants", "todo", "long", None),
        ("User has a todo: update the README", "todo", "long", None),
    ]


def test_a_task_for_right_now_without_a_date_is_not_a_todo():
    # given a request that only concerns this conversation
    # then nothing is kept
    assert extract_candidates(user_says("I need to fix this failing test."), []) == []


def test_the_same_task_with_a_new_date_fills_the_same_slot():
    # given a deadline moved in a later conversation
    first = extract_candidates(user_says("I need to finish the report by Friday."), [])[0]
    second = extract_candidates(user_says("I need to finish the report by next Monday."), [])[0]

    # then the slot is the task and the value the new date
    assert (
        (first.subject, first.predicate) == (second.subject, second.predicate) == ("needs to finish the report", "due")
    )
    assert (first.value, second.value) == ("2026-03-13", "2026-03-16")
