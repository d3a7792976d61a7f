"""cbo's throwaway PostgreSQL: created on first start, reused on the second, stopped and restarted."""

from __future__ import annotations

import os
import stat

import psycopg
import pytest

from cbo.connectors.postgres.server import LocalPostgres


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


def test_restart_keeps_the_port_after_open_sessions_were_closed(server):
    """A fast stop closes the sessions from the server's side, leaving its port in TIME_WAIT;
    the server binds with SO_REUSEADDR, so it can keep the port and catalogs stay valid."""
    info = server.start()
    open_session = psycopg.connect(**info.conninfo())
    open_session.execute("select 1")
    server.stop()
    open_session.close()
    assert server.start().port == info.port


def test_catalogs_follow_the_server_to_another_port(server, tmp_path):
    """A catalog names the local server, not its port: after a restart on another port (the old
    one taken meanwhile) it connects where the server runs now. So does an older catalog that
    wrote the port and the server's password file."""
    import socket

    from cbo.sources.catalog import parse_catalog
    from cbo.connectors.postgres import client as postgres
    from cbo.errors import SourceUnreachable

    info = server.start()
    with psycopg.connect(**info.conninfo()) as conn:
        conn.execute("create schema s")
        conn.execute("create table s.t (k integer primary key)")
    current = parse_catalog(f'[sources.pg]\ntype = "jdbc"\nlocal_server = "{server.root}"\nschema = "s"\n'
                            '[sources.pg.tables.t]\n', tmp_path / "current.toml")
    older = parse_catalog(f'[sources.pg]\ntype = "jdbc"\nurl = "{info.jdbc_url}"\nuser = "cbo"\n'
                          f'password_file = "{info.password_file}"\nschema = "s"\n[sources.pg.tables.t]\n',
                          tmp_path / "older.toml")
    server.stop()
    with pytest.raises(SourceUnreachable, match="cbo postgres start"):
        postgres.address_of(current.sources["pg"])
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        # The stopped server's port may still be in TIME_WAIT: without SO_REUSEADDR (which
        # PostgreSQL sets too) this bind failed now and then. A listening socket still takes it.
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", info.port))
        squatter.listen()
        moved = server.start()
        assert moved.port != info.port
        for catalog in (current, older):
            source = catalog.sources["pg"]
            assert source.jdbc_url() == moved.jdbc_url
            with postgres.connect(postgres.address_of(source)) as conn:
                assert postgres.read_keys(conn, "s", "t")[0] == ("k",)


def test_duckdb_answers_while_the_test_server_is_stopped(tpch_catalogs):
    """The issue-16 command: a DuckDB query on the federated catalog with the server down."""
    import subprocess
    import sys

    server = LocalPostgres()
    server.stop()
    try:
        result = subprocess.run([sys.executable, "-m", "cbo", "query", "--catalog", str(tpch_catalogs["federated"]),
                                 "--engine", "duckdb", "--format", "csv", "select count(*) from nation"],
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip().splitlines()[-1] == "25"
        check = subprocess.run([sys.executable, "-m", "cbo", "catalog", "check", str(tpch_catalogs["federated"])],
                               capture_output=True, text=True, timeout=300)
        assert check.returncode == 2 and "start it with `cbo postgres start`" in check.stderr
    finally:
        server.start()
