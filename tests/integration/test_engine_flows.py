"""The memory engine end to end, in process (eager jobs): conversations in, context and search out.

Seed 002 §7.5: conversation → session end → extracted memories → visible in the next session's
prompt → faded out after a long inactivity; a changed preference replaces the old one in the
context; English and Chinese; the OpenAI-compatible provider driving a real consolidation.
"""

from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from memories.drafts import MemoryDraft
from memories.models import Memory, MemoryRelation
from memories.providers.llm import get_llm_cache_clear
from memories.services.decisions import memory_write
from memories.services.lifecycle import lifecycle_run
from memories.tasks import extraction_job_run
from sessions.models import ChatSession, Episode, ExtractionJob
from sessions.services.sessions import session_end
from tests.engine import capture_events, conversation, of_type
from tests.fakes.openai_server import FakeOpenAIServer

QUESTION = "What should I drink in the morning?"


def _chat(api, turns: list[tuple[str, str]], *, end: bool = True) -> str:
    """A new session through the API holding `turns`; ended (and so consolidated) unless told not to."""
    session_id = api.post("/api/v1/sessions/", {"channel": "web"}, format="json").json()["id"]
    body = {"turns": [{"role": role, "content": content} for role, content in turns]}
    assert api.post(f"/api/v1/sessions/{session_id}/turns/", body, format="json").status_code == 201
    if end:
        assert api.post(f"/api/v1/sessions/{session_id}/end/").status_code == 202
    return session_id


def _context(api, **params) -> dict:
    response = api.get("/api/v1/context/?" + urlencode(params))
    assert response.status_code == 200
    return response.json()


def _search(api, query: str) -> list[dict]:
    response = api.post("/api/v1/search/", {"query": query, "top_k": 5}, format="json")
    assert response.status_code == 200
    return response.json()["results"]


# --- full lifecycle ---------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_memory_from_one_session_is_in_the_next_sessions_prompt_until_it_fades(api, user, tmp_path):
    # given a first conversation, ended through the API (consolidated before the response returns)
    first = _chat(
        api,
        [
            ("user", "I prefer tea in the morning."),
            ("assistant", "Noted."),
            ("user", "My favorite color is blue."),
        ],
    )
    assert ChatSession.objects.get(pk=first).consolidated is True
    job = ExtractionJob.objects.get(session_id=first, kind="session_end")
    assert (job.status, job.result["added"]) == ("done", 2)

    # when the next session starts with a question
    second = _chat(api, [("user", QUESTION)], end=False)
    context = _context(api, query=QUESTION, session_id=second)

    # then the memories are pinned into its prompt (equally strong: the most recent first)
    pinned = [(m["content"], m["kind"], m["strength"]) for m in context["memories"]]
    assert pinned == [
        ("User's favorite color is blue", "pinned", 0.6),
        ("User prefers tea in the morning", "pinned", 0.6),
    ]
    assert (
        "# What you know about the user\n- User's favorite color is blue\n- User prefers tea in the morning"
        in (context["system_prompt"])
    )

    # and after 200 days without a mention the lifecycle fades them out of the prompt (0.6 × 0.99^193 < 0.2)
    run = lifecycle_run(owner=user, now=timezone.now() + timedelta(days=200), export_dir=tmp_path)
    assert run.status == "completed", run.error
    assert set(Memory.objects.filter(owner=user).values_list("status", flat=True)) == {"archived"}
    later = _context(api, query=QUESTION)
    assert later["memories"] == []
    assert "tea" not in later["system_prompt"]
    # but, archived, it can still be searched for on demand
    assert _search(api, "tea in the morning")[0]["content"] == "User prefers tea in the morning"


# --- a changed preference ---------------------------------------------------------------------


