"""The reference answer of the property tests: small random tables of two nullable integer
columns (``benchmarks.equivalence.tables``, shared with the equivalence benchmark), answered by
DuckDB.

DuckDB is the reference engine, but DuckDB 2.0.0 itself fails on some plain queries (an
internal error, ``unordered_map::at``). Such a failure says nothing about cbo: the case is
answered by a second real engine, SQLite (Python's own), on the same rows; where SQLite cannot
run the query either (it has no ANY/ALL), the case is counted and reported at the end of the
run (``REFERENCE_FALLBACKS``), never failed.
"""

from __future__ import annotations

from typing import Any

import duckdb

from benchmarks.equivalence.tables import RandomTables, ReferenceUnavailable, is_engine_fault
from cbo.answers import compare
from cbo.ir.operators import Plan
from cbo.sqlgen import to_sql

__all__ = ["REFERENCE_FALLBACKS", "RandomTables", "ReferenceUnavailable", "assert_plans_answer", "is_engine_fault",
           "reference_answer"]

# (what happened, query) for every case DuckDB could not answer: "sqlite" when SQLite answered
# instead, "skipped" when neither could. Printed by tests/conftest.py after the run.
REFERENCE_FALLBACKS: list[tuple[str, str]] = []


def reference_answer(tables: RandomTables, connection: duckdb.DuckDBPyConnection, sql: str,
                     data: dict[str, list[tuple]]) -> tuple[list[tuple[Any, ...]], duckdb.DuckDBPyConnection]:
    """DuckDB's answer to ``sql`` (or SQLite's where DuckDB fails internally), and a usable
    DuckDB connection for what follows. Raises ReferenceUnavailable when neither answers;
    errors the query itself asks for (DuckDB's, not internal) propagate."""
    try:
        return connection.execute(sql).fetchall(), connection
    except duckdb.Error as exc:
        if not is_engine_fault(exc):
            raise
    try:
        answer = tables.sqlite_answer(sql, data)
    except ReferenceUnavailable:
        REFERENCE_FALLBACKS.append(("skipped", sql))
        raise
    REFERENCE_FALLBACKS.append(("sqlite", sql))
    return answer, tables.reconnect()


def assert_plans_answer(tables: RandomTables, connection: duckdb.DuckDBPyConnection, sql: str,
                        data: dict[str, list[tuple]], plans: list[Plan], names: tuple[str, ...]) -> None:
    """Each plan, rendered to SQL and run on DuckDB, returns the multiset of rows ``sql`` does."""
    try:
        expected, connection = reference_answer(tables, connection, sql, data)
    except ReferenceUnavailable:
        return   # counted in REFERENCE_FALLBACKS and reported; says nothing about cbo
    for plan in plans:
        rendered = to_sql(plan, names, "duckdb")
        try:
            actual = connection.execute(rendered).fetchall()
        except duckdb.Error as exc:
            if not is_engine_fault(exc):
                raise
            # DuckDB failed internally on cbo's SQL: SQLite runs the same plan's SQL instead.
            REFERENCE_FALLBACKS.append(("sqlite-plan", rendered))
            connection = tables.reconnect()
            try:
                actual = tables.sqlite_answer(rendered, data, read="duckdb")
            except ReferenceUnavailable:
                continue
        verdict = compare(expected, actual, ordered=False)
        assert verdict.matches, f"{verdict.detail}\nquery: {sql}\ntables: {data}\nplan:\n{plan}"
