"""memory_project.cli: command output on stdout, logs quiet unless asked for (issue 14)."""

import pytest

from memory_project.cli import cli_environment


@pytest.mark.parametrize(
    ("argv", "given", "expected"),
    [
        (["manage.py", "memory", "stats", "--owner", "a"], {}, "ERROR"),
        (["manage.py", "erase", "--owner", "a", "-v", "2"], {}, "INFO"),
        (["manage.py", "memory", "search", "x", "--verbosity=3"], {}, "DEBUG"),
        (["manage.py", "memory", "stats", "-v2"], {}, "INFO"),
        (["manage.py", "memory", "stats"], {"LOG_LEVEL": "WARNING"}, "WARNING"),
        (["manage.py", "serve"], {}, None),
        (["manage.py", "celery"], {}, None),
    ],
)
def test_commands_log_quietly_unless_asked_servers_as_configured(argv, given, expected):
    environ = dict(given)

    cli_environment(argv, environ)

    assert environ.get("LOG_LEVEL") == expected
    if argv[1] not in ("serve", "celery"):
        assert (environ["HF_HUB_DISABLE_PROGRESS_BARS"], environ["TQDM_DISABLE"]) == ("1", "1")
    else:
        assert "HF_HUB_DISABLE_PROGRESS_BARS" not in environ
