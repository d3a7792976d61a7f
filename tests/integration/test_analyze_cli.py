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


def analyze(catalog, *tables: str) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return subprocess.run([sys.executable, "-m", "cbo", "analyze", "--catalog", str(catalog), *tables],
                          capture_output=True, text=True, timeout=600)


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and lines and lines[-1].startswith("cbo: error: "), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    return lines[-1]


def test_a_missing_postgres_schema_or_table_is_one_line_in_analyze_and_catalog_check(tpch_catalogs, tmp_path):
    text = tpch_catalogs["all-postgres"].read_text()
    no_schema = tmp_path / "no_schema.toml"
    no_schema.write_text(text.replace('schema = "tpch_sf0_01"', 'schema = "no_such_schema"'))
    no_table = tmp_path / "no_table.toml"
    no_table.write_text(text.replace("[sources.pg.tables.region]",
                                     '[sources.pg.tables.region]\nremote_name = "no_such_table"'))
    for catalog in (no_schema, no_table):
        line = one_error_line(analyze(catalog, "region"))
        assert "table 'pg.region' does not exist in source 'pg'" in line
        checked = subprocess.run([sys.executable, "-m", "cbo", "catalog", "check", str(catalog)],
                                 capture_output=True, text=True, timeout=120)
        assert "does not exist in source 'pg'" in one_error_line(checked)


def test_damaged_statistics_are_named_and_collected_again(tpch_catalogs, tmp_path):
    """A row sample cut short and a statistics file of the wrong shape: named while they are in
    place, never called fresh by analyze, which collects them again; a killed writer's temporary
    file goes."""
    catalog = tmp_path / "copy.toml"
    catalog.write_text(tpch_catalogs["all-spark"].read_text())
    first = analyze(catalog, "region", "nation")
    assert statuses(first.stdout) == ["collected", "collected"], first.stderr
    store = store_for(load_catalog(catalog))
    sample = next(store.directory.glob("lake.nation.sample-*.parquet"))
    sample.write_bytes(sample.read_bytes()[:200])
    store.path("lake.region").write_text("[]")
    leftover = store.directory / ".lake.region.json.pid999999999.x.tmp"
    leftover.write_text("{")
    explained = cbo("explain", "select count(*) from nation join region on n_regionkey = r_regionkey",
                    catalog=catalog)
    assert explained.returncode == 0, explained.stderr
    assert "damaged row sample" in explained.stdout and "not a JSON object" in explained.stdout
    repaired = analyze(catalog, "region", "nation")
    assert statuses(repaired.stdout) == ["collected", "collected"], repaired.stdout + repaired.stderr
    assert not leftover.exists()
    again = analyze(catalog, "region", "nation")
    assert statuses(again.stdout) == ["fresh", "fresh"]
