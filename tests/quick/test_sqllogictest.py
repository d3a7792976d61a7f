"""The sqllogictest conformance runner: the format (records, how values are written, sorted and
hashed), a file of every record kind through cbo and DuckDB, the deadline that keeps a hang from
hanging the run, and a slice of SQLite's select1-5 where the corpus is present.

The corpus is not in the repository and no package registry ships it (docs/guide/conformance.md
says how to get it); the select1-5 test skips, saying so, only when it is absent.
"""

from __future__ import annotations

import decimal
from pathlib import Path

import pytest

from benchmarks.deadline import CallFailed, DeadlineExceeded, Worker
from benchmarks.sqllogictest.__main__ import corpus_directory, file_class, summarize
from benchmarks.sqllogictest.records import (
    Halt,
    Query,
    SortMode,
    Statement,
    format_result,
    format_value,
    matches,
    parse_records,
    result_hash,
)
from benchmarks.sqllogictest.runner import Outcome, Settings, duckdb_ddl, make_worker, message_class, run_file

MINI = Path(__file__).resolve().parents[1] / "testdata" / "sqllogictest" / "mini.test"


def test_values_are_written_as_sqllogictest_writes_them():
    assert format_value(None, "I") == format_value(None, "T") == "NULL"
    assert format_value(3.9, "I") == "3" and format_value(-3.9, "I") == "-3"          # toward zero
    assert format_value(decimal.Decimal("12.50"), "I") == "12"
    assert format_value("42abc", "I") == "42" and format_value("abc", "I") == "0"     # text: its leading number
    assert format_value(2 ** 32 + 5, "I") == "5"                                      # sqlite3_column_int: 32 bits
    assert format_value(True, "I") == "1"
    assert format_value(2, "R") == "2.000" and format_value(-0.0625, "R") == "-0.062"
    assert format_value("", "T") == "(empty)" and format_value("a\tb", "T") == "a@b"
    assert format_value(1.0, "T") == "1.0" and format_value(7, "T") == "7"


def test_sort_modes_and_hash():
    rows = [(10, "b"), (9, "a"), (10, "a")]
    assert format_result(rows, "IT", SortMode.NOSORT) == ["10", "b", "9", "a", "10", "a"]
    # rows compare by their text: "10" < "9"
    assert format_result(rows, "IT", SortMode.ROWSORT) == ["10", "a", "10", "b", "9", "a"]
    assert format_result(rows, "IT", SortMode.VALUESORT) == ["10", "10", "9", "a", "a", "b"]
    assert result_hash(["1", "2"]) == "6ddb4095eb719e2a9f0a3f95677d24e0"   # md5 of "1\n2\n"
    hashed = Query("q", "I", SortMode.NOSORT, None, None, 2, "6ddb4095eb719e2a9f0a3f95677d24e0", 1)
    assert matches(hashed, ["1", "2"]) and not matches(hashed, ["2", "1"]) and not matches(hashed, ["1"])


def test_records_honour_skipif_onlyif_halt_and_hash_threshold():
    records = list(parse_records(MINI.read_text(), "postgresql"))
    assert records[0] == 8                                        # hash-threshold
    queries = [r for r in records if isinstance(r, Query)]
    assert all("no_such_column" not in q.sql and "SELECT 2" != q.sql for q in queries)   # skipif/onlyif
    assert isinstance(records[-1], Halt) and all("never run" not in q.sql for q in queries)
    first = queries[0]
    assert (first.types, first.sort, first.expected) == ("IT", SortMode.ROWSORT, ("1", "x", "2", "(empty)", "3", "zz"))
    hashed = next(q for q in queries if q.expected is None)
    assert hashed.expected_count == 6 and len(hashed.expected_hash or "") == 32
    assert next(q for q in queries if q.label).label == "label-sum"
    failing = [r for r in records if isinstance(r, Statement) and not r.ok]
    assert [s.sql.split()[0] for s in failing] == ["INSERT", "SELECT"]
    # another engine sees the records meant for it
    assert any("no_such_column" in r.sql for r in parse_records(MINI.read_text(), "sqlite") if isinstance(r, Query))


def test_tables_are_built_with_sqlites_storage():
    assert duckdb_ddl("CREATE TABLE t(a INTEGER PRIMARY KEY, b FLOAT, c VARCHAR(40), d REAL)") == \
        "CREATE TABLE t (a BIGINT PRIMARY KEY, b DOUBLE, c TEXT, d DOUBLE)"


def test_refusals_are_classed_without_places_and_numbers():
    assert message_class("line 1, column 15: unknown table 'x' at 3") == "unknown table 'x' at N"


