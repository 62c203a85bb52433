"""Tasks the user reports as finished: what the scratchpad's recent completions are made of."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from memories.extraction.completions import completed_tasks
from tests.memories.extraction.builders import user_says

SAID_AT = datetime(2023, 5, 8, 10, 0, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize(
    ("line", "task", "completed_at"),
    [
        ("Phew, I finally finished my tax return yesterday.", "finished the tax return", datetime(2023, 5, 7, 12, 0)),
        ("I also submitted the grant application this morning.", "submitted the grant application", None),
        ("Done with the taxes!", "done with the taxes", None),
        ("My visa application is finally submitted.", "the visa application submitted", None),
        ("I finally got the car insurance sorted.", "got the car insurance sorted", None),
        ("I passed my driving test!", "passed the driving test", None),
        ("搞定了季度报告，明天汇报。", "搞定了季度报告", None),
        ("报告终于写完了，昨天交给了老板。", "报告写完了", datetime(2023, 5, 7, 12, 0)),
        ("护照也办好了。", "护照办好了", None),
    ],
)
def test_a_finished_task_is_named_in_the_users_words(line, task, completed_at):
    # given one user turn reporting a finished task
    # when completions are read from it
    found = completed_tasks(user_says(line, at=SAID_AT))

    # then it is one completion, dated by the day it names or else by the turn
    expected_at = completed_at.replace(tzinfo=UTC) if completed_at else SAID_AT
    assert [(c.task, c.completed_at, c.sequence) for c in found] == [(task, expected_at, 1)]


@pytest.mark.parametrize(
    "line",
    [
        "Anyway, let's plan my week.",
        "I finished it.",
        "I got a new phone.",
        "Can you help me finish the report?",
        "I need to finish the report by Friday.",
        "Did you finish the summary?",
        "你写完了吗？",
        "我也写完了。",
        "那我们来安排一下这周的计划吧。",
    ],
)
def test_requests_plans_questions_and_pronouns_are_not_completions(line):
    assert completed_tasks(user_says(line, at=SAID_AT)) == []


def test_only_the_users_turns_count_and_a_task_said_twice_is_one_completion():
    # given the assistant reporting its own work, and the user saying the same thing twice
    from tests.memories.extraction.builders import turn

    turns = [
        turn(1, "assistant", "I finished the summary of your notes.", at=SAID_AT),
        turn(2, "user", "I finished the slides.", at=SAID_AT),
        turn(3, "user", "Yes, I finished the slides.", at=SAID_AT + timedelta(minutes=5)),
    ]

    # when completions are read
    found = completed_tasks(turns)

    # then the user's task is there once, from the first time it was said
    assert [(c.task, c.sequence) for c in found] == [("finished the slides", 2)]


def test_a_chinese_completion_keeps_the_users_time_zone():
    said_at = datetime(2023, 5, 8, 7, 0, tzinfo=timezone(timedelta(hours=8)))

    found = completed_tasks(user_says("报告昨天写完了。", at=said_at))

    assert [(c.task, c.completed_at) for c in found] == [
        ("报告写完了", datetime(2023, 5, 7, 12, 0, tzinfo=timezone(timedelta(hours=8))))
    ]
