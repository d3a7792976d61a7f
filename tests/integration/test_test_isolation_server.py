"""A user's own local server survives a test run: the issue-16 scenario, really run.

The user has exported ``CBO_CACHE_DIR`` to a cache holding a running server with data in it,
then runs the suite. A pytest run in a subprocess (with its test cache in a temporary
directory, so this run's own server is not stopped) prepares TPC-H on its server and stops it
at the end, as every run does; the user's server must still run, with its data, and the
user's cache must hold nothing new.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from cbo.connectors.postgres.server import LocalPostgres

ROOT = Path(__file__).resolve().parents[2]
PROBE = "CBO_SERVER_ISOLATION_PROBE"


@pytest.mark.skipif(PROBE not in os.environ, reason="runs only inside test_a_users_running_server_is_left_alone")
def test_probe_prepares_tpch_on_the_test_server(tpch_catalogs):
    info = LocalPostgres().status()
    assert info is not None
    assert Path(info.password_file).parent == Path(os.environ["CBO_TEST_CACHE_DIR"]).resolve() / "postgres"


def test_a_users_running_server_is_left_alone(tmp_path: Path):
    user_cache, test_cache = tmp_path / "user-cache", tmp_path / "test-cache"
    user_server = LocalPostgres(user_cache / "postgres")
    info = user_server.start()
    try:
        with psycopg.connect(**info.conninfo()) as conn:
            conn.execute("create table mine (x integer)")
            conn.execute("insert into mine values (42)")
        before = sorted(p.name for p in user_cache.iterdir())
        env = {**os.environ, PROBE: "1", "CBO_CACHE_DIR": str(user_cache), "CBO_TEST_CACHE_DIR": str(test_cache)}
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             f"{Path(__file__).relative_to(ROOT)}::test_probe_prepares_tpch_on_the_test_server"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
        assert "1 passed" in result.stdout
        assert user_server.status() == info  # still running, on the same port
        with psycopg.connect(**info.conninfo()) as conn:
            assert conn.execute("select x from mine").fetchall() == [(42,)]
        assert sorted(p.name for p in user_cache.iterdir()) == before  # no TPC-H, no statistics
        assert LocalPostgres(test_cache / "postgres").status() is None  # the test run stopped its own
    finally:
        user_server.destroy()
        LocalPostgres(test_cache / "postgres").destroy()
