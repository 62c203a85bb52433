"""What every management command shares so that its output can be piped (issue 14): the result on
stdout; questions, progress and logs on stderr; logs quiet unless asked for; a confirmation before
anything destructive, skipped with --yes."""

import os
import sys

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

# Commands that run a server or a worker: their logs are their output, at the configured level.
SERVERS = frozenset({"serve", "runserver", "celery", "mcp", "run_worker", "runworker", "daphne"})
# -v 2 and -v 3 bring the logs back.
LEVEL_FOR_VERBOSITY = {2: "INFO", 3: "DEBUG"}


def _verbosity(argv: list[str]) -> int:
    for index, arg in enumerate(argv):
        for prefix in ("--verbosity=", "-v"):
            if arg.startswith(prefix) and arg[len(prefix) :].isdigit():
                return int(arg[len(prefix) :])
        if arg in ("-v", "--verbosity") and index + 1 < len(argv) and argv[index + 1].isdigit():
            return int(argv[index + 1])
    return 1


def cli_environment(argv: list[str], environ=os.environ) -> None:
    """Before Django starts: a command other than a server logs only errors unless LOG_LEVEL or -v
    says otherwise, and the model libraries draw no download or loading bars into its output."""
    command = argv[1] if len(argv) > 1 else ""
    if command in SERVERS:
        return
    verbosity = _verbosity(argv[2:])
    environ.setdefault("LOG_LEVEL", LEVEL_FOR_VERBOSITY.get(verbosity, "ERROR"))
    environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    environ.setdefault("TQDM_DISABLE", "1")


def owner_option(parser, **kwargs) -> None:
    """The --owner USERNAME option of a command that works on one owner's data (`command_owner` reads it)."""
    parser.add_argument("--owner", metavar="USERNAME", **kwargs)


def command_owner(username: str, *, hint: str = ""):
    """The user `username` names, or the CommandError every command answers an unknown one with."""
    owner = get_user_model().objects.filter(username=username).first()
    if owner is None:
        raise CommandError(f"no such user: {username}{hint}")
    return owner


def confirm(command, question: str, *, yes: bool) -> None:
    """Ask `question` on stderr (stdout stays the command's result) and go on only on yes; without a
    terminal to ask on, refuse unless --yes was given."""
    if yes:
        return
    stdin = sys.stdin
    if stdin is None or not stdin.isatty():
        raise CommandError("refusing without --yes when not run interactively; nothing was changed")
    command.stderr.write(f"{question} [y/N] ", ending="")
    command.stderr.flush()
    answer = stdin.readline()
    if answer.strip().lower() not in ("y", "yes"):
        raise CommandError("not confirmed; nothing was changed")


class Progress:
    """A one-line progress bar on stderr, redrawn in place when the percentage moves."""

    def __init__(self, out, total: int, label: str, width: int = 30):
        self.out, self.total, self.label, self.width = out, max(total, 0), label, width
        self.done = 0
        self._shown = -1

    def advance(self, n: int = 1) -> None:
        self.done += n
        self._draw(100 if not self.total else min(100, int(self.done * 100 / self.total)))

    def _draw(self, percent: int) -> None:
        if percent == self._shown:  # at most 101 frames, however long the run
            return
        self._shown = percent
        filled = self.width * percent // 100
        bar = "#" * filled + "." * (self.width - filled)
        self.out.write(f"\r{self.label:<10} [{bar}] {percent:3d}% {self.done}/{self.total}", ending="")
        self.out.flush()

    def finish(self) -> None:
        self.done = max(self.done, self.total)
        self._draw(100)
        self.out.write("")
