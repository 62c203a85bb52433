"""The heuristic extractor on whole conversations, English and Chinese (seed 002 §7.2 "正常对话提取")."""

from datetime import UTC, datetime

from memories.extraction.heuristic import extract_candidates
from memories.extraction.provider import HeuristicProvider
from memories.providers.llm_types import CATEGORIES, ENTITY_KINDS, RETENTIONS
from tests.memories.extraction.builders import brief, turn

ENGLISH = [
    turn(1, "user", "Hi! I'm Sam, and I work at Acme Corp as a data engineer."),
    turn(2, "assistant", "Nice to meet you, Sam! I love helping with data pipelines. What are you working on?"),
    turn(3, "user", "I'm building an ingestion service called Pipewise. I prefer Python over Scala for pipeline code."),
    turn(4, "assistant", "Great choice. Which database will you use?"),
    turn(5, "user", "We decided to use PostgreSQL for the warehouse. I need to migrate the old tables by Friday."),
    turn(6, "user", "Always add type hints to Python code. What's the best way to batch inserts?"),
    turn(7, "assistant", "Use COPY or executemany with page sizes of about 1000 rows."),
    turn(8, "user", "Thanks, that helps!"),
]

CHINESE = [
    turn(1, "user", "你好！我叫李雷，我是一名产品经理。"),
    turn(2, "assistant", "你好李雷，很高兴认识你。我喜欢帮人整理需求。"),
    turn(3, "user", "我住在杭州，平时喜欢喝绿茶。"),
    turn(4, "user", "我们决定用 FastAPI 做后端。下周五之前我要完成接口文档。"),
    turn(5, "user", "记住，永远不要在周五部署。"),
    turn(6, "user", "今天天气怎么样？"),
    turn(7, "assistant", "今天杭州晴，气温 18 度。"),
]


def test_english_conversation_yields_exactly_the_users_memories():
    # given a conversation with introductions, a project, a preference, a decision, a todo, a rule,
    # a question and small talk
    # when the heuristic extracts it
    candidates = extract_candidates(ENGLISH, [])

    # then each durable statement of the user becomes one candidate, in the order said
    assert [brief(c) for c in candidates] == [
        ("User's name is Sam", "fact", 0.8, "name", "is", "Sam"),
        ("User works at Acme Corp as a data engineer", "fact", 0.8, "employer", "works at", "Acme Corp"),
        (
            "User is building an ingestion service called Pipewise",
            "project",
            0.6,
            "pipewise",
            "works on",
            "an ingestion service called Pipewise",
        ),
        (
            "User prefers Python over Scala for pipeline code",
            "preference",
            0.6,
            "programming language preference",
            "prefers",
            "Python",
        ),
        ("User decided to use PostgreSQL for the warehouse", "decision", 0.7, "database", "decided", "PostgreSQL"),
        (
            "User needs to migrate the old tables by Friday (2026-03-13)",
            "todo",
            0.6,
            "needs to migrate the old tables",
            "due",
            "2026-03-13",
        ),
        (
            "User wants the assistant to always add type hints to Python code",
            "rule",
            0.8,
            "add type hints to python code",
            "rule",
            "always",
        ),
    ]
    assert [c.source_sequences for c in candidates] == [[1], [1], [3], [3], [5], [5], [6]]
    assert [c.retention for c in candidates] == [
        "permanent",
        "permanent",
        "permanent",
        "permanent",
        "permanent",
        "short",
        "permanent",
    ]
    assert candidates[5].expires_at == datetime(2026, 3, 14, 0, 0, tzinfo=UTC)
    assert [c.entities for c in candidates] == [
        [("Sam", "person")],
        [("Acme Corp", "organization")],
        [("Pipewise", "project")],
        [("Python", "tool")],
        [("PostgreSQL", "tool")],
        [],
        [("Python", "tool")],
    ]
    assert {(c.action, c.explicit) for c in candidates} == {("remember", False)}


def test_chinese_conversation_keeps_chinese_wording_with_the_user_as_subject():
    # given a Chinese conversation with introductions, a residence and a habit, a decision, a dated
    # todo, an explicit rule, a question and the assistant's chit-chat
    # when the heuristic extracts it
    candidates = extract_candidates(CHINESE, [])

    # then the statements come back as "用户…", with the English slot keys the English rules use
    assert [brief(c) for c in candidates] == [
        ("用户的名字是李雷", "fact", 0.8, "name", "is", "李雷"),
        ("用户是一名产品经理", "fact", 0.8, "occupation", "is", "产品经理"),
        ("用户住在杭州", "fact", 0.8, "residence", "lives in", "杭州"),
        ("用户平时喜欢喝绿茶", "preference", 0.6, "绿茶", "opinion", "likes"),
        ("用户决定使用 FastAPI 做后端", "decision", 0.7, "web framework", "decided", "FastAPI"),
        ("用户下周五（2026-03-20）之前要完成接口文档", "todo", 0.6, "要完成接口文档", "due", "2026-03-20"),
        ("用户要求永远不要在周五部署", "rule", 0.9, "在周五部署", "rule", "never"),
    ]
    assert [c.source_sequences for c in candidates] == [[1], [1], [3], [3], [4], [4], [5]]
    assert candidates[5].retention == "long"
    assert candidates[5].expires_at == datetime(2026, 3, 21, 0, 0, tzinfo=UTC)
    assert candidates[6].retention == "permanent"
    assert candidates[6].explicit is True
    assert candidates[2].entities == [("杭州", "place")]


def test_every_candidate_fits_the_interface():
    # given both conversations
    # when the provider extracts them
    provider = HeuristicProvider()
    candidates = provider.extract(turns=ENGLISH, existing=[]) + provider.extract(turns=CHINESE, existing=[])

    # then every field holds a value the engine accepts (seed 002 §7.2: content/category/importance)
    assert len(candidates) == 14
    for c in candidates:
        assert c.content and c.content == c.content.strip()
        assert c.category in CATEGORIES
        assert 0.0 <= c.importance <= 1.0
        assert 0.0 <= c.confidence <= 1.0
        assert c.retention in RETENTIONS
        assert c.action in ("remember", "forget")
        assert all(kind in ENTITY_KINDS for _, kind in c.entities)
        assert c.subject == c.subject.lower().strip()
        assert c.predicate == c.predicate.lower().strip()


def test_the_assistant_saying_i_like_is_not_a_memory_about_the_user():
    # given only assistant and system turns in the first person
    turns = [
        turn(1, "assistant", "I love Python and I prefer tabs."),
        turn(2, "system", "You are a helpful assistant. Always answer in English."),
        turn(3, "assistant", "My name is Claude and I live in the cloud."),
    ]

    # when extracted
    # then nothing is attributed to the user
    assert extract_candidates(turns, []) == []
