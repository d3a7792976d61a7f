"""Small random tables of two nullable integer columns, as Parquet for cbo's catalog and as DuckDB
tables for the reference answer; and the reference engines that answer a case.

DuckDB is the reference engine, but DuckDB 2.0.0 itself fails on some plain queries (an internal
error, ``unordered_map::at``). Such a failure says nothing about cbo: the benchmark counts it as
a reference failure and asks a throwaway PostgreSQL (``References``) instead; the property tests
ask SQLite (``RandomTables.sqlite_answer``), which needs no server.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import sqlglot

from cbo.sources.catalog import parse_catalog


class ReferenceUnavailable(Exception):
    """No reference engine could run the query: the case proves nothing about cbo."""


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

    def arrow(self, name: str, rows: list[tuple]) -> pa.Table:
        """The rows of table ``name`` as an Arrow table of its two nullable integer columns."""
        first, second = self.tables[name]
        columns = list(zip(*rows)) if rows else [(), ()]
        return pa.table({first: pa.array(columns[0], pa.int32()), second: pa.array(columns[1], pa.int32())})

    def write_schema(self) -> None:
        """Empty Parquet files, once: cbo's catalog reads the tables' columns from them, and
        planning reads nothing else from the files (no statistics), so the rows of a case need
        not be written for cbo."""
        for name in self.tables:
            path = self.directory / f"{name}.parquet"
            if not path.exists():
                pq.write_table(self.arrow(name, []), path)

    def load(self, data: dict[str, list[tuple]]) -> duckdb.DuckDBPyConnection:
        """Write the drawn rows as each table's Parquet file; a DuckDB connection holding them."""
        connection = duckdb.connect()
        for name in self.tables:
            pq.write_table(self.arrow(name, data[name]), self.directory / f"{name}.parquet")
            connection.execute(f"create table {name} as select * from read_parquet('{self.directory / name}.parquet')")
        return connection

    def fill(self, connection: duckdb.DuckDBPyConnection, data: dict[str, list[tuple]]) -> None:
        """The drawn rows as the tables of a long-lived DuckDB connection: Arrow tables
        registered under the tables' names, replacing the last case's (a new connection per
        case costs more than the case's queries; copying the rows into DuckDB tables buys
        nothing for a few rows)."""
        for name in self.tables:
            connection.register(name, self.arrow(name, data[name]))

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


MULTI_ROW = "error: more than one row"


def error_outcome(exc: BaseException) -> str:
    """An error a query asks for, as an outcome comparable across engines: a scalar subquery
    with a second row is named; any other error is one class (engines word them differently)."""
    return MULTI_ROW if "more than one row" in str(exc).lower() else "error: other"


@dataclass
class References:
    """DuckDB over the case's rows, and a throwaway PostgreSQL (started on first need, under
    ``server_root``, never the user's) where DuckDB fails internally. Counts both."""

    tables: RandomTables
    server_root: Path
    duckdb_faults: int = 0          # DuckDB failed internally (original query or a plan's SQL)
    postgres_answers: int = 0       # ... and PostgreSQL answered instead
    unanswered: int = 0             # ... and PostgreSQL could not either
    schema: str = "cbo_equivalence"
    _connection: duckdb.DuckDBPyConnection | None = None
    _data: dict[str, list[tuple]] = field(default_factory=dict)
    _postgres: Any = None           # a psycopg connection
    _server: Any = None
    _postgres_loaded: bool = False

    def load(self, data: dict[str, list[tuple]]) -> None:
        """The case's rows into DuckDB (one connection for the whole run); PostgreSQL gets
        them only if a query needs it."""
        if self._connection is None:
            self.tables.write_schema()
            # one thread: the tables hold a few rows, and the machine is shared with other jobs
            self._connection = duckdb.connect(config={"threads": 1})
        self.tables.fill(self._connection, data)
        self._data = data
        self._postgres_loaded = False

    def run(self, sql: str, postgres_sql: Callable[[], str] | None = None) -> list[tuple[Any, ...]] | str:
        """The rows of ``sql`` (or the error it asks for, as text) on DuckDB; where DuckDB fails
        internally, of ``postgres_sql()`` (default ``sql``) on PostgreSQL. ReferenceUnavailable
        when neither answers."""
        assert self._connection is not None
        try:
            return self._connection.execute(sql).fetchall()
        except duckdb.Error as exc:
            if not is_engine_fault(exc):
                return error_outcome(exc)
        self.duckdb_faults += 1
        # an internal error invalidates the database it happened in: a new one, the same rows
        with contextlib.suppress(duckdb.Error):
            self._connection.close()
        self._connection = duckdb.connect(config={"threads": 1})
        self.tables.fill(self._connection, self._data)
        try:
            answer = self._run_postgres(postgres_sql() if postgres_sql else sql)
        except ReferenceUnavailable:
            self.unanswered += 1
            raise
        self.postgres_answers += 1
        return answer

    def _run_postgres(self, sql: str) -> list[tuple[Any, ...]] | str:
        import psycopg

        connection = self._postgres_connection()
        if not self._postgres_loaded:
            with connection.transaction():
                for name, (first, second) in self.tables.tables.items():
                    connection.execute(f"drop table if exists {name}")
                    connection.execute(f"create table {name} ({first} integer, {second} integer)")
                    if self._data[name]:
                        with connection.cursor() as cursor:
                            cursor.executemany(f"insert into {name} values (%s, %s)", self._data[name])
            self._postgres_loaded = True
        try:
            with connection.transaction():
                return [tuple(row) for row in connection.execute(sql).fetchall()]
        except psycopg.errors.CardinalityViolation as exc:
            return error_outcome(exc)
        except psycopg.Error as exc:
            raise ReferenceUnavailable(f"PostgreSQL cannot run it either: {str(exc).splitlines()[0]}") from None

    def _postgres_connection(self):  # type: ignore[no-untyped-def]
        if self._postgres is None:
            import psycopg

            from cbo.connectors.postgres.server import LocalPostgres

            self._server = LocalPostgres(self.server_root)
            info = self._server.start()
            self._postgres = psycopg.connect(**info.conninfo(), autocommit=True)
            self._postgres.execute(f"create schema if not exists {self.schema}")
            self._postgres.execute(f"set search_path to {self.schema}")
            self._postgres.execute("set statement_timeout = '20s'")
        return self._postgres

    def close(self) -> None:
        """Close the connections; stop the PostgreSQL server if this run started it."""
        if self._connection is not None:
            self._connection.close()
        if self._postgres is not None:
            self._postgres.close()
            self._server.stop()
            self._postgres = None
