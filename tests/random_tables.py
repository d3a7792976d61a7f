"""Small random tables of two nullable integer columns, as Parquet for cbo's catalog and as
DuckDB tables for the reference answer: the ground both property tests stand on.

DuckDB is the reference engine, but DuckDB 2.0.0 itself fails on some plain queries (an
internal error, ``unordered_map::at``). Such a failure says nothing about cbo: the case is
answered by a second real engine, SQLite (Python's own), on the same rows; where SQLite cannot
run the query either (it has no ANY/ALL), the case is counted and reported at the end of the
run (``REFERENCE_FALLBACKS``), never failed.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import sqlglot

from cbo.answers import compare
from cbo.ir.operators import Plan
from cbo.memo.memo import Group, group_of
from cbo.memo.search import restore_output_order
from cbo.planner import Planner
from cbo.settings import OptimizerSettings
from cbo.sources.catalog import parse_catalog
from cbo.sqlgen import to_sql

# (what happened, query) for every case DuckDB could not answer: "sqlite" when SQLite answered
# instead, "skipped" when neither could. Printed by tests/conftest.py after the run.
REFERENCE_FALLBACKS: list[tuple[str, str]] = []


class ReferenceUnavailable(Exception):
    """Neither DuckDB nor SQLite could run the original query: the case proves nothing."""


def is_engine_fault(exc: BaseException) -> bool:
    """An internal error of DuckDB itself, as opposed to an error the query asks for.

    DuckDB raises a subclass of ``duckdb.Error`` for every error it classifies (binder, invalid
    input such as a scalar subquery's second row, ...); a bare ``duckdb.Error`` is a C++
    exception that escaped uncaught, e.g. ``unordered_map::at``.
    """
    return (isinstance(exc, duckdb.InternalException) or type(exc) is duckdb.Error
            or "INTERNAL Error" in str(exc))


class RandomTables:
    def __init__(self, directory: Path, tables: dict[str, tuple[str, str]]):
        self.directory = directory
        self.tables = tables
        lines = []
        for name in tables:
            lines += [f"[sources.lake.tables.{name}]", f'path = "{name}.parquet"']
        text = '[sources.lake]\ntype = "spark"\n' + "\n".join(lines) + "\n"
        self.catalog = parse_catalog(text, directory / "catalog.toml")

    def load(self, data: dict[str, list[tuple]]) -> duckdb.DuckDBPyConnection:
        """Write the drawn rows as each table's Parquet file; a DuckDB connection holding them."""
        connection = duckdb.connect()
        for name, (first, second) in self.tables.items():
            columns = list(zip(*data[name])) if data[name] else [(), ()]
            table = pa.table({first: pa.array(columns[0], pa.int32()), second: pa.array(columns[1], pa.int32())})
            pq.write_table(table, self.directory / f"{name}.parquet")
            connection.execute(f"create table {name} as select * from read_parquet('{self.directory / name}.parquet')")
        return connection

    def reconnect(self) -> duckdb.DuckDBPyConnection:
        """A new DuckDB connection over the tables last loaded (an internal error invalidates
        the database it happened in)."""
        connection = duckdb.connect()
        for name in self.tables:
            connection.execute(f"create table {name} as select * from read_parquet('{self.directory / name}.parquet')")
        return connection

    def sqlite_answer(self, sql: str, data: dict[str, list[tuple]], read: str | None = None) -> list[tuple[Any, ...]]:
        """The query's answer from SQLite over the same rows; ReferenceUnavailable if it cannot."""
        connection = sqlite3.connect(":memory:")
        try:
            for name, (first, second) in self.tables.items():
                connection.execute(f"create table {name} ({first} integer, {second} integer)")
                connection.executemany(f"insert into {name} values (?, ?)", data[name])
            try:
                translated = sqlglot.transpile(sql, read=read, write="sqlite")[0]
                return connection.execute(translated).fetchall()
            except (sqlite3.Error, sqlglot.errors.SqlglotError) as exc:
                raise ReferenceUnavailable(f"SQLite cannot run it either: {exc}") from exc
        finally:
            connection.close()


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


# Accepts a memo expression, given the rule that added it (None: the written form or a
# normalization); see forced_plan.
Prefer = Callable[[Plan, "str | None"], bool]


def forced_plan(group: Group, rng: random.Random, prefer: Prefer,
                avoid: Collection[str] = ()) -> tuple[Plan, int]:
    """A plan of ``group`` with, in every group, an expression ``prefer`` accepts where the group
    has one, never one added by a rule in ``avoid``, other choices random; and how many preferred
    expressions it uses (a property test checks it is not zero, or it could pass vacuously).

    This is how a rewrite is *forced* wherever it holds: ``prefer`` picks the rule's expressions
    (``by_rule``), ``avoid`` keeps a competing rewrite out (3.1 and 3.2 of the same semi join)."""
    added = group.memo.added_by
    allowed = [e for e in group.expressions if added.get(e) not in avoid]
    preferred = [e for e in allowed if prefer(e, added.get(e))]
    expr = rng.choice(preferred or allowed or group.expressions)
    used = 1 if preferred else 0
    children = []
    for child in expr.children:
        plan, count = forced_plan(group_of(child), rng, prefer, avoid)
        children.append(plan)
        used += count
    return (expr.with_children(tuple(children)) if children else expr), used


def by_rule(name: str) -> Prefer:
    """``forced_plan``'s preference for the expressions rule ``name`` added."""
    return lambda expr, rule: rule == name


class ForcedPlans(RandomTables):
    """Random tables ``t0``..``t<n-1>`` (columns ``a``, ``b``) and a planner with the byte-reduction
    threshold infinite, so every aggregation-below-join rewrite enters the memo wherever it holds;
    ``check`` runs the chosen plan and forced ones against the reference."""

    def __init__(self, directory: Path, tables: Collection[str]):
        super().__init__(directory, {name: ("a", "b") for name in tables})
        self.settings = OptimizerSettings(push_aggregation_below_join_byte_reduction_threshold=float("inf"))

    def check(self, sql: str, data: dict[str, list[tuple]], seed: int, prefer: Prefer | None,
              avoid: Collection[str] = (), draws: int = 3) -> int:
        """The chosen plan and ``draws`` plans forced by ``prefer`` / ``avoid`` (``prefer`` None:
        drawn at random from the memo) answer as the reference does; returns how many preferred
        expressions the forced plans used."""
        connection = self.load(data)
        planned = Planner(self.catalog, settings=self.settings).plan(sql)
        assert planned.optimized is not None
        rng = random.Random(seed)
        plans, used = [planned.plan], 0
        for _ in range(draws):
            plan, count = forced_plan(planned.optimized.root, rng, prefer or (lambda expr, rule: False), avoid)
            plans.append(restore_output_order(plan, planned.plan))
            used += count
        assert_plans_answer(self, connection, sql, data, plans, planned.names)
        return used
