"""Embedded `serve`'s background process: web workers only store; it gives turns their vectors and
runs the pending extraction jobs, read from the database; the server's master restarts it."""

import os
import sys
import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import Memory
from memory_project.background import background_drain, background_process_attach
from memory_project.background_process import (
    BackgroundProcess,
    background_process_overdue_reset,
    background_process_run,
    background_step,
)
from sessions.models import ConversationTurn, ExtractionJob
from sessions.services.sessions import session_end, turn_append_many
from tests.conftest import client_for
from tests.factories import ChatSessionFactory, UserFactory
from tests.integration.harness import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

TURNS = [
    {"role": "user", "speaker": "Ana", "content": "Remember that my sister Lucia lives in Porto."},
    {"role": "assistant", "speaker": "Bot", "content": "Noted: Lucia lives in Porto."},
]


@pytest.fixture
def attached():
    """This process is a web worker of a server with a background process."""
    background_process_attach()
    yield
    background_process_attach(False)


def test_an_attached_web_process_stores_turns_and_jobs_and_runs_neither(attached):
    # given an open session of a web worker attached to a background process
    owner = UserFactory(username="ana")
    session = ChatSessionFactory(owner=owner)

    # when a turn is posted over the API and the session is ended, and the worker's thread is idle
    answer = client_for(owner).post(f"/api/v1/sessions/{session.id}/turns/", TURNS[0], format="json")
    ended = client_for(owner).post(f"/api/v1/sessions/{session.id}/end/")
    background_drain()

    # then both were answered with the turn stored without a vector and every job still pending
    assert (answer.status_code, ended.status_code) == (201, 202)
    assert list(ConversationTurn.objects.filter(session=session).values_list("embedding", flat=True)) == [None]
    assert sorted(ExtractionJob.objects.filter(session=session).values_list("kind", "status")) == [
        ("session_end", "pending"),
        ("turn", "pending"),
    ]


def test_an_attached_web_process_embeds_the_turns_that_waited_too_long_itself(attached, settings):
    # given a turn stored by an attached web worker, still without a vector 30 s later (the background
    # process starved), with 10 s allowed, and the worker's once-a-second check due
    settings.BACKGROUND_MAX_LAG_SECONDS = 10
    owner = UserFactory(username="ana")
    session = ChatSessionFactory(owner=owner)
    turn_append_many(session=session, turns=TURNS[:1])
    ConversationTurn.objects.filter(session=session).update(received_at=timezone.now() - timedelta(seconds=30))
    background_process_overdue_reset()

    # when the worker stores the next turn
    answer = client_for(owner).post(f"/api/v1/sessions/{session.id}/turns/", TURNS[1], format="json")
    background_drain()

    # then it embedded both turns on its own background thread
    assert answer.status_code == 201
    assert ConversationTurn.objects.filter(session=session, embedding__isnull=True).count() == 0
    assert ConversationTurn.objects.filter(session=session).count() == 2


def test_a_round_embeds_the_waiting_turns_and_runs_the_pending_jobs(attached):
    # given turns stored and a session ended by an attached web worker
    owner = UserFactory(username="ana")
    session = ChatSessionFactory(owner=owner)
    turn_append_many(session=session, turns=TURNS)
    session_end(session=session)

    # when the background process runs rounds until one finds nothing to do
    rounds = [background_step()]
    while rounds[-1]:
        rounds.append(background_step())

    # then every turn has its vector, every job is done, and the turn's statement is a memory
    assert ConversationTurn.objects.filter(session=session, embedding__isnull=True).count() == 0
    assert ConversationTurn.objects.filter(session=session).count() == 2
    assert set(ExtractionJob.objects.filter(session=session).values_list("status", flat=True)) == {"done"}
    assert list(Memory.objects.filter(owner=owner).values_list("content", flat=True)) == [
        "Ana's sister Lucia lives in Porto"
    ]
    assert rounds[-1] == 0


def test_a_round_with_nothing_waiting_does_nothing():
    assert background_step() == 0


def test_the_loop_ends_when_the_server_that_started_it_is_gone():
    # given a parent pid that is not this process's parent
    stop = threading.Event()

    # when the loop runs for that parent
    background_process_run(poll_seconds=0.01, stop=stop, parent_pid=os.getppid() + 1)

    # then it returned by itself, without being stopped
    assert not stop.is_set()


def test_the_master_starts_the_process_again_when_it_exits_and_stops_it_with_the_server():
    # given a supervised child process
    supervised = BackgroundProcess(command=[sys.executable, "-c", "import time; time.sleep(60)"], restart_after=0)
    supervised.start()
    first = wait_until(lambda: supervised.pid, 20, message="the child started")

    # when the child is killed
    os.kill(first, 9)

    # then another one is started, and stopping the supervisor ends it
    second = wait_until(lambda: supervised.pid if supervised.pid != first else None, 20, message="a new child")
    supervised.stop()
    assert second != first
    assert supervised._proc.poll() is not None
