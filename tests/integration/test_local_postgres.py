"""cbo's throwaway PostgreSQL: created on first start, reused on the second, stopped and restarted."""

from __future__ import annotations

import os
import stat

import psycopg
import pytest

from cbo.localpg import LocalPostgres


@pytest.fixture
def server(tmp_path):
    local = LocalPostgres(tmp_path / "postgres")
    yield local
    local.destroy()


def test_start_twice_reuses_the_running_server(server):
    first = server.start()
    pid = _postmaster_pid(first.data_dir)
    second = server.start()
    assert second == first
    assert _postmaster_pid(second.data_dir) == pid
    with psycopg.connect(**first.conninfo()) as conn:
        assert conn.execute("select current_user").fetchone() == ("cbo",)


def test_server_listens_on_loopback_with_a_private_password(server):
    info = server.start()
    assert info.host == "127.0.0.1"
    assert stat.S_IMODE(os.stat(info.password_file).st_mode) == 0o600
    assert info.password() not in info.url and info.password() not in info.jdbc_url
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(host=info.host, port=info.port, user=info.user, dbname=info.database,
                        password="wrong", connect_timeout=5)
    if os.geteuid() == 0:  # PostgreSQL refuses root: it must run as an unprivileged user
        assert info.os_user != "root"


def test_stop_then_start_again(server):
    info = server.start()
    assert server.status() == info
    assert server.stop() is True
    assert server.status() is None
    assert server.stop() is False
    again = server.start()
    assert again.data_dir == info.data_dir  # same cluster, data kept
    with psycopg.connect(**again.conninfo()) as conn:
        assert conn.execute("select 1").fetchone() == (1,)


def _postmaster_pid(data_dir: str) -> int:
    # The first line of postmaster.pid is the server's process id.
    with open(os.path.join(data_dir, "postmaster.pid")) as handle:
        return int(handle.readline())
