"""Extractive summaries: rolling summary / compaction, compression of old memories."""

import pytest

from memories.extraction.provider import HeuristicProvider
from memory_project.text import estimate_tokens

DIALOGUE = """user: Hi there!
assistant: Hello! How can I help?
user: I'm migrating our billing service from MySQL to PostgreSQL 16 this quarter.
assistant: Great. The main risks are the AUTO_INCREMENT columns and the zero dates in MySQL.
user: We have about 40 tables and the invoices table has 12 million rows.
assistant: For the invoices table, use pgloader with batches of 50000 rows.
user: Thanks!
assistant: You're welcome. Remember to rebuild the indexes after the load.
user: ok"""


def test_text_within_the_budget_comes_back_whole():
    # given a short text and a generous budget
    # when summarised
    summary = HeuristicProvider().summarize(text="User moved to Berlin.\n  They work at Acme.", max_tokens=100)

    # then nothing is dropped, only whitespace is tidied
    assert summary == "User moved to Berlin. They work at Acme."


def test_a_long_dialogue_keeps_its_most_informative_sentences_in_order():
    # given a dialogue larger than the budget
    # when summarised into 60 tokens
    summary = HeuristicProvider().summarize(text=DIALOGUE, max_tokens=60)

    # then the facts survive and the greetings do not
    assert summary == (
        "user: I'm migrating our billing service from MySQL to PostgreSQL 16 this quarter. "
        "user: We have about 40 tables and the invoices table has 12 million rows. "
        "assistant: For the invoices table, use pgloader with batches of 50000 rows."
    )
    assert estimate_tokens(summary) <= 60


@pytest.mark.parametrize("budget", [3, 10, 30, 60, 100])
def test_a_summary_never_exceeds_its_budget(budget):
    # given any budget
    # when summarised
    summary = HeuristicProvider().summarize(text=DIALOGUE, max_tokens=budget)

    # then the summary fits and is not empty
    assert 0 < estimate_tokens(summary) <= budget


def test_a_sentence_larger_than_the_budget_is_cut_at_a_word():
    # given a budget smaller than any sentence
    summary = HeuristicProvider().summarize(text=DIALOGUE, max_tokens=10)

    # then the best sentence is truncated with an ellipsis
    assert summary == "user: We have about 40 tables and…"


def test_a_chinese_dialogue_drops_the_greetings():
    # given a Chinese dialogue
    text = "\n".join(
        [
            "用户：你好！",
            "助手：你好，有什么可以帮你？",
            "用户：我们要把账单系统从 MySQL 迁移到 PostgreSQL 16。",
            "助手：主要风险是自增列和零日期。",
            "用户：发票表有一千二百万行。",
            "助手：建议用 pgloader 分批导入，每批五万行。",
            "用户：谢谢！",
        ]
    )

    # when summarised into 40 tokens
    summary = HeuristicProvider().summarize(text=text, max_tokens=40)

    # then the facts are kept, joined without spaces
    assert summary == "用户：我们要把账单系统从 MySQL 迁移到 PostgreSQL 16。用户：发票表有一千二百万行。"


@pytest.mark.parametrize(("text", "budget"), [("", 100), ("   ", 100), ("Something to keep.", 0)])
def test_nothing_to_summarise_or_no_budget_gives_an_empty_summary(text, budget):
    assert HeuristicProvider().summarize(text=text, max_tokens=budget) == ""


def test_compression_groups_related_memories_into_at_most_three_summaries():
    # given old memories on three topics plus a duplicate
    memories = [
        "User prefers green tea",
        "User likes green tea with honey",
        "User works at Acme Corp",
        "User is a data engineer at Acme Corp",
        "User prefers green tea.",
        "User lives in Berlin",
        "User moved to Berlin in 2021",
    ]

    # when compressed
    summaries = HeuristicProvider().compress(memories=memories)

    # then each topic becomes one summary that keeps every distinct fact, the duplicate once
    assert summaries == [
        "User prefers green tea; User likes green tea with honey.",
        "User works at Acme Corp; User is a data engineer at Acme Corp.",
        "User lives in Berlin; User moved to Berlin in 2021.",
    ]


def test_compression_never_returns_more_than_three_summaries():
    # given memories on five unrelated topics
    memories = [
        "User plays chess",
        "User owns a bicycle",
        "User speaks French",
        "User collects stamps",
        "User bakes bread",
    ]

    # when compressed
    summaries = HeuristicProvider().compress(memories=memories)

    # then the smallest groups were merged until three remain, and nothing was lost
    assert len(summaries) == 3
    assert all(m in " ".join(summaries) for m in memories)


def test_compression_of_chinese_memories_uses_chinese_punctuation():
    summaries = HeuristicProvider().compress(memories=["用户喜欢喝绿茶", "用户喜欢在早上喝绿茶", "用户住在杭州"])

    assert summaries == ["用户喜欢喝绿茶；用户喜欢在早上喝绿茶。", "用户住在杭州。"]


def test_compression_of_nothing_is_nothing():
    assert HeuristicProvider().compress(memories=[]) == []
    assert HeuristicProvider().compress(memories=["", "  "]) == []
