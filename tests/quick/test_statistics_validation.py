"""Statistics are checked as they are read: a file of the wrong shape or with impossible values,
or a damaged row sample, is named and not used; stale statistics are used and said to be stale
(EXPLAIN's warnings, one line on the query's stderr); a killed writer's temporary file goes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cbo.app.session import Session
from cbo.sources.catalog import load_catalog
from cbo.sources.statistics import fingerprint, load_checked, store_for
from stats.from_values import table_stats
from stats.store import StatsStore

VALUES = {"k": list(range(200)), "g": [i % 7 for i in range(200)]}


@pytest.fixture
def catalog(tmp_path: Path):
    """A one-table catalog of its own (so a store of its own), with fresh statistics stored."""
    data = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": pa.array(VALUES["k"], pa.int64()), "g": pa.array(VALUES["g"], pa.int64())}), data)
    path = tmp_path / "c.toml"
    path.write_text(f'[sources.lake]\ntype = "spark"\n[sources.lake.tables.t]\npath = "{data}"\n')
    loaded = load_catalog(path)
    stats = table_stats("lake.t", VALUES)
    current = fingerprint(loaded, loaded.table("t"))
    store_for(loaded).save(type(stats)(**{**stats.__dict__, "fingerprint": current}))
    return loaded


def stored(catalog) -> Path:  # type: ignore[no-untyped-def]
    return store_for(catalog).path("lake.t")


def rewrite(catalog, change) -> None:  # type: ignore[no-untyped-def]
    body = json.loads(stored(catalog).read_text())
    change(body)
    stored(catalog).write_text(json.dumps(body))


def cbo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cbo", *args], capture_output=True, text=True, timeout=120)


def test_fresh_statistics_load_without_a_word(catalog):
    found, notes = load_checked(catalog)
    assert "lake.t" in found and notes == {}


@pytest.mark.parametrize("change, problem", [
    (lambda b: b.update(row_count=-5), "row_count is -5: not a count"),
    (lambda b: b.update(row_count=float("nan")), "row_count is nan: not a count"),
    (lambda b: b["columns"][0].update(null_fraction=7.5), "column 'k': null_fraction is 7.5: not a fraction"),
    (lambda b: b["columns"][1].update(distinct=-1), "column 'g': distinct is -1"),
    (lambda b: b["columns"][1]["mcv"].append([3, 0.9]), "MCV frequencies add up to"),
    (lambda b: b["columns"][0]["histogram"][0].__setitem__(2, float("inf")), "a bucket's rows is inf"),
    (lambda b: b["columns"][0].update(min="zero"), "column 'k': min 'zero' is not a number"),
    (lambda b: b.update(sampled_fraction=0), "sampled_fraction is 0: not a fraction in (0, 1]"),
    (lambda b: b.update(columns={}), "columns is missing or not a list"),
])
def test_impossible_values_are_named_and_the_file_ignored(catalog, change, problem):
    rewrite(catalog, change)
    found, notes = load_checked(catalog)
    assert "lake.t" not in found
    assert str(stored(catalog)) in notes["lake.t"] and problem in notes["lake.t"], notes


def test_a_file_of_the_wrong_shape_is_named_and_every_command_still_works(catalog):
    stored(catalog).write_text("[]")
    _, notes = load_checked(catalog)
    assert notes["lake.t"] == f"{stored(catalog)}: unusable statistics file (not a JSON object but list); ignored"
    for command in (["explain", "select count(*) from t"], ["query", "--engine", "duckdb", "select count(*) from t"]):
        result = cbo(command[0], "--catalog", str(catalog.path), *command[1:])
        assert result.returncode == 0, result.stderr
        assert result.stderr.count("unusable statistics file") == 1, result.stderr
    shown = cbo("stats", "show", "t", "--catalog", str(catalog.path))
    assert shown.returncode == 2 and "not a JSON object" in shown.stderr and "Traceback" not in shown.stderr


def test_a_truncated_row_sample_is_named_and_not_read(catalog):
    sample = next(store_for(catalog).directory.glob("*.sample-*.parquet"))
    sample.write_bytes(sample.read_bytes()[:100])
    loaded = store_for(catalog).load("lake.t")
    assert loaded.damaged and loaded.stats is not None and loaded.stats.sample is None
    assert str(sample) in (loaded.problem or "") and "damaged row sample" in (loaded.problem or "")
    planned = Session(catalog, engine="duckdb")
    text = planned.explain("select count(*) from t where g = 3 and k > 10")
    assert "damaged row sample" in text
    assert planned.query("select count(*) from t where g = 3 and k > 10")[1] == [(27,)]


def test_stale_statistics_are_used_and_said_to_be_stale(catalog):
    data = catalog.table("t").path
    pq.write_table(pa.table({"k": pa.array(range(300), pa.int64()), "g": pa.array([1] * 300, pa.int64())}), data)
    session = Session(catalog, engine="duckdb")
    text = session.explain("select count(*) from t")
    assert "Warning: statistics of lake.t are stale" in text and "run `cbo analyze lake.t`" in text
    assert "est. rows 200" in text   # still the statistics' estimate
    as_json = json.loads(session.explain("select count(*) from t", format="json"))
    assert any("stale" in w for w in as_json["warnings"])
    result = cbo("query", "--catalog", str(catalog.path), "--engine", "duckdb", "select count(*) from t")
    assert result.returncode == 0 and "300" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if line.startswith("cbo: warning:")]
    assert len(warnings) == 1 and "stale" in warnings[0], result.stderr


def test_temporary_files_of_dead_writers_are_removed(tmp_path):
    store = StatsStore(tmp_path)
    dead = tmp_path / ".lake.t.json.pid999999999.abc.tmp"
    ours = tmp_path / f".lake.t.json.pid{os.getpid()}.def.tmp"
    for path in (dead, ours):
        path.write_text("{")
    assert store.clean() == [dead]
    assert not dead.exists() and ours.exists()
