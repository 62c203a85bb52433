"""The embedded server's own settings: a file postgresql.conf includes, written before the server starts."""

from memory_project.embedded_pg.server import TUNING_FILE, TUNING_INCLUDE, _write_tuning


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
