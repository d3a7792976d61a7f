"""The property tests' second reference engine: SQLite answers where DuckDB fails internally.

DuckDB 2.0.0 raises internal errors (``unordered_map::at``) on some plain queries; a case it
cannot answer is answered by SQLite over the same rows, or counted and reported when SQLite
cannot run the query either. These tests check that SQLite agrees with DuckDB on the shapes
the property tests draw, so a fallback answer is a real reference, not a way out.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cbo.answers import compare
from tests.quick.test_memo_equivalence import TABLES, join_queries, table_rows
from tests.random_tables import RandomTables, ReferenceUnavailable, reference_answer


@pytest.fixture(scope="module")
def tables(tmp_path_factory):  # type: ignore[no-untyped-def]
    return RandomTables(tmp_path_factory.mktemp("fallback"), {name: ("a", "b") for name in TABLES})


@settings(max_examples=40, deadline=None, suppress_health_check=list(__import__("hypothesis").HealthCheck))
@given(sql=join_queries(), data=st.fixed_dictionaries({name: table_rows for name in TABLES}))
def test_sqlite_answers_the_drawn_join_queries_as_duckdb_does(tables, sql, data):
    connection = tables.load(data)
    expected = connection.execute(sql).fetchall()
    verdict = compare(expected, tables.sqlite_answer(sql, data), ordered=False)
    assert verdict.matches, f"{verdict.detail}\n{sql}\n{data}"


def test_a_query_sqlite_cannot_run_is_unavailable_not_a_failure(tables):
    data = {name: [(1, 2)] for name in TABLES}
    with pytest.raises(ReferenceUnavailable):
        tables.sqlite_answer("select t0.a from t0 where t0.b > all (select t1.a from t1)", data)


def test_duckdb_answers_first_when_it_can(tables):
    data = {name: [(1, None), (None, 2)] for name in TABLES}
    connection = tables.load(data)
    answer, same = reference_answer(tables, connection, "select t0.a, t1.b from t0 join t1 on t0.a = t1.a", data)
    assert answer == [(1, None)] and same is connection


# Drawn by test_memo_equivalence: DuckDB 2.0.0 raises a bare ``unordered_map::at`` on it (t0
# and t1 empty). The right answer is empty (the inner join with t2 needs a row of t0).
DUCKDB_FAILS = ("select t0.a, t0.b, t1.a, t1.b, t2.a, t2.b, t3.a, t3.b from t0 left join t1 on t1.b = t0.b "
                "join t2 on t2.b = t0.a and t2.b + t0.a >= t1.b "
                "left join t3 on t3.b = t2.b and t3.b + t2.a >= t0.b where t1.b is null")
DUCKDB_FAILS_ON = {"t0": [], "t1": [], "t2": [(1, None), (None, 1), (1, None)], "t3": [],
                   "t4": [(2, None), (1, None), (None, 1), (1, None)], "t5": [(1, 0), (None, 0)]}


def test_duckdbs_own_failure_is_answered_by_sqlite_and_reported(tables):
    import duckdb

    from tests.random_tables import REFERENCE_FALLBACKS, is_engine_fault

    connection = tables.load(DUCKDB_FAILS_ON)
    try:
        connection.execute(DUCKDB_FAILS).fetchall()
        pytest.skip("this DuckDB answers the query (the failure is fixed upstream)")
    except duckdb.Error as exc:
        assert is_engine_fault(exc), exc
    before = len(REFERENCE_FALLBACKS)
    answer, usable = reference_answer(tables, tables.load(DUCKDB_FAILS_ON), DUCKDB_FAILS, DUCKDB_FAILS_ON)
    assert answer == []
    assert REFERENCE_FALLBACKS[before:] == [("sqlite", DUCKDB_FAILS)]
    assert usable.execute("select count(*) from t2").fetchall() == [(3,)]


def test_the_memo_property_passes_on_duckdbs_failure(tables):
    # The whole property check on that case: no failure is blamed on cbo.
    from tests.quick.test_memo_equivalence import Harness
    from cbo.settings import OptimizerSettings

    harness = Harness(tables.directory)
    harness.check(DUCKDB_FAILS, DUCKDB_FAILS_ON, 3, OptimizerSettings())
