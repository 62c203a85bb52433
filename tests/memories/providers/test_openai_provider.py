"""The OpenAI provider against a local OpenAI-compatible server, through the real `openai` client
over a real socket: JSON mode, schema validation, one repair round, retries and timeouts."""

import json
import socket
import time
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from memories.providers.llm import get_llm
from memories.providers.llm_types import LLMError
from memories.providers.openai_llm import OpenAIProvider
from tests.fakes.openai_server import FakeOpenAIServer
from tests.memories.extraction.builders import turn

TURNS = [
    turn(1, "user", "I prefer green tea. I need to finish the report by Friday."),
    turn(2, "assistant", "Noted!"),
]
GREEN_TEA = {
    "content": "User prefers green tea",
    "category": "preference",
    "importance": 0.6,
    "retention": "permanent",
    "subject": "Drink Preference",
    "predicate": "prefers",
    "value": "green tea",
    "source_turns": [1],
    "confidence": 0.9,
    "entities": [],
    "action": "remember",
    "explicit": False,
    "contradicts": "",
}
REPORT = {
    "content": "User needs to finish the report by Friday (2026-03-13)",
    "category": "todo",
    "importance": "medium",
    "retention": "short",
    "due_date": "2026-03-13",
    "subject": "finish the report",
    "predicate": "due",
    "value": "2026-03-13",
    "source_turns": [1, 7],
    "entities": [{"name": "report", "kind": "document"}],
}


def test_extract_asks_for_a_json_object_and_returns_validated_candidates(openai_settings, fake_openai):
    # given a server that answers with two memories
    fake_openai.reply_json({"memories": [GREEN_TEA, REPORT]})

    # when the configured provider extracts a conversation
    candidates = get_llm().extract(turns=TURNS, existing=["User lives in Berlin"])

    # then the candidates are validated and normalised
    assert [(c.content, c.category, c.importance, c.retention) for c in candidates] == [
        ("User prefers green tea", "preference", 0.6, "permanent"),
        ("User needs to finish the report by Friday (2026-03-13)", "todo", 0.6, "short"),
    ]
    assert [(c.subject, c.predicate, c.value) for c in candidates] == [
        ("drink preference", "prefers", "green tea"),
        ("finish the report", "due", "2026-03-13"),
    ]
    assert [c.source_sequences for c in candidates] == [[1], [1]]
    assert candidates[1].expires_at == datetime(2026, 3, 14, 0, 0, tzinfo=UTC)
    assert candidates[1].entities == [("report", "other")]
    # and the request was one JSON-mode chat completion with the conversation and what is known
    [request] = fake_openai.chat_requests
    assert request.body["model"] == "test-model"
    assert request.body["response_format"] == {"type": "json_object"}
    assert request.headers["authorization"] == "Bearer sk-test"
    assert [m["role"] for m in request.messages] == ["system", "user"]
    prompt = request.last_user_message
    assert "Today is 2026-03-10 (Tuesday)." in prompt
    assert "1. User lives in Berlin" in prompt
    assert "[1] user 2026-03-10 09:01: I prefer green tea. I need to finish the report by Friday." in prompt
    assert "[2] assistant 2026-03-10 09:02: Noted!" in prompt


def test_only_the_first_fifty_existing_memories_are_sent(openai_settings, fake_openai):
    # given 60 existing memories, most important first (seed 002 §7.2 "Token 控制")
    existing = [f"Memory number {i}" for i in range(1, 61)]
    fake_openai.reply_json({"memories": []})

    # when extracting
    get_llm().extract(turns=TURNS, existing=existing)

    # then the prompt lists the top 50 and nothing after them
    prompt = fake_openai.chat_requests[0].last_user_message
    assert "50. Memory number 50" in prompt
    assert "Memory number 51" not in prompt
    assert prompt.count("Memory number") == 50


def test_an_existing_memory_returned_verbatim_is_dropped(openai_settings, fake_openai):
    # given a model that repeats a known memory despite the instructions
    fake_openai.reply_json({"memories": [GREEN_TEA]})

    # when extracting with that memory known
    candidates = get_llm().extract(turns=TURNS, existing=["User prefers green tea."])

    # then it is not proposed again
    assert candidates == []


