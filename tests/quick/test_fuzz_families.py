"""The fuzzing families of the equivalence benchmark (``fuzz``: random valid queries over TPC-H's
schema; ``mutants``: token mutations of valid queries): a seeded slice of each, the random
tables keeping the schema's keys, the mutations, the failure path (a wrong answer, an internal
error and a hang are each caught and shrunk), and the replay of their regression cases.

The large runs are ``python -m benchmarks.equivalence --family fuzz|mutants``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.equivalence import __main__ as equivalence
from benchmarks.equivalence.fuzz import (
    FUZZ_FAMILIES,
    FuzzChecker,
    FuzzFamily,
    FuzzRunner,
    Hang,
    InternalError,
    Mismatch,
    mutate,
    tokens,
    tpch_queries,
)
from benchmarks.equivalence.schemas import SCHEMAS, Schema, table_data, tpch

SCHEMA = tpch()


@pytest.mark.parametrize("family", sorted(FUZZ_FAMILIES))
def test_a_seeded_slice_of_each_family_passes(family, tmp_path):
    out = tmp_path / "out.json"
    assert equivalence.main(["--family", family, "--cases", "30", "--seed", "6", "--no-corpus",
                             "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["cases"] == 30 and report["mismatches"] == report["errors"] == report["hangs"] == 0
    outcomes = report["outcomes"]
    assert sum(outcomes.values()) == 30
    if family.startswith("fuzz"):
        # the generator writes valid SQL: DuckDB rejects (almost) none of it, and cbo answers most
        assert outcomes.get("accepted_duckdb_rejects", 0) + outcomes.get("error_as_reference", 0) <= 2, outcomes
        assert outcomes.get("answered", 0) >= 15, outcomes
    else:
        assert outcomes.get("refused", 0) >= 8 and outcomes.get("answered", 0) >= 1, outcomes
    assert all(m["message"] and m["example"] for m in report["messages"])


@pytest.mark.parametrize("schema", [SCHEMAS[name]() for name in sorted(SCHEMAS)], ids=sorted(SCHEMAS))
def test_random_tables_keep_the_schemas_keys(schema):
    @settings(max_examples=30, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
    @given(table_data(schema))
    def check(data):
        keeps_keys(schema, data)

    check()


def test_a_return_is_drawn_from_the_sales_it_returns():
    """TPC-DS's store_returns key (item, ticket) is a foreign key to store_sales as a whole."""
    schema = SCHEMAS["tpcds"]()
    returns = schema.table("store_returns")
    assert any(fk.references == "store_sales" and set(fk.columns) == set(returns.keys.primary_key)
               for fk in returns.keys.foreign_keys)
    seen: list[int] = []

    @settings(max_examples=60, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
    @given(table_data(schema))
    def check(data):
        keeps_keys(schema, data)
        seen.append(len(data["store_returns"]))

    check()
    assert max(seen) >= 1   # returns are drawn at all, not only empty tables


def keeps_keys(schema: Schema, data: dict) -> None:
    for table in schema.tables:
        names = [n for n, _ in table.columns]
        rows = data[table.name]
        keys = [tuple(row[names.index(c)] for c in table.keys.primary_key) for row in rows]
        assert len(set(keys)) == len(keys) and all(None not in k for k in keys)
        for fk in table.keys.foreign_keys:
            parent = schema.table(fk.references)
            parent_names = [n for n, _ in parent.columns]
            referenced = {tuple(r[parent_names.index(c)] for c in fk.referenced_columns) for r in data[parent.name]}
            for row in rows:
                value = tuple(row[names.index(c)] for c in fk.columns)
                assert None in value or value in referenced, (table.name, fk, value)


def test_mutations_work_on_tokens():
    sql = "select a, 'x y' from t where a = 1"
    assert tokens(sql) == ["select", "a", ",", "'x y'", "from", "t", "where", "a", "=", "1"]
    assert mutate(sql, [("delete", 1, 0)]) == "select , 'x y' from t where a = 1"
    assert mutate(sql, [("swap", 0, 0)]) == "a select , 'x y' from t where a = 1"
    assert mutate(sql, [("duplicate", 13, 0)]) == "select a , 'x y' 'x y' from t where a = 1"   # wraps around
    # kin: the first token at or after the position that has kin becomes one of them
    assert mutate(sql, [("kin", 8, 0)]) == "select a , 'x y' from t where a <> 1"
    assert mutate("select 1", [("kin", 0, 0)]) == "select 0"


def test_the_tpch_queries_run_unmutated(tmp_path):
    runner = FuzzRunner("tpch", str(tmp_path))
    for sql in tpch_queries():
        reference, outcome = runner.run(mutate(sql, []), {})
        assert outcome.kind == "rows" and reference == outcome.rows == [] or reference == outcome.rows, sql


@pytest.mark.parametrize("sql", ["SELECT -NULL AS c0 FROM region", "SELECT abs(NULL) AS c0 FROM region",
                                 "SELECT round(NULL, 2) AS c0, r_regionkey AS c1 FROM region",
                                 "SELECT r_regionkey + -NULL AS c0 FROM region"])
def test_a_bare_null_in_a_numeric_function_is_null_as_in_duckdb(sql, tmp_path):
    """Found by the fuzzer: a bare NULL under negation, abs or round was refused ("cannot negate
    null"); DuckDB answers NULL."""
    runner = FuzzRunner("tpch", str(tmp_path))
    reference, outcome = runner.run(sql, {"region": [[1, "a", None], [2, "", "x"]]})
    assert outcome.kind == "rows", outcome.message
    assert [tuple(r) for r in outcome.rows] == [tuple(r) for r in reference] and len(reference) == 2


@pytest.mark.parametrize("sql", ["SELECT DISTINCT CAST(r_regionkey AS VARCHAR) AS c0 FROM region ORDER BY 0.5",
                                 "SELECT r_regionkey FROM region UNION SELECT n_nationkey FROM nation ORDER BY 1.0"])
def test_order_by_a_fraction_is_a_one_line_error(sql, tmp_path):
    """Found by the mutants: ``ORDER BY 0.5`` was an internal error (int('0.5')); DuckDB rejects it."""
    runner = FuzzRunner("tpch", str(tmp_path))
    reference, outcome = runner.run(sql, {})
    assert isinstance(reference, tuple) and reference[0] == "error"
    assert outcome.kind == "refused" and "\n" not in outcome.message, outcome
    assert "ORDER BY" in outcome.message and "whole number" in outcome.message


# -- the failure path: a runner that answers wrong, fails or hangs on purpose ----------------------------

class _Broken(FuzzRunner):
    def run(self, sql, tables):  # type: ignore[no-untyped-def]
        from dataclasses import replace

        reference, outcome = super().run(sql, tables)
        if self.mode == "wrong" and outcome.rows:
            outcome = replace(outcome, rows=outcome.rows[1:])
        elif self.mode == "internal" and "JOIN" in sql:
            outcome = replace(outcome, kind="internal", error_type="KeyError", message="planning: boom")
        elif self.mode == "hang" and "JOIN" in sql:
            import time

            time.sleep(600)
        return reference, outcome


def _broken(mode: str, directory: str) -> _Broken:
    runner = _Broken("tpch", directory)
    runner.mode = mode   # type: ignore[attr-defined]
    return runner


BROKEN_QUERIES = ["SELECT r_regionkey FROM region",
                  "SELECT n_name, r_name FROM nation JOIN region ON n_regionkey = r_regionkey"]


@pytest.mark.parametrize("mode,error", [("wrong", Mismatch), ("internal", InternalError), ("hang", Hang)])
def test_a_failure_is_caught_and_shrunk(mode, error, tmp_path, monkeypatch):
    import time

    from benchmarks.deadline import Worker

    # The two queries plan and run in milliseconds, far inside the limit even on a loaded
    # machine; the hanging runner sleeps past it on the query with a join, and the run's
    # deadline cuts its shrinking short.
    family = FuzzFamily("fuzz", "", timeout=5)
    checker = FuzzChecker(family, tmp_path)
    checker.worker.close()
    checker.worker = Worker(_broken, (mode, str(tmp_path / "schema")))
    # a few fixed queries: the shrinking under test is of the rows and the choice among them
    cases = st.fixed_dictionaries({"sql": st.sampled_from(BROKEN_QUERIES), "tables": table_data(SCHEMA),
                                   "seed": st.just(0)})
    run = equivalence.Run("fuzz", checker, cases, time.monotonic() + 45 if mode == "hang" else None)
    try:
        run.batch(80, seed=1)
    finally:
        checker.close()
    assert len(run.failures) == 1, run.failures
    failure = run.failures[0]
    assert failure["kind"] == {"wrong": "mismatch", "internal": "error", "hang": "hang"}[mode]
    assert failure["error"].startswith(error.__name__)
    case = failure["case"]
    if mode == "wrong":   # shrunk: one row is enough to lose one
        assert case["sql"] == BROKEN_QUERIES[0] and sum(map(len, case["tables"].values())) == 1, case
    else:                 # the query with the join, on no rows
        assert "JOIN" in case["sql"] and sum(map(len, case["tables"].values())) == 0, case
    monkeypatch.setattr(equivalence, "CORPUS", tmp_path / "corpus.txt")
    assert equivalence.append_to_corpus("fuzz", failure)
    line = (tmp_path / "corpus.txt").read_text().splitlines()[1]
    assert json.loads(line)["sql"] == case["sql"]


# -- the regression cases -----------------------------------------------------------------------------

def _regressions() -> list[tuple[dict, str | None]]:
    """The corpus's fuzz and mutants cases, each with its open defect (a ``# open: ...``
    comment line before it: a failure found and listed, not yet fixed), if any."""
    if not equivalence.CORPUS.exists():
        return []
    found, open_defect = [], None
    for line in equivalence.CORPUS.read_text().splitlines():
        if line.startswith("# open:"):
            open_defect = line[len("# open:"):].strip()
        elif line.startswith("{"):
            case = json.loads(line)
            if case["family"] in FUZZ_FAMILIES:
                found.append((case, open_defect))
            open_defect = None
    return found


def _regression_params() -> list:
    # an open defect's case runs and is expected to fail (an XPASS says it was fixed: drop the
    # "# open:" line then)
    return [pytest.param(case, id=case["sql"][:60],
                         marks=[pytest.mark.xfail(reason=f"open: {defect}", strict=False)] if defect else [])
            for case, defect in _regressions()] or [pytest.param(None, id="empty")]


@pytest.mark.parametrize("case", _regression_params())
def test_regression_cases(case, tmp_path):
    if case is None:
        pytest.skip("no fuzz or mutants case in the corpus yet")
    checker = FuzzChecker(FUZZ_FAMILIES[case["family"]], Path(tmp_path))
    try:
        checker.check(case)
    finally:
        checker.close()
