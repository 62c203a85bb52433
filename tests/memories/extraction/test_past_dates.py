"""Past date expressions resolved from the turn's time, and written out in the memory text."""

from datetime import date

import pytest

from memories.extraction.date_notes import annotate_dates
from memories.extraction.past_dates import find_past_date

SAID_ON = date(2023, 5, 8)  # a Monday


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("we adopted him last Saturday", "2023-05-06"),
        ("I finished it yesterday", "2023-05-07"),
        ("the day before yesterday", "2023-05-06"),
        ("I got the diagnosis two weeks ago", "2023-04-24"),
        ("3 days ago", "2023-05-05"),
        ("a couple of weeks ago", "2023-04-24"),
        ("last week", "2023-05-01"),
        ("last month", "2023-04"),
        ("six months ago", "2022-11"),
        ("last year", "2022"),
        ("two years ago", "2021"),
        ("this morning", "2023-05-08"),
        ("我上周六领养了一只猫", "2023-05-06"),
        ("昨天辞职了", "2023-05-07"),
        ("前天", "2023-05-06"),
        ("两周前", "2023-04-24"),
        ("上个月搬家了", "2023-04"),
        ("三个月前", "2023-02"),
        ("去年", "2022"),
    ],
)
def test_find_past_date_resolves_against_the_day_it_was_said(text, iso):
    # given a past reference said on Monday 2023-05-08
    # when it is resolved
    found = find_past_date(text, SAID_ON)

    # then it names the day, month or year meant, as precisely as it was said
    assert found is not None
    assert found.iso == iso


@pytest.mark.parametrize("text", ["next Friday", "every Monday", "I like tea", "明天", "每周三"])
def test_find_past_date_ignores_what_is_not_a_past_reference(text):
    assert find_past_date(text, SAID_ON) is None


@pytest.mark.parametrize(
    ("text", "annotated"),
    [
        ("User adopted a dog last Saturday", "User adopted a dog last Saturday (2023-05-06)"),
        ("User moved to Lisbon last month", "User moved to Lisbon last month (2023-04)"),
        ("User flies to Tokyo next Friday", "User flies to Tokyo next Friday (2023-05-19)"),
        ("用户上周六领养了一只柯基", "用户上周六（2023-05-06）领养了一只柯基"),
        ("用户昨天辞职了，下周一去上班", "用户昨天（2023-05-07）辞职了，下周一（2023-05-15）去上班"),
        # already dated, recurring, or written out: unchanged
        ("User flies on Friday (2023-05-12)", "User flies on Friday (2023-05-12)"),
        ("User swims every Monday", "User swims every Monday"),
        ("User moved in 2015", "User moved in 2015"),
    ],
)
def test_annotate_dates_writes_the_absolute_date_after_each_expression(text, annotated):
    assert annotate_dates(text, SAID_ON) == annotated


def test_annotate_dates_can_leave_future_expressions_alone():
    # a past-tense statement: "on Sunday" is not next Sunday
    assert annotate_dates("User ran on Sunday, last Sunday", SAID_ON, future=False) == (
        "User ran on Sunday, last Sunday (2023-05-07)"
    )