def _preference_change_flow(api, user) -> None:
    # given a session where the user states a preference
    _chat(
        api,
        [
            ("user", "I prefer tea in the morning."),
            ("assistant", "Tea it is."),
            ("user", "Thanks for remembering."),
        ],
    )
    tea = Memory.objects.get(owner=user, content="User prefers tea in the morning")

    # and a later session where it changes
    _chat(
        api,
        [
            ("user", "Actually I now prefer coffee in the morning."),
            ("assistant", "Coffee from now on."),
            ("user", "Great, thank you."),
        ],
    )

    # when a new session asks a related question
    session_id = _chat(api, [("user", QUESTION)], end=False)
    context = _context(api, query=QUESTION, session_id=session_id)

    # then the context holds the new preference and not the old one
    prompt = context["system_prompt"]
    assert "User prefers coffee in the morning" in prompt
    assert "tea" not in prompt.lower()
    contents = [m["content"] for m in context["memories"]]
    assert "User prefers coffee in the morning" in contents
    assert all("tea" not in c.lower() for c in contents)
    # and the old memory is superseded (halved and archived, out of the prompt) rather than deleted
    tea.refresh_from_db()
    coffee = Memory.objects.get(owner=user, content="User prefers coffee in the morning")
    assert (tea.strength, tea.status) == (0.3, "archived")
    assert MemoryRelation.objects.filter(source=coffee, target=tea, type="supersedes").exists()


@pytest.mark.django_db(transaction=True)
def test_a_changed_preference_replaces_the_old_one_in_the_context(api, user):
    _preference_change_flow(api, user)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_changed_preference_replaces_the_old_one_in_the_context_with_the_local_model(api, user, local_embedder):
    _preference_change_flow(api, user)


# --- English and Chinese ----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_english_conversation_through_the_whole_pipeline(api, user):
    # given an English conversation with several kinds of memory
    _chat(
        api,
        [
            ("user", "I live in Berlin."),
            ("user", "I prefer tea in the morning."),
            ("user", "I decided to use PostgreSQL for the project."),
            ("user", "Always answer in French."),
            ("assistant", "D'accord."),
        ],
    )

    # then each memory is in its category
    assert sorted(Memory.objects.filter(owner=user).values_list("category", "content")) == [
        ("decision", "User decided to use PostgreSQL for the project"),
        ("fact", "User lives in Berlin"),
        ("preference", "User prefers tea in the morning"),
        ("rule", "User wants the assistant to always answer in French"),
    ]
    # and search finds them by a word
    assert _search(api, "PostgreSQL")[0]["content"] == "User decided to use PostgreSQL for the project"


@pytest.mark.django_db(transaction=True)
def test_a_chinese_conversation_through_the_whole_pipeline(api, user):
    # given a Chinese conversation
    _chat(
        api,
        [
            ("user", "我喜欢喝绿茶。"),
            ("assistant", "好的。"),
            ("user", "我住在上海。"),
            ("user", "我在阿里巴巴工作。"),
            ("user", "以后请用中文回答我。"),
        ],
    )

    # then its memories are stored in Chinese, each in its category
    assert sorted(Memory.objects.filter(owner=user).values_list("category", "content")) == [
        ("fact", "用户住在上海"),
        ("fact", "用户在阿里巴巴工作"),
        ("preference", "用户喜欢喝绿茶"),
        ("rule", "用户要求以后用中文回答用户"),
    ]
    # and a two- or three-character query finds the right one first
    assert _search(api, "绿茶")[0]["content"] == "用户喜欢喝绿茶"
    assert _search(api, "上海")[0]["content"] == "用户住在上海"
    assert _search(api, "阿里巴")[0]["content"] == "用户在阿里巴巴工作"
    # and the next session's context pins them
    prompt = _context(api, query="我喜欢喝什么？")["system_prompt"]
    assert "- 用户喜欢喝绿茶" in prompt


# --- the OpenAI-compatible provider -----------------------------------------------------------

EXTRACTION = {
    "memories": [
        {
            "content": "User prefers green tea",
            "category": "preference",
            "importance": 0.8,
            "subject": "drink preference",
            "predicate": "prefers",
            "value": "green tea",
            "source_turns": [1],
        },
        {
            "content": "User works at Acme",
            "category": "fact",
            "importance": "medium",
            "source_turns": [3],
            "entities": [{"name": "Acme", "kind": "organization"}],
        },
    ]
}
EPISODE = {"summary": "The user talked about tea and work.", "goal": "", "outcome": "", "entities": ["Acme"]}
TURNS = (
    "user: I really like green tea.",
    "assistant: Green tea is lovely.",
    "user: I work at Acme these days.",
)