def test_malformed_json_gets_one_repair_request(openai_settings, fake_openai):
    # given a first reply that is not JSON and a repaired second one
    fake_openai.reply_text('{"memories": [ {"content": "User prefers green tea", ')
    fake_openai.reply_json({"memories": [GREEN_TEA]})

    # when extracting
    candidates = get_llm().extract(turns=TURNS, existing=[])

    # then the repaired answer is used
    assert [c.content for c in candidates] == ["User prefers green tea"]
    # and the repair request sent the bad output back with the reason
    first, repair = fake_openai.chat_requests
    assert repair.messages[:2] == first.messages
    assert repair.messages[2] == {
        "role": "assistant",
        "content": '{"memories": [ {"content": "User prefers green tea", ',
    }
    assert repair.messages[3]["role"] == "user"
    assert repair.messages[3]["content"].startswith(
        "Your previous reply could not be used: the reply is not valid JSON"
    )


def test_a_schema_mismatch_gets_one_repair_request(openai_settings, fake_openai):
    # given valid JSON with an unknown category and a missing importance, then a correct reply
    fake_openai.reply_json({"memories": [{"content": "User prefers green tea", "category": "hobby"}]})
    fake_openai.reply_json({"memories": [GREEN_TEA]})

    # when extracting
    candidates = get_llm().extract(turns=TURNS, existing=[])

    # then the validation errors were named in the repair request and the repaired answer is used
    assert [c.category for c in candidates] == ["preference"]
    reason = fake_openai.chat_requests[1].messages[-1]["content"]
    assert "memories.0.category: Input should be 'preference', 'fact'" in reason
    assert "memories.0.importance: Field required" in reason


def test_malformed_twice_raises_llm_error_and_the_caller_can_carry_on(openai_settings, fake_openai):
    # given a model that cannot produce valid JSON (seed 002 §7.2 "LLM 返回非法 JSON")
    fake_openai.reply_text("Sure! Here are the memories: - green tea")
    fake_openai.reply_text("```json\n{memories: [}\n```")

    # when extracting
    with pytest.raises(LLMError) as failure:
        get_llm().extract(turns=TURNS, existing=[])

    # then one clear error says what went wrong, after exactly one repair attempt
    assert str(failure.value) == (
        "extract: test-model returned unusable output twice (one repair attempted): "
        "the reply is not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"
    )
    assert len(fake_openai.chat_requests) == 2


def test_timeouts_are_retried_and_then_raise_llm_error(openai_settings, fake_openai):
    # given a server slower than the timeout, every time
    openai_settings.LLM_TIMEOUT_SECONDS = 0.2
    for _ in range(3):
        fake_openai.reply_json({"memories": []}, delay=2.0)

    # when extracting
    started = time.monotonic()
    with pytest.raises(LLMError) as failure:
        get_llm().extract(turns=TURNS, existing=[])
    elapsed = time.monotonic() - started

    # then the first attempt and LLM_MAX_RETRIES retries were made, quickly
    assert len(fake_openai.chat_requests) == 3
    assert "after 3 attempt(s): APITimeoutError" in str(failure.value)
    assert elapsed < 5


def test_a_rate_limit_is_retried_and_then_succeeds(openai_settings, fake_openai):
    # given a 429 before a good answer
    fake_openai.reply_error(429, "Rate limit reached")
    fake_openai.reply_json({"memories": [GREEN_TEA]})

    # when extracting
    candidates = get_llm().extract(turns=TURNS, existing=[])

    # then the second request got the answer
    assert [c.content for c in candidates] == ["User prefers green tea"]
    assert len(fake_openai.chat_requests) == 2


def test_the_servers_retry_after_is_honoured(openai_settings, fake_openai):
    # given a 429 that asks for a 300 ms pause
    fake_openai.reply_error(429, "Rate limit reached", headers={"retry-after-ms": "300"})
    fake_openai.reply_json({"memories": []})

    # when extracting
    get_llm().extract(turns=TURNS, existing=[])

    # then the retry waited that long
    first, second = fake_openai.chat_requests
    assert second.received_at - first.received_at >= 0.28


