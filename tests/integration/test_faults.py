"""Faults in distributed mode, each ending with every turn stored and every job done exactly once:
the LLM failing for a while, and a worker killed in the middle of a consolidation.
(The broker being down is in test_distributed.py; concurrent lifecycle runs in
tests/memory_project/test_lifecycle_tasks.py.)"""

import time

import pytest

from memories.models import Memory, MemoryEvent
from sessions.models import ConversationTurn, Episode, ExtractionJob
from tests.factories import UserFactory, api_key_for
from tests.fakes.openai_server import FakeOpenAIServer
from tests.integration.harness import http, process_env, start_web, start_worker, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TURNS = [
    {"role": "user", "content": "I live in Lisbon."},
    {"role": "assistant", "content": "Lovely city."},
    {"role": "user", "content": "I prefer Python."},
    {"role": "assistant", "content": "Noted."},
]
EXTRACTION = {
    "memories": [
        {"content": "The user lives in Lisbon", "category": "fact", "importance": 0.7, "source_turns": [1]},
        {"content": "The user prefers Python", "category": "preference", "importance": 0.6, "source_turns": [3]},
    ]
}
EPISODE = {"summary": "The user said where they live and which language they prefer.", "goal": "", "outcome": ""}


def _logs(procs) -> str:
    return "\n".join(f"--- {p.name}\n{p.log()[-3000:]}" for p in procs)


def _llm_env(redis: str, server: FakeOpenAIServer, **extra) -> dict:
    # The provider's own retries are off so that every failure reaches the job and its retries.
    return process_env(
        redis,
        OPENAI_API_KEY="test-key",
        OPENAI_BASE_URL=server.base_url,
        LLM_MAX_RETRIES=0,
        TURN_EXTRACTION_MAX_PER_SESSION=0,  # only the session-end job: its attempts are the story
        **extra,
    )


def _end_session(base: str, key: str) -> str:
    status, body, _ = http("POST", f"{base}/api/v1/sessions/", key, {})
    assert status == 201, body
    session_id = body["id"]
    status, body, _ = http("POST", f"{base}/api/v1/sessions/{session_id}/turns/", key, {"turns": TURNS})
    assert status == 201, body
    status, body, _ = http("POST", f"{base}/api/v1/sessions/{session_id}/end/", key)
    assert status == 202, body
    return session_id


def _assert_consolidated_once(owner, session_id, *, attempts: int):
    job = ExtractionJob.objects.get(session_id=session_id)
    assert (job.kind, job.status, job.attempts, job.last_error) == ("session_end", "done", attempts, "")
    assert ConversationTurn.objects.filter(session_id=session_id).count() == len(TURNS)
    assert Episode.objects.filter(session_id=session_id).count() == 1
    assert Episode.objects.get(session_id=session_id).summary == EPISODE["summary"]
    contents = sorted(Memory.objects.filter(owner=owner).values_list("content", flat=True))
    assert contents == sorted(m["content"] for m in EXTRACTION["memories"])
    assert MemoryEvent.objects.filter(owner=owner, event_type="add").count() == len(contents)


def test_llm_timeouts_500s_and_malformed_json_are_retried_until_the_job_is_done_once(redis_server, log_dir, procs):
    db = 12
    redis_server.flush(db)
    owner = UserFactory(username="alice")
    key = api_key_for(owner)
    seen = []
    with FakeOpenAIServer() as server:
        server.reply_json(EXTRACTION, delay=4)  # attempt 1: slower than LLM_TIMEOUT_SECONDS
        server.reply_error(500)  # attempt 2
        server.reply_text("{'memories': [oops")  # attempt 3: invalid JSON ...
        server.reply_text("still not JSON")  # ... and its one repair round
        server.reply_json(EXTRACTION)  # attempt 4 succeeds
        server.reply_json(EPISODE)
        env = _llm_env(redis_server.url(db), server, LLM_TIMEOUT_SECONDS=1)
        try:
            procs.append(start_worker(env, log_dir))
            web, base = start_web(env, log_dir)
            procs.append(web)
            session_id = _end_session(base, key)

            def done():
                job = ExtractionJob.objects.filter(session_id=session_id).first()
                if job is not None and (job.status, job.attempts, job.last_error[:40]) not in seen:
                    seen.append((job.status, job.attempts, job.last_error[:40]))
                return job is not None and job.status == "done"

            try:
                wait_until(done, timeout=90, interval=0.05, message="job done")
            except AssertionError as error:
                raise AssertionError(f"{error}; seen {seen}\n{_logs(procs)}") from None
            time.sleep(1)
        finally:
            for proc in reversed(procs):
                proc.stop()
            redis_server.flush(db)
        chat_requests = len(server.chat_requests)

    _assert_consolidated_once(owner, session_id, attempts=4)
    assert chat_requests == 6
    failures = [(attempts, error) for status, attempts, error in seen if status == "failed"]
    assert [a for a, _ in failures] == [1, 2, 3], seen
    assert all(error.startswith("LLMError") for _, error in failures), seen


def test_a_worker_killed_mid_consolidation_is_redone_by_another_once(redis_server, log_dir, procs):
    db = 12
    redis_server.flush(db)
    owner = UserFactory(username="alice")
    key = api_key_for(owner)
    visibility = 2
    with FakeOpenAIServer() as server:
        server.reply_json(EXTRACTION, delay=60)  # the first worker waits on this when it is killed
        server.reply_json(EXTRACTION)
        server.reply_json(EPISODE)
        env = _llm_env(
            redis_server.url(db), server, LLM_TIMEOUT_SECONDS=120, CELERY_VISIBILITY_TIMEOUT_SECONDS=visibility
        )
        try:
            first = start_worker(env, log_dir, name="worker-1")
            procs.append(first)
            web, base = start_web(env, log_dir)
            procs.append(web)
            session_id = _end_session(base, key)
            wait_until(lambda: len(server.chat_requests) == 1, timeout=30, message="consolidation under way")
            job = ExtractionJob.objects.get(session_id=session_id)
            assert (job.status, job.attempts) == ("running", 1)

            first.kill()  # SIGKILL to the whole worker: no chance to ack, roll back or clean up
            first.popen.wait(10)
            time.sleep(visibility + 1)  # its unacknowledged message becomes visible again
            procs.append(start_worker(env, log_dir, name="worker-2"))
            try:
                wait_until(
                    lambda: ExtractionJob.objects.get(session_id=session_id).status == "done",
                    timeout=60,
                    message="job redone",
                )
            except AssertionError as error:
                raise AssertionError(f"{error}\n{_logs(procs)}") from None
            time.sleep(1)
        finally:
            for proc in reversed(procs):
                proc.stop()
            redis_server.flush(db)
        chat_requests = len(server.chat_requests)

    _assert_consolidated_once(owner, session_id, attempts=2)
    assert chat_requests == 3
