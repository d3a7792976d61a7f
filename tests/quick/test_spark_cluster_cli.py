"""``cbo spark``'s arguments and the state of a cluster never started (no JVM needed)."""

from __future__ import annotations

import pytest

from cbo.app.cli import EXIT_ERROR, EXIT_NOT_RUNNING, main
from cbo.engines.spark_cluster import parse_memory_mb
from cbo.errors import SetupError


def test_memory_sizes():
    assert parse_memory_mb("1g") == 1024
    assert parse_memory_mb("1536m") == 1536
    assert parse_memory_mb("2G") == 2048
    with pytest.raises(SetupError, match="expected e.g. 1g or 1536m"):
        parse_memory_mb("lots")


def test_status_and_stop_without_a_cluster(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CBO_CACHE_DIR", str(tmp_path))
    assert main(["spark", "status"]) == EXIT_NOT_RUNNING
    assert main(["spark", "stop"]) == 0
    assert capsys.readouterr().out.splitlines() == ["not running", "not running"]


def test_bad_shape_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CBO_CACHE_DIR", str(tmp_path))
    assert main(["spark", "start", "--workers", "0"]) == EXIT_ERROR
    assert capsys.readouterr().err.strip() == "cbo: error: a cluster needs at least one worker, not 0"
    assert main(["spark", "start", "--worker-memory", "big"]) == EXIT_ERROR
    assert "memory size 'big': expected e.g. 1g or 1536m" in capsys.readouterr().err


def test_connect_address():
    from cbo.engines.spark import _connect_address

    assert _connect_address("sc://127.0.0.1:15003") == ("127.0.0.1", 15003)
    assert _connect_address("sc://spark.example/;use_ssl=true") == ("spark.example", 15002)
    with pytest.raises(SetupError, match="not a Spark Connect URL"):
        _connect_address("sc://h:port")


def test_status_names_what_is_left_and_stop_ends_it(tmp_path, monkeypatch, capsys):
    """A cluster whose master has ended but whose Spark Connect server lives on: status says so,
    stop ends it, and status then shows nothing running. The server here is a real process
    (a sleeping shell whose command line names the Connect class, as the server's does)."""
    import os
    import subprocess
    import time

    from cbo.engines.spark_cluster import CONNECT_CLASS, ClusterInfo, LocalSparkCluster, _group_alive, _is_process

    monkeypatch.setenv("CBO_CACHE_DIR", str(tmp_path))
    # sh stays (the `:` after sleep) with the class name as its $0, in a session of its own
    server = subprocess.Popen(["sh", "-c", "sleep 120; :", CONNECT_CLASS], start_new_session=True,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    # /proc/PID/cmdline reads empty for a moment after the exec
    for _ in range(100):
        if _is_process(server.pid, CONNECT_CLASS):
            break
        time.sleep(0.05)
    try:
        cluster = LocalSparkCluster()
        cluster.root.mkdir(parents=True)
        info = ClusterInfo(host="127.0.0.1", master_port=1, webui_port=2, master_pid=0, worker_pids=[],
                           worker_cores=1, worker_memory_mb=1024, data_dir=str(tmp_path / "work"),
                           log_dir=str(tmp_path / "logs"), spark_home=str(tmp_path), connect_port=3,
                           connect_pid=server.pid)
        cluster._write_state(info)
        assert cluster.connect_state(info).startswith("starting or stuck")   # alive, port closed
        assert main(["spark", "status"]) == EXIT_NOT_RUNNING
        assert capsys.readouterr().out.strip() == (f"not running (still alive: Spark Connect server {server.pid}; "
                                                   "`cbo spark stop` ends them)")
        assert main(["spark", "stop"]) == 0
        assert capsys.readouterr().out.strip() == "stopped"
        assert server.wait(timeout=10) is not None and not _group_alive(server.pid)
        assert cluster.connect_state(info) == f"not running (its process {server.pid} has ended)"
        assert main(["spark", "status"]) == EXIT_NOT_RUNNING
        assert capsys.readouterr().out.strip() == "not running"
    finally:
        server.kill()
        server.wait()
