"""cbo's plans on a Spark standalone cluster: ``cbo spark start|stop|status`` and a catalog whose
``[spark] master`` names the cluster.

One test walks the cluster's life, since each start costs a JVM per daemon: start 2 workers
(1 core, 1 GiB each), start again (the same cluster), run TPC-H queries through cbo in a
subprocess (one SparkContext per process: the run's shared local session stays as it is) on
the federated placement, so Parquet is read by the executors and PostgreSQL through the JDBC
driver shipped to them; answers match DuckDB's; stop, and no process of the cluster is left.
Marked ``cluster``: ``pytest -m cluster`` runs it alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cbo.answers import compare, is_ordered
from cbo.engines.native import DuckDBNative
from cbo.engines.spark_cluster import ClusterInfo, LocalSparkCluster, _group_alive
from cbo.sources.catalog import load_catalog
from cbo.workloads.tpch_queries import select

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
QUERIES = ("q1", "q3", "q5", "q12")


def cbo(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "cbo", *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def on_cluster(catalog: Path, master: str, directory: Path) -> Path:
    """The catalog with a ``[spark]`` section that runs it on ``master`` (driver 2 GiB, executors 1 GiB)."""
    text = catalog.read_text()
    assert "[spark]" not in text
    section = f'[spark]\nmaster = "{master}"\ndriver_memory = "2g"\nexecutor_memory = "1g"\n\n'
    path = directory / catalog.name
    path.write_text(section + text)
    return path


def cluster_processes(info: ClusterInfo) -> list[int]:
    """The cluster's processes still alive: its daemons' process groups, and any process whose
    command line names its work directory (an executor)."""
    alive = [pid for pid in info.pids() if _group_alive(pid)]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                if info.data_dir.encode() in (entry / "cmdline").read_bytes():
                    alive.append(int(entry.name))
            except OSError:
                continue
    return alive


def test_queries_on_a_two_worker_cluster_match_duckdb(tpch_catalogs, tmp_path):
    cluster = LocalSparkCluster()  # the test cache's (CBO_CACHE_DIR is the test cache)
    cluster.stop()  # a cluster left by an interrupted run
    shape = ["--workers", "2", "--worker-cores", "1", "--worker-memory", "1g"]
    first = cbo("spark", "start", *shape)
    info = cluster.status()
    try:
        assert info is not None and len(info.worker_pids) == 2
        assert cluster.alive_workers(info) == 2
        assert f"running: {info.url}" in first.stdout and info.web_ui in first.stdout
        again = cbo("spark", "start", *shape)
        assert cluster.status() == info, "starting twice must reuse the running cluster"
        assert f"running: {info.url}" in again.stdout
        assert cbo("spark", "status").returncode == 0

        catalog = on_cluster(tpch_catalogs["federated"], info.url, tmp_path)
        run = subprocess.run([sys.executable, "-m", "tests.cluster_run", str(catalog), *QUERIES], cwd=ROOT,
                             capture_output=True, text=True, timeout=900)
        assert run.returncode == 0, run.stderr[-3000:]
        result = json.loads(run.stdout.strip().splitlines()[-1])
        assert result["master"] == info.url
        assert result["executors"] == 2, "each worker runs one executor of cbo's application"

        duckdb = DuckDBNative(load_catalog(tpch_catalogs["all-spark"]))
        try:
            for query in select(list(QUERIES)):
                expected = duckdb.run(query.sql)[1]
                assert expected, f"{query.name}: the reference answered nothing"
                verdict = compare(expected, result["answers"][query.name], ordered=is_ordered(query.sql))
                assert verdict.matches, f"{query.name} on the cluster: {verdict.detail}"
        finally:
            duckdb.close()
    finally:
        stopped = cbo("spark", "stop")
    assert stopped.stdout.strip() == "stopped"
    assert cluster_processes(info) == []
    status = cbo("spark", "status", check=False)
    assert status.returncode == 3 and status.stdout.strip() == "not running"
