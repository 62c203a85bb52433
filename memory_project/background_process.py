"""Embedded mode's background process: the per-turn work a Celery worker takes in distributed mode.

Without a broker, tasks run where they are sent: a turn's vector on the web process's background
thread, an extraction job in the request that queued it, after its commit. Under twenty concurrent
clients on two cores that work shared the requests' cores and interpreter lock, and a turn post that
queued an extraction answered in seconds. So `serve` starts one more process beside its web workers,
at a lower CPU priority (BACKGROUND_NICE), and the web workers only store
(`memory_project.background.background_process_attached`); the periodic runner moves there too. It
needs no messages: the stored turns
without a vector and the pending ExtractionJob rows are already the queues of record, which it reads
every BACKGROUND_POLL_SECONDS when it found nothing to do. If it dies, nothing is lost: the server's
master starts it again, and it takes up what was left waiting. A turn still without a vector after
BACKGROUND_MAX_LAG_SECONDS (the process starved of CPU by the requests, or gone) is filled by the
web requests that store turns, one waiting turn for each they store, before they answer: the intake
slows until vector search is back within about that lag
(memories.services.turn_embeddings.turn_embeddings_request).
"""

import logging
import os
import subprocess
import threading
from collections.abc import Callable

from django.db import connections

logger = logging.getLogger(__name__)

# Popen waits for its child's exec on a pipe whose write end is closed at exec. gunicorn's master
# forks workers (os.fork, no exec) from its main thread while the supervisor thread below starts the
# background process: a worker forked inside that window kept a copy of the write end for its whole
# life, and the supervisor waited on the pipe forever, never noticing the process it had started die
# (seen under load: no new background process, no periodic leader). So no fork of this process
# happens while a Popen of ours is under way.
_spawning = threading.Lock()


def _spawning_reset_in_child() -> None:
    global _spawning
    _spawning = threading.Lock()


os.register_at_fork(
    before=lambda: _spawning.acquire(),
    after_in_parent=lambda: _spawning.release(),
    after_in_child=_spawning_reset_in_child,
)


def background_process_run(
    *, step: Callable[[], int], poll_seconds: float, stop: threading.Event, parent_pid: int | None = None
) -> None:
    """Run rounds of `step` (it returns how much it did; 0: nothing was waiting) until `stop` is set
    or the parent process (the server) is gone. The round itself is the pipeline's
    (memories.services.background_round), passed in by the command that starts this process."""
    while not stop.is_set():
        if parent_pid is not None and os.getppid() != parent_pid:
            logger.warning("the server that started this background process is gone; exiting")
            return
        try:
            done = step()
        except Exception:  # a round that failed (the database restarting) must not end the process
            logger.exception("a background round failed")
            connections.close_all()
            done = 0
        if not done:
            stop.wait(poll_seconds)


class BackgroundProcess:
    """A child process of the server's master, started again whenever it exits, until stopped."""

    def __init__(self, *, command: list[str], restart_after: float = 1.0):
        self.command, self.restart_after = command, restart_after
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._thread = threading.Thread(target=self._supervise, name="background-process", daemon=True)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        self._thread.start()

    def _supervise(self) -> None:
        while True:
            with self._lock:
                if self._stopping.is_set():
                    return
                # Its output goes with the server's; it lowers its own priority as it starts.
                with _spawning:
                    self._proc = subprocess.Popen(self.command)
            # poll(), not wait(): gunicorn's master reaps every child that exits, this one included,
            # and a child reaped by someone else polls as exited.
            while self._proc.poll() is None:
                if self._stopping.wait(0.5):
                    return
            logger.warning("the background process exited (%s); starting it again", self._proc.returncode)
            if self._stopping.wait(self.restart_after):
                return

    def stop(self, timeout: float = 30) -> None:
        with self._lock:
            self._stopping.set()
            proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()  # it finishes the round under way
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        if self._thread.is_alive():
            self._thread.join(timeout)
