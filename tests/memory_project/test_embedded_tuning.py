"""The embedded server's own settings: a file postgresql.conf includes, written before the server starts."""

import pytest

from memory_project.embedded_pg.server import TUNING_FILE, TUNING_INCLUDE, _write_tuning
from memory_project.settings import database


def test_tuning_is_included_once_and_follows_the_setting(tmp_path, settings):
    # given a fresh data folder's postgresql.conf
    conf = tmp_path / "postgresql.conf"
    conf.write_text("max_connections = 100\n")
    settings.EMBEDDED_PG_SHARED_BUFFERS = "256MB"
    settings.EMBEDDED_PG_MAX_CONNECTIONS = 150

    # when the tuning is written twice, then with another size
    _write_tuning(tmp_path)
    _write_tuning(tmp_path)
    first = (tmp_path / TUNING_FILE).read_text()
    settings.EMBEDDED_PG_SHARED_BUFFERS = "1GB"
    _write_tuning(tmp_path)

    # then postgresql.conf keeps its settings and includes the file exactly once
    text = conf.read_text()
    assert text.startswith("max_connections = 100\n")
    assert text.count(TUNING_INCLUDE) == 1
    assert first == "shared_buffers = '256MB'\nmax_connections = 150\n"
    assert (tmp_path / TUNING_FILE).read_text() == "shared_buffers = '1GB'\nmax_connections = 150\n"


@pytest.mark.parametrize(
    ("memory_bytes", "expected"),
    [(256 * 2**20, "128MB"), (2 * 2**30, "512MB"), (24 * 2**30, "1024MB"), (512 * 2**30, "1024MB")],
)
def test_the_default_buffer_pool_is_a_quarter_of_memory_within_bounds(monkeypatch, memory_bytes, expected):
    # given a machine with this much memory in 4 kB pages
    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": memory_bytes // 4096}
    monkeypatch.setattr(database.os, "sysconf", pages.__getitem__)

    # when the default is computed, then it is a quarter, at least 128MB and at most 1GB
    assert database._buffers_default() == expected


def test_the_default_buffer_pool_without_a_memory_figure(monkeypatch):
    # given a platform that cannot tell its memory
    def unknown(name):
        raise ValueError(name)

    monkeypatch.setattr(database.os, "sysconf", unknown)

    # then the default is the fixed size it was before
    assert database._buffers_default() == "512MB"