def test_server_errors_are_retried_up_to_the_limit(openai_settings, fake_openai):
    # given a server that keeps failing
    for _ in range(5):
        fake_openai.reply_error(503, "overloaded")

    # when extracting
    with pytest.raises(LLMError) as failure:
        get_llm().extract(turns=TURNS, existing=[])

    # then it gave up after 1 + LLM_MAX_RETRIES attempts
    assert len(fake_openai.chat_requests) == 3
    assert str(failure.value).endswith("after 3 attempt(s): HTTP 503: overloaded")


def test_a_client_error_is_not_retried(openai_settings, fake_openai):
    # given a rejected key
    fake_openai.reply_error(401, "Incorrect API key provided")

    # when extracting
    with pytest.raises(LLMError) as failure:
        get_llm().extract(turns=TURNS, existing=[])

    # then it fails at once with the server's reason
    assert len(fake_openai.chat_requests) == 1
    assert str(failure.value) == (
        f"extract: test-model at {fake_openai.base_url} refused the request: HTTP 401: Incorrect API key provided"
    )


def test_an_unreachable_server_raises_llm_error(settings):
    # given a base URL where nothing listens
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = OpenAIProvider(
        api_key="sk-test", base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout=1, max_retries=1, backoff=0.01
    )

    # when extracting
    with pytest.raises(LLMError) as failure:
        provider.extract(turns=TURNS, existing=[])

    # then the connection error is reported after the retry
    assert "after 2 attempt(s): APIConnectionError" in str(failure.value)


def test_a_bare_json_array_and_loose_values_are_accepted(openai_settings, fake_openai):
    # given a model that answers the seeds' way: a list, importance as a word, seed category names
    fake_openai.reply_text(
        json.dumps(
            [
                {"content": "用户偏好用 pytest 而非 unittest", "category": "skill_usage", "importance": "high"},
                {
                    "content": "用户提到下周三有产品评审会议",
                    "category": "tasks",
                    "importance": "low",
                    "retention": "7d",
                },
            ],
            ensure_ascii=False,
        )
    )

    # when extracting
    candidates = get_llm().extract(turns=TURNS, existing=[])

    # then the answer is used as is, mapped to this product's names
    assert [(c.content, c.category, c.importance, c.retention) for c in candidates] == [
        ("用户偏好用 pytest 而非 unittest", "workflow", 0.8, "long"),
        ("用户提到下周三有产品评审会议", "todo", 0.4, "short"),
    ]
    assert len(fake_openai.chat_requests) == 1


def test_a_due_date_expires_at_the_end_of_the_day_in_the_conversations_timezone(openai_settings, fake_openai):
    # given a conversation held in Shanghai and a todo due on 2026-03-13
    shanghai = ZoneInfo("Asia/Shanghai")
    turns = [turn(1, "user", "我周五之前要交报告", at=datetime(2026, 3, 10, 22, 0, tzinfo=shanghai))]
    fake_openai.reply_json({"memories": [dict(REPORT, retention="permanent")]})

    # when extracting
    [candidate] = get_llm().extract(turns=turns, existing=[])

    # then expires_at is midnight after the due day, Shanghai time, and it no longer claims permanence
    assert candidate.expires_at == datetime(2026, 3, 14, 0, 0, tzinfo=shanghai)
    assert candidate.retention == "long"


def test_contradicts_points_at_the_existing_memory_verbatim(openai_settings, fake_openai):
    # given a model that names the replaced memory by its number in the list
    existing = ["User lives in Berlin", "User prefers green tea"]
    fake_openai.reply_json(
        {"memories": [dict(GREEN_TEA, content="User prefers coffee", value="coffee", contradicts="2")]}
    )

    # when extracting
    [candidate] = get_llm().extract(turns=TURNS, existing=existing)

    # then the candidate carries that memory's exact text
    assert candidate.contradicts == "User prefers green tea"


def test_forget_requests_come_back_as_forget_actions(openai_settings, fake_openai):
    fake_openai.reply_json(
        {"memories": [dict(GREEN_TEA, content="User likes jazz", action="forget", explicit=True, contradicts="")]}
    )

    [candidate] = get_llm().extract(turns=TURNS, existing=["User likes jazz"])

    assert (candidate.action, candidate.explicit, candidate.content) == ("forget", True, "User likes jazz")


