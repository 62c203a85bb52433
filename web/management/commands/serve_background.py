import os
import signal
import threading

from django.conf import settings
from django.core.management.base import BaseCommand

from memories.providers.embeddings import embedder_warm_up
from memories.services.background_round import background_step
from memory_project.background_process import background_process_run
from memory_project.batching import batch_buffers_flush
from memory_project.celery import PeriodicRunner


class Command(BaseCommand):
    help = (
        "The background process of the embedded mode (`serve` starts it): turn vectors and extraction "
        "jobs and the periodic tasks, at a lower CPU priority than the web workers."
    )

    def add_arguments(self, parser):
        parser.add_argument("--parent", type=int, help="Exit when this process (the server) is gone.")

    def handle(self, *args, parent, **options):
        stop = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())  # the round under way finishes first
        # Started at the default priority: reniced first, the start (the model, every task module)
        # took over a minute on a busy machine, and the periodic tasks waited that long for it when
        # it replaced a process that died.
        embedder_warm_up()
        # The periodic schedule (sweeps, the nightly lifecycle) runs here too, not in the web workers.
        runner = PeriodicRunner()
        # From here this thread, and the threads it starts (Linux renices per thread), yield the
        # cores to the web workers: this work can wait for their requests.
        os.nice(settings.BACKGROUND_NICE)
        runner.start()
        try:
            background_process_run(
                step=background_step, poll_seconds=settings.BACKGROUND_POLL_SECONDS, stop=stop, parent_pid=parent
            )
        finally:
            runner.stop()
            # What its tasks still buffered (the access counts of a reply's search) is written before it exits.
            batch_buffers_flush()
