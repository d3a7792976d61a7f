"""``cbo analyze`` and ``cbo stats show``: progress, freshness, an interrupted run, plots."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from cbo.sources.catalog import load_catalog
from cbo.sources.statistics import store_for


def statuses(stdout: str) -> list[str]:
    """The status column of `cbo analyze` (table, status, rows, ...), one entry per table."""
    return [line.split()[1] for line in stdout.splitlines() if line.strip()]


def cbo(*args: str, catalog) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return subprocess.run([sys.executable, "-m", "cbo", *args[:2], "--catalog", str(catalog), *args[2:]],
                          capture_output=True, text=True, timeout=600)


def test_analyze_then_show_then_fresh(tpch_catalogs, tmp_path):
    catalog = tpch_catalogs["federated"]
    first = subprocess.run([sys.executable, "-m", "cbo", "analyze", "--catalog", str(catalog), "--force"],
                           capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    assert "[8/8]" in first.stderr  # progress per table
    assert statuses(first.stdout) == ["collected"] * 8
    again = subprocess.run([sys.executable, "-m", "cbo", "analyze", "--catalog", str(catalog)],
                           capture_output=True, text=True, timeout=600)
    assert statuses(again.stdout) == ["fresh"] * 8
    shown = cbo("stats", "show", "lineitem", catalog=catalog)
    assert shown.returncode == 0 and "lake.lineitem: 60,175 rows" in shown.stdout
    assert "column group (l_partkey,l_suppkey)" in shown.stdout
    plot = tmp_path / "orders.png"
    column = cbo("stats", "show", "orders.o_orderpriority", "--plot", str(plot), catalog=catalog)
    assert column.returncode == 0, column.stderr
    assert "most common values (5)" in column.stdout
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_a_killed_analyze_leaves_a_readable_store_and_the_next_run_completes(tpch_catalogs):
    catalog_path = tpch_catalogs["all-spark"]
    store = store_for(load_catalog(catalog_path))
    for path in store.directory.glob("*.json"):
        path.unlink()
    process = subprocess.Popen([sys.executable, "-m", "cbo", "analyze", "--catalog", str(catalog_path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while time.time() < deadline and len(list(store.directory.glob("*.json"))) < 2:
        time.sleep(0.2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    done = list(store.directory.glob("*.json"))
    assert 2 <= len(done) < 8
    for path in done:
        assert store.load_path(path).stats is not None  # every file written is whole
    rerun = subprocess.run([sys.executable, "-m", "cbo", "analyze", "--catalog", str(catalog_path)],
                           capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert statuses(rerun.stdout).count("fresh") == len(done)
    assert statuses(rerun.stdout).count("collected") == 8 - len(done)


def test_show_without_statistics_says_what_to_do(tpch_catalogs, tmp_path):
    text = tpch_catalogs["all-spark"].read_text()
    copy = tmp_path / "copy.toml"
    copy.write_text(text)
    result = cbo("stats", "show", "region", catalog=copy)
    assert result.returncode == 2
    assert "no statistics for lake.region: run `cbo analyze region`" in result.stderr