def test_summarize_episode_returns_the_models_episode_with_the_called_tools(openai_settings, fake_openai):
    # given a session with a tool call
    turns = [*TURNS, turn(3, "tool", "ok", tool_name="calendar")]
    fake_openai.reply_json(
        {
            "summary": "The user shared a tea preference and a report deadline.",
            "goal": "Plan the week",
            "outcome": "Deadline noted",
            "entities": ["report"],
            "tools_used": None,
        }
    )

    # when summarised
    episode = get_llm().summarize_episode(turns=turns)

    # then the fields are the model's, and tools include those actually called
    assert (episode.summary, episode.goal, episode.outcome) == (
        "The user shared a tea preference and a report deadline.",
        "Plan the week",
        "Deadline noted",
    )
    assert (episode.entities, episode.tools_used) == (["report"], ["calendar"])
    assert "[3] tool calendar 2026-03-10 09:03: ok" in fake_openai.chat_requests[0].last_user_message
    assert episode.completed == []


def test_summarize_episode_reads_the_tasks_the_user_finished(openai_settings, fake_openai):
    # given a model that names the tasks the user finished (once each, blanks dropped)
    fake_openai.reply_json(
        {
            "summary": "The user finished their taxes and planned the week.",
            "completed": ["filed the tax return", "filed the tax return", " ", "submitted the grant application"],
        }
    )

    # when summarised
    episode = get_llm().summarize_episode(turns=TURNS)

    # then they are the episode's completions, to be dated when the session ended
    assert episode.completed == [("filed the tax return", None), ("submitted the grant application", None)]
    assert '"completed"' in fake_openai.chat_requests[0].messages[0]["content"]


def test_summarize_trims_an_overlong_answer_to_the_budget(openai_settings, fake_openai):
    # given a model that ignores the length limit
    fake_openai.reply_json(
        {"summary": "User moved to Berlin in 2021. " + "They talked about many unimportant things at length. " * 20}
    )

    # when asked for 20 tokens
    summary = get_llm().summarize(text="a long conversation", max_tokens=20)

    # then the caller's budget holds
    assert summary == "User moved to Berlin in 2021."
    assert "Write at most 20 tokens" in fake_openai.chat_requests[0].last_user_message


def test_compress_returns_one_to_three_summaries_and_repairs_more(openai_settings, fake_openai):
    # given a model that first returns four summaries, then three
    memories = ["User likes tea", "User likes green tea", "User lives in Berlin", "User works at Acme"]
    fake_openai.reply_json({"summaries": ["a", "b", "c", "d"]})
    fake_openai.reply_json(
        {"summaries": ["User likes tea, green tea in particular.", "User lives in Berlin.", "User works at Acme."]}
    )

    # when compressed
    summaries = get_llm().compress(memories=memories)

    # then the repaired answer is used
    assert summaries == ["User likes tea, green tea in particular.", "User lives in Berlin.", "User works at Acme."]
    assert "summaries: List should have at most 3 items" in fake_openai.chat_requests[1].messages[-1]["content"]


def test_nothing_to_do_makes_no_request(openai_settings, fake_openai):
    provider = get_llm()

    assert provider.extract(turns=[], existing=["x"]) == []
    assert provider.summarize(text="  ", max_tokens=50) == ""
    assert provider.compress(memories=["only one"]) == ["only one"]
    assert provider.summarize_episode(turns=[]).summary == ""
    assert fake_openai.requests == []


def test_the_fake_server_answers_embeddings_for_other_tests():
    # given the fake server used through the real client's embeddings API
    from openai import OpenAI

    with FakeOpenAIServer() as server:
        client = OpenAI(api_key="sk-test", base_url=server.base_url, max_retries=0)

        # when embedding two texts
        response = client.embeddings.create(model="text-embedding-3-small", input=["a", "b"], dimensions=4)

    # then each gets a deterministic unit vector of the asked size
    vectors = [item.embedding for item in response.data]
    assert [len(v) for v in vectors] == [4, 4]
    assert vectors[0] != vectors[1]
    assert abs(sum(x * x for x in vectors[0]) - 1) < 1e-9
