"""cbo's throwaway MariaDB: created on first start, reused on the second, stopped without a trace."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pymysql
import pytest

from cbo.connectors.mariadb import client as mariadb
from cbo.connectors.mariadb.server import LocalMariaDB


@pytest.fixture
def server(tmp_path):
    local = LocalMariaDB(tmp_path / "mariadb")
    yield local
    local.destroy()


def _connect(info, password=None):
    return mariadb.connect(mariadb.MariaAddress(info.host, info.port, info.database, info.user,
                                                password or info.password()))


def test_start_twice_reuses_the_running_server(server):
    first = server.start()
    second = server.start()
    assert second == first
    with _connect(first) as conn, conn.cursor() as cur:
        cur.execute("select current_user(), database(), @@collation_server")
        assert cur.fetchone() == ("cbo@127.0.0.1", "cbo", "utf8mb4_nopad_bin")


def test_server_listens_on_loopback_with_a_private_password(server):
    info = server.start()
    assert info.host == "127.0.0.1"
    assert stat.S_IMODE(os.stat(info.password_file).st_mode) == 0o600
    assert info.password() not in info.url and info.password() not in info.jdbc_url
    with pytest.raises(pymysql.err.OperationalError):
        pymysql.connect(host=info.host, port=info.port, user=info.user, password="wrong", connect_timeout=5)
    if os.geteuid() == 0:
        assert info.os_user != "root"
    # The password is on no command line and in none of the server's files.
    with open(f"/proc/{info.pid}/cmdline", "rb") as handle:
        assert info.password().encode() not in handle.read()
    for path in Path(info.data_dir).parent.glob("*.log"):
        assert info.password() not in path.read_text(errors="replace")
    assert info.password() not in server.state_file.read_text()


def test_stop_leaves_no_process_and_start_again_keeps_the_data(server):
    info = server.start()
    with _connect(info) as conn, conn.cursor() as cur:
        cur.execute("create table kept (k int primary key)")
        cur.execute("insert into kept values (7)")
    assert server.status() == info
    assert server.stop() is True
    assert not os.path.exists(f"/proc/{info.pid}") or _state(info.pid) in ("Z", "X")
    assert server.status() is None
    assert server.stop() is False
    again = server.start()
    assert again.data_dir == info.data_dir
    with _connect(again) as conn, conn.cursor() as cur:
        cur.execute("select k from kept")
        assert cur.fetchall() == ((7,),)


def test_cli_start_status_stop(tmp_path):
    env = {**os.environ, "CBO_CACHE_DIR": str(tmp_path)}

    def cbo(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cbo", "mariadb", *args], capture_output=True, text=True,
                              env=env, timeout=120)

    try:
        assert cbo("status").returncode == 3
        started = cbo("start")
        assert started.returncode == 0, started.stderr
        assert "jdbc:mariadb://127.0.0.1:" in started.stdout
        password = (tmp_path / "mariadb" / "password").read_text().strip()
        assert password not in started.stdout + started.stderr
        assert cbo("status").returncode == 0
        assert cbo("stop").stdout.strip() == "stopped"
        assert cbo("status").returncode == 3
    finally:
        LocalMariaDB(tmp_path / "mariadb").destroy()


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "X"


def test_restart_keeps_the_port_after_open_sessions_were_closed(server):
    """The server closes its sessions on stop, leaving its port in TIME_WAIT; MariaDB binds with
    SO_REUSEADDR, so it keeps the port (catalogs name the server, but a stable port is kinder)."""
    info = server.start()
    session = _connect(info)
    with session.cursor() as cur:
        cur.execute("select 1")
    server.stop()
    session.close()
    assert server.start().port == info.port
