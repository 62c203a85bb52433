"""Session end writes an episode that says what happened and puts the tasks the user finished (not
raw turns) into the scratchpad's recent completions (DESIGN §3 Scratchpad, §4 "Session end")."""

from datetime import UTC, datetime, timedelta

from memories.selectors.context import context_build
from sessions.models import Episode, Scratchpad
from sessions.services.scratchpad import scratchpad_complete
from tests.engine import conversation, end_and_consolidate

MONDAY_EVENING = datetime(2023, 5, 8, 21, 0, tzinfo=UTC)


def test_finished_tasks_become_recent_completions_and_the_episode_says_so(user):
    # given a session where the user reports two finished tasks, then asks to plan the week
    session = conversation(
        user,
        "user: Phew, I finally finished my tax return yesterday.",
        "assistant: Well done, that's always a relief.",
        "user: I also submitted the grant application this morning.",
        "user: Anyway, let's plan my week.",
        start=MONDAY_EVENING,
    )

    # when it ends and is consolidated
    end_and_consolidate(session)

    # then the scratchpad holds the two tasks, dated by the day each was done, and no raw turn
    pad = Scratchpad.objects.get(owner=user, agent="")
    assert pad.recent_completions == [
        {"task": "finished the tax return", "completed_at": "2023-05-07T12:00:00+00:00"},
        {"task": "submitted the grant application", "completed_at": "2023-05-08T21:02:00+00:00"},
    ]
    # and the episode is a short account, not the turns pasted together
    episode = Episode.objects.get(session=session)
    assert episode.summary == (
        "User suggested to plan their week. User finished the tax return and submitted the grant application."
    )
    # and the prompt shows what was done
    prompt = context_build(owner=user, query="")["system_prompt"]
    assert "Done: finished the tax return (2023-05-07)" in prompt
    assert "Done: submitted the grant application (2023-05-08)" in prompt
    assert "Anyway, let's plan my week." not in prompt


def test_a_session_that_finishes_nothing_adds_no_completion(user):
    # given a session with a request and life news, but no finished task
    session = conversation(
        user,
        "user: We adopted a border collie named Biscuit last Saturday!",
        "assistant: Congratulations!",
        "user: Can you suggest a food brand for him?",
        start=MONDAY_EVENING,
    )

    # when it ends and is consolidated
    end_and_consolidate(session)

    # then the scratchpad gained nothing, and the episode tells the news and the request
    assert list(Scratchpad.objects.filter(owner=user).values_list("recent_completions", flat=True)) == []
    assert Episode.objects.get(session=session).summary == (
        "User and their family adopted a border collie named Biscuit last Saturday (2023-05-06). "
        "User asked the assistant to suggest a food brand for him."
    )


def test_a_chinese_session_completes_in_chinese(user):
    session = conversation(
        user,
        "user: 报告终于写完了，昨天交给了老板。",
        "assistant: 辛苦了！",
        "user: 护照也办好了。",
        start=MONDAY_EVENING,
    )

    end_and_consolidate(session)

    pad = Scratchpad.objects.get(owner=user, agent="")
    assert [c["task"] for c in pad.recent_completions] == ["报告写完了", "护照办好了"]
    assert Episode.objects.get(session=session).summary == "用户完成了：报告写完了、护照办好了。"


def test_completions_stay_in_time_order_once_each_and_at_most_five(user):
    # given completions reported out of order, one of them twice
    base = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)
    for day, task in [(3, "c"), (1, "a"), (2, "b"), (3, "c"), (5, "e"), (4, "d"), (6, "f")]:
        scratchpad_complete(owner=user, task=task, completed_at=base + timedelta(days=day))

    # when the scratchpad is read
    pad = Scratchpad.objects.get(owner=user, agent="")

    # then it keeps the five latest, oldest first, each once
    assert [(c["task"], c["completed_at"][:10]) for c in pad.recent_completions] == [
        ("b", "2024-01-03"),
        ("c", "2024-01-04"),
        ("d", "2024-01-05"),
        ("e", "2024-01-06"),
        ("f", "2024-01-07"),
    ]
