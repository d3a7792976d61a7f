"""``benchmarks.tpch.merge_runs``: runs over subsets of the queries merge into the report one run
would give, and runs that are not one benchmark, or files that are not runs, are refused in one line."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from benchmarks.tpch.merge_runs import merge, read_run

SAVED = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "tpch-run-all-postgres-sf1.json"


def _pieces() -> tuple[dict, dict, dict]:
    whole = json.loads(SAVED.read_text())
    queries = sorted(whole["queries"], key=lambda q: q["query"])
    a, b = copy.deepcopy(whole), copy.deepcopy(whole)
    a["queries"], b["queries"] = queries[::2], queries[1::2]
    return whole, a, b


def test_two_halves_merge_into_the_whole_summary():
    whole, a, b = _pieces()
    merged = merge([b, a])
    assert [q["query"] for q in merged["queries"]] == sorted(q["query"] for q in whole["queries"])
    assert merged["summary"] == whole["summary"]   # (the saved report is itself merged from sorted pieces)
    assert len(merged["pieces"]) == 2


def test_runs_of_other_configurations_or_the_same_query_twice_are_refused():
    _, a, b = _pieces()
    b["configs"] = b["configs"][:-1]
    with pytest.raises(SystemExit, match="differ in configs"):
        merge([a, b])
    with pytest.raises(SystemExit, match="more than one run"):
        merge([a, a])


def test_a_file_that_is_no_run_is_named(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(SystemExit, match=r"bad.json is not JSON \(line 1"):
        read_run(bad)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"benchmark": "join_enumeration"}))
    with pytest.raises(SystemExit, match="is not a benchmarks.tpch.run report"):
        read_run(other)
    with pytest.raises(SystemExit, match="cannot read .*missing.json"):
        read_run(tmp_path / "missing.json")
