"""The CLI: errors a user can act on are one line on stderr, a non-zero exit, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cbo.connectors.localserver import free_port


def run_cbo(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "cbo", *args], capture_output=True, text=True, timeout=120, env=env)


def assert_one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("cbo: error: ")
    return lines[0]


def test_bad_catalog_file_names_file_line_and_key(tmp_path: Path):
    catalog = tmp_path / "bad.toml"
    catalog.write_text('[sources.lake]\ntype = "spark"\n[sources.lake.tables.t]\npaht = "t.parquet"\n')
    line = assert_one_line_error(run_cbo("catalog", "check", str(catalog)))
    assert f"{catalog}:4: sources.lake.tables.t.paht: unknown key 'paht'" in line
    assert "'path'" in line


def test_unreachable_server_names_the_source(tmp_path: Path):
    port = free_port()
    catalog = tmp_path / "pg.toml"
    catalog.write_text(f'[sources.pg]\ntype = "jdbc"\nurl = "jdbc:postgresql://127.0.0.1:{port}/db"\n'
                       'user = "u"\n[sources.pg.tables.t]\n')
    line = assert_one_line_error(run_cbo("catalog", "check", str(catalog)))
    assert f"cannot connect to source 'pg' at 127.0.0.1:{port}/db" in line


def test_debug_shows_the_traceback_and_the_error_line(tmp_path: Path):
    result = run_cbo("--debug", "catalog", "check", str(tmp_path / "absent.toml"))
    # Before: the traceback alone, exit 1. The exit code does not depend on --debug.
    assert result.returncode == 2, result
    assert "Traceback" in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("cbo: error: ") and "absent.toml" in last


def test_bad_scale_factor():
    line = assert_one_line_error(run_cbo("datagen", "tpch", "--sf", "0", "--out", "/tmp/never-used"))
    assert "scale factor must be positive" in line


def test_rules_table_has_an_enabled_column_aligned_columns_and_whole_descriptions():
    result = run_cbo("rules", "--set", "disabled_rules=SortMergeJoin", env_extra={"COLUMNS": "100"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["name", "kind", "enabled", "what", "it", "does"]
    kind_at, enabled_at, text_at = (lines[0].index(word) for word in ("kind", "enabled", "what"))
    rows: dict[str, list[str]] = {}
    for line in lines[1:]:
        assert len(line) <= 100, line
        if line[0] != " ":  # a rule's first line: every column starts where its header does
            name = line[:kind_at].strip()
            assert line[kind_at - 2:kind_at] == "  " and line[kind_at] != " ", line
            assert line[enabled_at:].split()[0] in ("yes", "no"), line
            rows[name] = [line[enabled_at:text_at].strip(), line[text_at:]]
        else:  # a wrapped description continues under its column
            assert line[:text_at].strip() == "" and line[text_at] != " ", line
            rows[name][1] += " " + line[text_at:]
    assert rows["SortMergeJoin"][0] == "no" and rows["ReorderJoins"][0] == "yes"
    assert rows["BroadcastNestedLoopJoin"][0] == "yes"  # the longest name no longer pushes its row out
    patterns = {}
    for name, (_, text) in rows.items():
        text, _, pattern = text.partition(" matches: ")
        assert text.rstrip().endswith((".", ")")), f"{name}: description cut: {text!r}"
        patterns[name] = pattern
    assert "each task hashes its partition of the build (right) side" in rows["ShuffledHashJoin"][1]
    # Each rule's pattern, as it declares it.
    assert "Join[inner, conditioned](Aggregate[grouped, aggregating], *)" in patterns["PushTableIntoAggregate"]
    assert patterns["BroadcastHashJoin"].strip() == "Join"


def test_session_without_a_catalog_uses_the_cli_default_or_says_what_to_do(tmp_path: Path, monkeypatch,
                                                                           tpch_parquet_catalog):
    import pytest

    import cbo

    monkeypatch.delenv("CBO_CATALOG", raising=False)
    monkeypatch.setenv("CBO_CACHE_DIR", str(tmp_path))  # no demo catalog there
    with pytest.raises(cbo.CboError, match="no catalog: .*set CBO_CATALOG.*cbo demo"):
        cbo.Session()  # was a TypeError (missing argument)
    monkeypatch.setenv("CBO_CATALOG", str(tpch_parquet_catalog))
    session = cbo.Session()
    assert session.query("select count(*) as n from nation", engine="duckdb") == (["n"], [(25,)])


def test_a_reader_that_goes_away_is_no_error():
    """``cbo rules | head -3``: was "cbo: internal error: BrokenPipeError"."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to the pipe fails, as when head has exited
    try:
        result = subprocess.run([sys.executable, "-m", "cbo", "rules"], stdout=write_end, stderr=subprocess.PIPE,
                                text=True, timeout=120)
    finally:
        os.close(write_end)
    assert result.stderr == ""
