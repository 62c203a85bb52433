"""Embedded `serve`'s background process: web workers only store; it gives turns their vectors and
runs the pending extraction jobs, read from the database; the server's master restarts it."""

import os
import sys
import threading
import time

import pytest

from memories.services.background_round import background_step
from memory_project.background import background_drain
from memory_project.background_process import BackgroundProcess, background_process_run
from sessions.models import ConversationTurn, ExtractionJob
from tests.conftest import client_for
from tests.factories import ChatSessionFactory, UserFactory
from tests.integration.harness import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

TURNS = [
    {"role": "user", "speaker": "Ana", "content": "Remember that my sister Lucia lives in Porto."},
    {"role": "assistant", "speaker": "Bot", "content": "Noted: Lucia lives in Porto."},
]


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


def test_the_loop_ends_when_the_server_that_started_it_is_gone():
    # given a parent pid that is not this process's parent
    stop = threading.Event()

    # when the loop runs for that parent
    background_process_run(step=background_step, poll_seconds=0.01, stop=stop, parent_pid=os.getppid() + 1)

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


def test_the_master_restarts_the_process_while_it_forks_long_lived_workers():
    # given a master thread that keeps forking children which live on without exec (gunicorn's workers)
    forked, forking = [], threading.Event()

    def fork_workers():
        while not forking.is_set():
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            forked.append(pid)
            time.sleep(0.002)

    forker = threading.Thread(target=fork_workers)
    forker.start()
    supervised = BackgroundProcess(command=[sys.executable, "-c", "import time; time.sleep(60)"], restart_after=0)
    try:
        # when the supervisor starts its child, which is then killed, in the middle of those forks
        before = len(forked)
        supervised.start()
        first = wait_until(lambda: supervised.pid, 20, message="the child started")
        forked_meanwhile = len(forked) - before
        os.kill(first, 9)

        # then it noticed and started another (a fork that inherited its exec pipe made it wait forever)
        second = wait_until(lambda: supervised.pid if supervised.pid != first else None, 20, message="a new child")
    finally:
        forking.set()
        forker.join()
        for pid in forked:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        supervised.stop()
    assert second != first
    assert forked_meanwhile > 0
