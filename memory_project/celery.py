"""The Celery app, and the in-process stand-in for beat used when there is no broker.

Worker behaviour (acks_late, reject_on_worker_lost, prefetch 1, Redis visibility timeout) and the
beat schedule live in settings under CELERY_*; this module only loads them.
"""

import logging
import os
import threading

from celery import Celery, Task
from celery.schedules import maybe_schedule
from celery.signals import worker_init, worker_process_shutdown, worker_shutdown
from kombu.exceptions import OperationalError as BrokerError

from memory_project.batching import batch_buffers_flush
from memory_project.dbconn import Leadership

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings")

app = Celery("memory_project")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

logger = logging.getLogger(__name__)


@worker_init.connect
def _lower_worker_priority(**_) -> None:
    """A worker beside the web tier on the same cores may yield them to its requests (WORKER_NICE);
    its pool processes inherit this."""
    from django.conf import settings

    if settings.WORKER_NICE:
        os.nice(settings.WORKER_NICE)


@worker_process_shutdown.connect
@worker_shutdown.connect
def _send_buffered_batches(**_) -> None:
    """A worker process about to exit sends what its batch buffers still hold (the access counts of
    the searches its tasks ran): a prefork child leaves with os._exit, so nothing later would."""
    batch_buffers_flush()


# The options of a task that is safe to run again: acknowledged once it has run (a worker lost
# mid-task leaves the message to another) and retried with exponential backoff on any error;
# each task adds its own max_retries.
RETRY_WITH_BACKOFF = {"acks_late": True, "autoretry_for": (Exception,), "retry_backoff": True}


class BrokerTolerantTask(Task):
    """Publishing never fails the caller. Used for work whose row is already committed (the sweeper
    re-sends it) or that is best-effort, so a broker outage never turns a stored request into a 500.
    `apply_async` returns None when the message could not be sent."""

    def apply_async(self, *args, **kwargs):
        try:
            return super().apply_async(*args, **kwargs)
        except (BrokerError, OSError) as exc:
            logger.warning("broker unavailable, %s not sent: %s", self.name, exc)
            return None


# Leadership key (memory_project.dbconn.Leadership) of the in-process stand-in for beat.
PERIODIC_LEADER_KEY = 1


class PeriodicRunner(threading.Thread):
    """Runs the beat schedule's tasks in this process, on the same schedule beat would use.

    Embedded mode has no beat and no worker: tasks are eager, so each entry runs to completion in
    this thread (a sweep runs the jobs it finds). Beat's own rule applies: an entry is first due one
    interval after start, and a crontab entry at its next time.

    Every web worker process starts one, and only the one holding a database lock runs the schedule
    (the others retry every `max_sleep` seconds), so periodic work runs once however many processes
    serve, and moves to another process when its leader dies.
    """

    def __init__(self, schedule: dict | None = None, *, max_sleep: float = 5.0):
        super().__init__(name="periodic-runner", daemon=True)
        # Task modules are discovered lazily; a worker imports them at start, and so must this.
        app.loader.import_default_modules()
        entries = app.conf.beat_schedule if schedule is None else schedule
        self.entries = {
            name: dict(entry, schedule=maybe_schedule(entry["schedule"], app=app)) for name, entry in entries.items()
        }
        self.max_sleep = max_sleep
        self.stopped = threading.Event()
        self.last_run_at = {}
        self.leadership = Leadership(PERIODIC_LEADER_KEY)
        self.leading = False

    def run(self):
        try:
            self._loop()
        finally:
            from django.db import connections

            self.leadership.release()
            connections.close_all()  # this thread's connections, which nothing else would close

    def _loop(self):
        while not self.stopped.is_set():
            if not self.leadership.hold():
                self.leading = False
                self.stopped.wait(self.max_sleep)
                continue
            if not self.leading:
                # Taking over counts as a start: entries are first due one interval from now.
                self.leading = True
                start = app.now()
                self.last_run_at = {name: start for name in self.entries}
                logger.info("this process (pid %s) runs the periodic tasks", os.getpid())
            wait = self.max_sleep
            for name, entry in self.entries.items():
                if self.stopped.is_set():
                    break
                due, next_in = entry["schedule"].is_due(self.last_run_at[name])
                if due:
                    self.last_run_at[name] = app.now()
                    self.run_entry(name, entry)
                    due, next_in = entry["schedule"].is_due(self.last_run_at[name])
                wait = min(wait, max(0.05, next_in))
            self.stopped.wait(wait)

    def run_entry(self, name: str, entry: dict) -> None:
        from django.db import close_old_connections

        close_old_connections()
        try:
            result = app.tasks[entry["task"]].apply(args=entry.get("args", ()), kwargs=entry.get("kwargs", {}))
            if result.failed():
                logger.error("periodic task %s failed: %r", name, result.result)
        except Exception:  # the runner outlives any one bad run
            logger.exception("periodic task %s failed", name)
        finally:
            close_old_connections()

    def stop(self, timeout: float | None = 10) -> None:
        self.stopped.set()
        if self.is_alive():
            self.join(timeout)


def periodic_runner_start(schedule: dict | None = None, **kwargs) -> PeriodicRunner:
    runner = PeriodicRunner(schedule, **kwargs)
    runner.start()
    logger.info("in-process periodic runner started: %s", ", ".join(runner.entries))
    return runner