@pytest.fixture
def llm_server(settings):
    """The OpenAI provider pointed at a local fake server, with fast retries."""
    with FakeOpenAIServer() as server:
        settings.LLM_PROVIDER = "openai"
        settings.OPENAI_API_KEY = "sk-test"
        settings.OPENAI_BASE_URL = server.base_url
        settings.LLM_MODEL = "test-model"
        settings.LLM_TIMEOUT_SECONDS = 5.0
        settings.LLM_MAX_RETRIES = 1
        settings.LLM_RETRY_BACKOFF_SECONDS = 0.01
        settings.LLM_RETRY_MAX_BACKOFF_SECONDS = 0.05
        get_llm_cache_clear()
        yield server
    get_llm_cache_clear()


@pytest.mark.django_db
def test_the_openai_provider_drives_a_consolidation(user, llm_server):
    # given an existing memory and an ended session, and the fake LLM's answers
    memory_write(owner=user, draft=MemoryDraft(content="User lives in Berlin", importance="high"), actor="test")
    session = conversation(user, *TURNS)
    job = session_end(session=session)
    llm_server.reply_json(EXTRACTION)
    llm_server.reply_json(EPISODE)

    # when the job runs
    assert extraction_job_run.delay(str(job.pk)).get() == "done"

    # then the memories are the LLM's, with its categories and importances, from the turns it named
    tea = Memory.objects.get(content="User prefers green tea")
    acme = Memory.objects.get(content="User works at Acme")
    assert (tea.category, tea.importance, tea.strength, tea.subject, tea.structured_data) == (
        "preference",
        0.8,
        0.8,
        "drink preference",
        {"value": "green tea"},
    )
    assert (acme.category, acme.importance, acme.strength, acme.source) == ("fact", 0.6, 0.6, "extraction")
    assert list(tea.sources.values_list("turn__sequence", flat=True)) == [1]
    assert list(acme.sources.values_list("turn__sequence", flat=True)) == [3]
    assert list(acme.entities.values_list("name", "kind")) == [("Acme", "organization")]
    assert Episode.objects.get(session=session).summary == "The user talked about tea and work."
    # and the LLM was shown the conversation and the existing memory
    extract_request = llm_server.chat_requests[0].last_user_message
    assert "I work at Acme these days." in extract_request
    assert "User lives in Berlin" in extract_request
    job.refresh_from_db()
    assert (job.status, job.attempts, job.result["added"]) == ("done", 1, 2)


@pytest.mark.django_db
def test_malformed_llm_output_fails_the_job_cleanly_and_a_later_run_consolidates_once(user, llm_server, monkeypatch):
    # given an ended session and an LLM that answers with broken JSON twice (the answer and its repair)
    session = conversation(user, *TURNS)
    job = session_end(session=session)
    llm_server.reply_text("{not json")
    llm_server.reply_text("still not json")
    events = capture_events(monkeypatch)

    # when the job runs
    outcome = extraction_job_run.delay(str(job.pk)).get()

    # then it failed with the reason recorded and one attempt counted, and nothing was half-written
    job.refresh_from_db()
    assert outcome == "failed"
    assert (job.status, job.attempts) == ("failed", 1)
    assert job.last_error.startswith("LLMError: extract: test-model returned unusable output twice")
    assert Memory.objects.filter(owner=user).count() == 0
    assert Episode.objects.count() == 0
    assert ChatSession.objects.get(pk=session.pk).consolidated is False
    assert of_type(events, "extraction.completed") == []
    assert len(llm_server.chat_requests) == 2

    # and when the job is retried later with a working LLM
    llm_server.reply_json(EXTRACTION)
    llm_server.reply_json(EPISODE)
    assert extraction_job_run.delay(str(job.pk)).get() == "done"

    # then the session is consolidated once
    job.refresh_from_db()
    assert (job.status, job.attempts, job.last_error, job.result["added"]) == ("done", 2, "", 2)
    assert sorted(Memory.objects.filter(owner=user).values_list("content", flat=True)) == [
        "User prefers green tea",
        "User works at Acme",
    ]
    assert ChatSession.objects.get(pk=session.pk).consolidated is True
    assert Episode.objects.filter(session=session).count() == 1
    assert len(of_type(events, "extraction.completed")) == 1
    # and a further delivery of the job does nothing
    assert extraction_job_run.delay(str(job.pk)).get() == "skipped"
    assert Memory.objects.filter(owner=user).count() == 2