def test_a_file_runs_through_cbo_and_duckdb(tmp_path):
    worker = make_worker("postgres")
    try:
        report = run_file(MINI, tmp_path, worker, Settings(timeout=60))
    finally:
        worker.close()
    assert not report.setup_failed and report.statements == 7
    # a SELECT given as `statement error` is checked too: cbo refuses it as DuckDB does
    assert report.queries == 9 and report.outcomes[Outcome.ERROR_AS_REFERENCE.value] == 1
    by_line = {r.line: r for r in report.results}
    for result in report.results:
        if result.sql == "SELECT 7 / 2" and result.outcome is Outcome.WRONG:
            # cbo divides as DuckDB does, not as PostgreSQL, the dialect: named as that defect
            assert result.detail.startswith("division:")
            continue
        assert result.outcome is Outcome.ERROR_AS_REFERENCE, (result.line, result.outcome, result.detail)
    assert report.outcomes[Outcome.ANSWERED.value] >= 7
    # every answered query agrees with the file (the view was exported as it stood after the DELETE)
    assert report.cbo_matches_file == report.duckdb_matches_file == 8
    assert all(r.line not in by_line or r.outcome is not Outcome.INTERNAL for r in report.results)
    summary = summarize([("mini.test", report)])
    assert summary["classes"]["mini.test"]["queries"] == 9


def test_a_query_that_differs_from_duckdb_is_wrong(tmp_path):
    """The runner's own check: an answer other than DuckDB's is counted wrong."""
    worker = Worker(_wrong_runner, ("postgres",))
    text = MINI.read_text().split("query I nosort\nSELECT 7 / 2")[0]
    path = tmp_path / "wrong.test"
    path.write_text(text)
    try:
        report = run_file(path, tmp_path / "work", worker, Settings(timeout=60))
    finally:
        worker.close()
    assert report.outcomes[Outcome.WRONG.value] == report.queries == 3


class _DropsARow:
    def __init__(self, dialect: str):
        from benchmarks.through_cbo import CboRunner

        self.inner = CboRunner(dialect)

    def load(self, catalog: str) -> None:
        self.inner.load(catalog)

    def run(self, sql: str):  # type: ignore[no-untyped-def]
        from dataclasses import replace

        outcome = self.inner.run(sql)
        return replace(outcome, rows=outcome.rows[1:]) if outcome.rows else outcome


def _wrong_runner(dialect: str) -> _DropsARow:
    return _DropsARow(dialect)


class _Sleeper:
    def nap(self, seconds: float) -> str:
        import time

        time.sleep(seconds)
        return "awake"

    def fail(self) -> None:
        raise KeyError("broken")


def _sleeper() -> _Sleeper:
    return _Sleeper()


def test_a_call_past_its_deadline_is_killed_and_the_next_one_runs():
    with Worker(_sleeper, preload=[]) as worker:
        assert worker.call("nap", 0, timeout=30) == "awake"
        with pytest.raises(DeadlineExceeded):
            worker.call("nap", 60, timeout=0.5)
        assert worker.restarts == 1
        assert worker.call("nap", 0, timeout=30) == "awake"
        with pytest.raises(CallFailed) as failed:
            worker.call("fail", timeout=30)
        assert failed.value.kind == "KeyError" and "broken" in failed.value.trace


def test_file_classes():
    assert file_class("select3.test") == "select"
    assert file_class("random/expr/slt_good_1.test") == "random/expr"
    assert file_class("index/between/10/slt_good_0.test") == "index/between"
    assert file_class("evidence/in1.test") == "evidence"


# select1-5: every SLICE-th query of each file (the same queries every run); the full files are
# the benchmark (python -m benchmarks.sqllogictest --set select).
SLICE = 40


@pytest.mark.parametrize("name", [f"select{i}.test" for i in range(1, 6)])
def test_select_files_of_sqlites_corpus(name, tmp_path):
    corpus = corpus_directory()
    if corpus is None:
        pytest.skip("SQLite's sqllogictest corpus is absent (no package registry ships it): set CBO_SQLLOGICTEST to "
                    "its test directory or put it in .cache/sqllogictest/test (docs/guide/conformance.md)")
    worker = make_worker("postgres")
    try:
        report = run_file(corpus / name, tmp_path, worker, Settings(timeout=120, every=SLICE), name)
    finally:
        worker.close()
    assert not report.setup_failed
    bad = [(r.line, r.outcome.value, r.detail, r.sql) for r in report.results
           if r.outcome in (Outcome.INTERNAL, Outcome.HANG)
           or (r.outcome is Outcome.WRONG and not r.detail.startswith("division:"))]
    assert not bad, bad
    assert report.queries >= 15 and report.outcomes[Outcome.ANSWERED.value] >= 0.9 * report.queries
