"""Episode summaries of a finished conversation: goal, outcome, names, tools, what the user told and finished."""

from datetime import UTC, datetime

import pytest

from memories.extraction.provider import HeuristicProvider
from tests.memories.extraction.builders import turn


def test_an_episode_names_its_goal_outcome_entities_and_tools():
    # given a session with small talk, a request, a tool failure, a switch of tool and a result
    turns = [
        turn(1, "user", "Hi!"),
        turn(
            2, "user", "Can you summarize the article at https://example.com/app for me? It's for the Acme Corp team."
        ),
        turn(3, "assistant", "Sure, let me fetch it."),
        turn(4, "tool", "", tool_name="fetch_url", tool_error="EmptyContent: page body is empty"),
        turn(5, "assistant", "The page is a React single-page app, so I'll use the browser tool instead."),
        turn(6, "tool", "<html>…</html>", tool_name="browser"),
        turn(7, "assistant", "Done: the article compares pgvector and Pinecone and recommends pgvector for Acme Corp."),
        turn(8, "user", "Thanks!"),
    ]

    # when summarised as an episode
    episode = HeuristicProvider().summarize_episode(turns=turns)

    # then the goal is the first real request and the outcome the last conclusion
    assert episode.goal == "Can you summarize the article at https://example.com/app for me?"
    assert episode.outcome == "Done: the article compares pgvector and Pinecone and recommends pgvector for Acme Corp."
    assert episode.tools_used == ["fetch_url", "browser"]
    assert episode.entities == ["fetch_url", "browser", "Acme Corp", "React", "Pinecone"]
    # and the summary says what happened: the request, the lesson learned, the result
    assert episode.summary == (
        "User asked the assistant to summarize the article at https://example.com/app. "
        'When fetch_url fails with "EmptyContent: page body is empty", use the browser tool instead. '
        "Outcome: the article compares pgvector and Pinecone and recommends pgvector for Acme Corp. "
        "Tools used: fetch_url, browser."
    )
    assert episode.completed == []


def test_a_chinese_episode_finds_quoted_and_organisation_names():
    turns = [
        turn(1, "user", "你好"),
        turn(2, "user", "帮我把《季度报告》翻译成英文，发给字节跳动公司的王经理。"),
        turn(3, "assistant", "好的，正在翻译。"),
        turn(4, "tool", "ok", tool_name="translate"),
        turn(5, "assistant", "翻译完成，已经发送给王经理。"),
    ]

    episode = HeuristicProvider().summarize_episode(turns=turns)

    assert (episode.goal, episode.outcome) == (
        "帮我把《季度报告》翻译成英文，发给字节跳动公司的王经理。",
        "翻译完成，已经发送给王经理。",
    )
    assert episode.entities == ["季度报告", "字节跳动公司"]
    assert episode.tools_used == ["translate"]


@pytest.mark.parametrize(
    "turns", [[], [turn(1, "user", "ok")], [turn(1, "user", "Hi!"), turn(2, "assistant", "Hello!")]]
)
def test_an_episode_without_substance_is_empty(turns):
    episode = HeuristicProvider().summarize_episode(turns=turns)

    assert (episode.summary, episode.goal, episode.outcome, episode.entities, episode.tools_used) == (
        "",
        "",
        "",
        [],
        [],
    )


def test_an_episode_of_life_news_says_what_the_user_told_then_what_they_asked():
    # given a user who tells two pieces of news, then asks a question the assistant answers
    said_at = datetime(2023, 5, 8, 18, 30, tzinfo=UTC)
    turns = [
        turn(1, "user", "Hey! Quick life update: I finally moved from Berlin to Lisbon last month.", at=said_at),
        turn(2, "assistant", "That's a big change! How are you finding Lisbon so far?", at=said_at),
        turn(3, "user", "Loving it. Can you recommend a good neighbourhood for cafés?", at=said_at),
        turn(4, "assistant", "Príncipe Real and Santos both have great cafés.", at=said_at),
        turn(5, "user", "Nice. My new flat is in Alfama, right below the castle.", at=said_at),
    ]

    # when summarised as an episode
    episode = HeuristicProvider().summarize_episode(turns=turns)

    # then two sentences say it: the news (dated) and the request, no turn pasted in
    assert episode.summary == (
        "User finally moved from Berlin to Lisbon last month (2023-04); User's new flat is in Alfama, right below "
        "the castle. User asked the assistant to recommend a good neighbourhood for cafés."
    )


def test_an_episode_reports_the_tasks_the_user_finished():
    # given a user who reports two finished tasks and then changes the subject
    said_at = datetime(2023, 5, 8, 21, 0, tzinfo=UTC)
    turns = [
        turn(1, "user", "Phew, I finally finished my tax return yesterday.", at=said_at),
        turn(2, "assistant", "Well done, that's always a relief.", at=said_at),
        turn(3, "user", "I also submitted the grant application this morning.", at=said_at),
        turn(4, "user", "Anyway, let's plan my week.", at=said_at),
    ]

    # when summarised as an episode
    episode = HeuristicProvider().summarize_episode(turns=turns)

    # then the finished tasks are named once, with the day each was done
    assert episode.summary == (
        "User suggested to plan their week. User finished the tax return and submitted the grant application."
    )
    assert episode.completed == [
        ("finished the tax return", datetime(2023, 5, 7, 12, 0, tzinfo=UTC)),
        ("submitted the grant application", datetime(2023, 5, 8, 21, 0, tzinfo=UTC)),
    ]


def test_a_chinese_episode_is_summarised_in_chinese():
    said_at = datetime(2023, 5, 8, 22, 0, tzinfo=UTC)
    turns = [
        turn(1, "user", "我们上周六领养了一只柯基，叫豆豆。", at=said_at),
        turn(2, "assistant", "好可爱的名字！柯基很活泼。", at=said_at),
        turn(3, "user", "柯基一天要遛几次比较好？", at=said_at),
    ]

    episode = HeuristicProvider().summarize_episode(turns=turns)

    assert episode.summary == "用户上周六（2023-05-06）领养了一只柯基，叫豆豆。用户问：柯基一天要遛几次比较好？"
