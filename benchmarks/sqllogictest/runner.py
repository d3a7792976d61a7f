"""One sqllogictest file through cbo: its statements build the tables in DuckDB, which exports
them (and its views, materialized) to Parquet whenever they changed before a query; each query
runs through cbo (planned, written as DuckDB SQL, run on DuckDB over the Parquet files, in a
worker process under a deadline) and on DuckDB as written, and the answers are compared with
each other and with the file's expected result.

Each query gets one outcome (``Outcome``):

* ``answered``: cbo's rows are DuckDB's (as a multiset; row order is checked against the file);
* ``refused``: cbo raised a one-line error while planning (its message's class is counted);
* ``internal``: cbo failed otherwise: an exception that is no ``CboError``, or SQL of cbo's
  that DuckDB rejects where it answers the query as written;
* ``wrong``: cbo answered otherwise than DuckDB, or in another row order than both DuckDB and
  the file;
* ``hang``: cbo ran past the time limit;
* ``error_as_reference``: cbo's SQL fails on DuckDB, and so does the query as written (or cbo
  refuses a ``statement error`` that DuckDB rejects too);
* ``unchecked``: cbo answered where DuckDB fails on the query as written, and the file's
  result differs (no engine vouches for cbo's answer);
* ``accepted_invalid``: cbo answered a ``statement error`` the file expects to fail, which
  DuckDB rejects too.

DuckDB runs the query with the division of the query's dialect: ``integer_division`` for
PostgreSQL and Trino, whose ``7 / 2`` is 3 as in SQLite, the corpus's own engine.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp

from benchmarks.deadline import CallFailed, DeadlineExceeded, Worker
from benchmarks.sqllogictest.records import Halt, Query, Statement, format_result, matches, parse_records, read_file
from benchmarks.through_cbo import CboOutcome, first_line, make_runner
from cbo.answers import compare

INTEGER_DIVISION_DIALECTS = ("postgres", "trino", "presto")
# The engine name a file's ``skipif``/``onlyif`` refer to, by cbo dialect.
ENGINE_NAMES = {"postgres": "postgresql"}


class Outcome(Enum):
    ANSWERED = "answered"
    REFUSED = "refused"
    INTERNAL = "internal"
    WRONG = "wrong"
    HANG = "hang"
    ERROR_AS_REFERENCE = "error_as_reference"
    UNCHECKED = "unchecked"
    ACCEPTED_INVALID = "accepted_invalid"


@dataclass
class QueryResult:
    file: str
    line: int
    sql: str
    outcome: Outcome
    detail: str = ""                  # the refusal's message, the mismatch, the internal error
    duckdb_answers: bool = False      # whether DuckDB answered the query as written
    cbo_matches_file: bool | None = None
    duckdb_matches_file: bool | None = None
    cbo_sql: str = ""


@dataclass
class FileReport:
    path: str
    queries: int = 0
    statements: int = 0
    setup_failed: str = ""            # the statement whose outcome differed from the file's, if any
    skipped_after_setup: int = 0      # queries not run because the tables no longer match the file
    outcomes: Counter = field(default_factory=Counter)
    results: list[QueryResult] = field(default_factory=list)   # every query but the plain answered ones
    answered_results: int = 0
    cbo_matches_file: int = 0
    duckdb_matches_file: int = 0
    spark_checked: int = 0
    spark_failures: list[dict] = field(default_factory=list)


_INTEGERS = {"INT", "BIGINT", "SMALLINT", "TINYINT", "MEDIUMINT", "UINT", "UBIGINT"}
_REALS = {"FLOAT", "DOUBLE", "REAL"}
_TEXTS = {"TEXT", "VARCHAR", "CHAR", "NVARCHAR", "NCHAR"}


def duckdb_ddl(sql: str) -> str:
    """A CREATE TABLE of the file's, for DuckDB with SQLite's storage: 64-bit integers and
    8-byte reals (DuckDB's FLOAT is 4 bytes), text as VARCHAR without a length."""
    tree = sqlglot.parse_one(sql, read="sqlite")
    for node in list(tree.find_all(exp.DataType)):
        name = node.this.name if isinstance(node.this, exp.DataType.Type) else ""
        if name in _INTEGERS:
            node.replace(exp.DataType.build("BIGINT"))
        elif name in _REALS:
            node.replace(exp.DataType.build("DOUBLE"))
        elif name in _TEXTS:
            node.replace(exp.DataType.build("VARCHAR"))
    return tree.sql(dialect="duckdb")


_POSITION = re.compile(r"line \d+, column \d+: ")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(\.\d+)?(?![\w.])")


def message_class(message: str) -> str:
    """A refusal's message without what varies between queries (place, numbers)."""
    text = _POSITION.sub("", message)
    text = _NUMBER.sub("N", text)
    return text[:120]


class Reference:
    """DuckDB holding a file's tables: runs its statements, answers its queries as written
    (under a time limit: ``interrupt``), and exports the tables to Parquet for cbo."""

    def __init__(self, directory: Path, integer_division: bool, timeout: float):
        self.directory, self.timeout = directory, timeout
        self.connection = duckdb.connect(config={"threads": 1})
        self.integer_division = integer_division
        if integer_division:
            self.connection.execute("set integer_division = true")
        self.generation = 0

    def statement(self, sql: str) -> str | None:
        """Run a statement; None if it ran, else its error."""
        text = sql
        try:
            if re.match(r"\s*create\s+table", sql, re.IGNORECASE):
                text = duckdb_ddl(sql)
        except sqlglot.errors.SqlglotError:
            pass
        try:
            self.connection.execute(text)
            return None
        except duckdb.Error as exc:
            return first_line(exc)

    def query(self, sql: str, integer_division: bool | None = None) -> list[tuple[Any, ...]] | str:
        """The rows of ``sql`` as written, or its error (a str)."""
        change = integer_division is not None and integer_division != self.integer_division
        if change:
            self.connection.execute(f"set integer_division = {'true' if integer_division else 'false'}")
        timer = threading.Timer(self.timeout, self.connection.interrupt)
        timer.start()
        try:
            return self.connection.execute(sql).fetchall()
        except duckdb.Error as exc:
            return f"error: {first_line(exc)}"
        finally:
            timer.cancel()
            if change:
                self.connection.execute(f"set integer_division = {'true' if self.integer_division else 'false'}")

    def export(self) -> Path:
        """Every table and view as Parquet in a new directory, and the catalog naming them (with
        each table's primary and unique keys, which DuckDB enforced)."""
        self.generation += 1
        target = self.directory / f"g{self.generation}"
        target.mkdir(parents=True, exist_ok=True)
        tables = [r[0] for r in self.connection.execute(
            "select table_name from duckdb_tables() where not internal and not temporary "
            "union all select view_name from duckdb_views() where not internal and not temporary").fetchall()]
        keys: dict[str, list[tuple[str, list[str]]]] = {}
        for table, kind, columns in self.connection.execute(
                "select table_name, constraint_type, constraint_column_names from duckdb_constraints() "
                "where constraint_type in ('PRIMARY KEY', 'UNIQUE')").fetchall():
            keys.setdefault(table, []).append((kind, list(columns)))
        lines = ['[sources.lake]', 'type = "spark"']
        for name in tables:
            path = target / f"{name}.parquet"
            self.connection.execute(f"copy (select * from \"{name}\") to '{path}' (format parquet)")
            lines += [f"[sources.lake.tables.{name}]", f'path = "{path.name}"']
            primary = [cols for kind, cols in keys.get(name, []) if kind == "PRIMARY KEY"]
            unique = [cols for kind, cols in keys.get(name, []) if kind == "UNIQUE"]
            if primary:
                lines.append("primary_key = [" + ", ".join(f'"{c}"' for c in primary[0]) + "]")
            if unique:
                lines.append("unique_keys = [" + ", ".join("[" + ", ".join(f'"{c}"' for c in u) + "]"
                                                           for u in unique) + "]")
        catalog = target / "catalog.toml"
        catalog.write_text("\n".join(lines) + "\n")
        return catalog

    def close(self) -> None:
        self.connection.close()


def _is_select(sql: str) -> bool:
    return bool(re.match(r"\s*(select|with|values|\()", sql, re.IGNORECASE))


@dataclass
class Settings:
    dialect: str = "postgres"
    timeout: float = 30.0            # seconds per query, for cbo and for DuckDB
    max_queries: int | None = None   # per file (the first N queries)
    every: int = 1                   # run every N-th query (a sample spread over the file)
    spark: Callable[[str, Path, Query, list[tuple[Any, ...]]], str | None] | None = None   # the Spark check
    spark_every: int = 0             # check every N-th answered query on Spark (0: none)


def run_file(path: Path, workdir: Path, worker: Worker, settings: Settings, name: str | None = None) -> FileReport:
    """Run one file; ``worker`` is a ``Worker`` over ``make_runner(dialect)``."""
    report = FileReport(name or str(path))
    engine = ENGINE_NAMES.get(settings.dialect, settings.dialect)
    reference = Reference(workdir, settings.dialect in INTEGER_DIVISION_DIALECTS, settings.timeout)
    dirty, catalog = True, None
    query_index = 0
    try:
        for record in parse_records(read_file(path), engine):
            if isinstance(record, Halt):
                break
            if isinstance(record, int):
                continue
            if report.setup_failed:
                report.skipped_after_setup += isinstance(record, Query)
                continue
            if isinstance(record, Statement) and not _is_select(record.sql):
                report.statements += 1
                error = reference.statement(record.sql)
                if (error is None) != record.ok and not _harmless(record.sql):
                    report.setup_failed = f"line {record.line}: {record.sql[:200]} -> " + \
                        (error or "DuckDB ran a statement the file expects to fail")
                dirty = True
                continue
            query_index += 1
            if settings.max_queries is not None and query_index > settings.max_queries:
                break
            if (query_index - 1) % settings.every:
                continue
            if dirty:
                catalog = reference.export()
                try:
                    worker.call("load", str(catalog), timeout=120)
                except (CallFailed, DeadlineExceeded) as exc:
                    report.setup_failed = f"cbo cannot load the catalog: {exc}"
                    continue
                dirty = False
            assert catalog is not None
            try:
                result = _check(record, report.path, reference, worker, catalog, settings)
            except (CallFailed, DeadlineExceeded) as exc:   # the worker cannot be brought back
                report.setup_failed = f"line {record.line}: the worker failed after a hang: {exc}"
                continue
            report.queries += 1
            report.outcomes[result.outcome.value] += 1
            if result.cbo_matches_file:
                report.cbo_matches_file += 1
            if result.duckdb_matches_file:
                report.duckdb_matches_file += 1
            if result.outcome is Outcome.ANSWERED:
                report.answered_results += 1
                if settings.spark and settings.spark_every and isinstance(record, Query) \
                        and report.answered_results % settings.spark_every == 0:
                    rows = reference.query(record.sql)
                    assert not isinstance(rows, str)
                    problem = settings.spark(record.sql, catalog, record, rows)
                    report.spark_checked += 1
                    if problem:
                        report.spark_failures.append({"line": record.line, "sql": record.sql, "problem": problem})
            else:
                report.results.append(result)
    finally:
        reference.close()
    return report


def _harmless(sql: str) -> bool:
    """Statements whose failure leaves every table's rows as the file has them."""
    return bool(re.match(r"\s*(create\s+(unique\s+)?index|drop\s+index|reindex)\b", sql, re.IGNORECASE))


def _check(record: Query | Statement, path: str, reference: Reference, worker: Worker, catalog: Path,
           settings: Settings) -> QueryResult:
    sql = record.sql
    expected = reference.query(sql)
    duck_answers = not isinstance(expected, str)
    result = QueryResult(path, record.line, sql, Outcome.ANSWERED, duckdb_answers=duck_answers)
    if isinstance(record, Query) and duck_answers:
        assert not isinstance(expected, str)
        result.duckdb_matches_file = matches(record, format_result(expected, record.types, record.sort))
    try:
        outcome: CboOutcome = worker.call("run", sql, timeout=settings.timeout)
    except DeadlineExceeded as exc:
        result.outcome, result.detail = Outcome.HANG, str(exc)
        worker.call("load", str(catalog), timeout=120)   # the new child (raises CallFailed if it cannot)
        return result
    except CallFailed as exc:
        result.outcome, result.detail = Outcome.INTERNAL, f"{exc.kind}: {exc.message}"
        return result
    result.cbo_sql = outcome.sql
    if outcome.kind == "refused":
        result.outcome, result.detail = Outcome.REFUSED, first_line(outcome.message)
        if record_is_statement_error(record) and not duck_answers:   # the error the file expects
            result.outcome = Outcome.ERROR_AS_REFERENCE
        if "\n" in outcome.message.strip():   # a refusal is one line
            result.outcome, result.detail = Outcome.INTERNAL, f"a refusal of several lines: {outcome.message[:300]}"
        return result
    if outcome.kind == "internal":
        result.outcome, result.detail = Outcome.INTERNAL, f"{outcome.error_type}: {outcome.message}"
        return result
    if outcome.kind == "engine_error":
        if duck_answers:
            result.outcome, result.detail = Outcome.INTERNAL, f"DuckDB rejects cbo's SQL: {outcome.message}"
        else:
            result.outcome, result.detail = Outcome.ERROR_AS_REFERENCE, outcome.message
        return result
    rows = outcome.rows
    assert rows is not None
    if isinstance(record, Query):
        result.cbo_matches_file = matches(record, format_result(rows, record.types, record.sort))
    if not duck_answers:
        if record_is_statement_error(record):
            result.outcome, result.detail = Outcome.ACCEPTED_INVALID, f"DuckDB: {expected}"
        elif not result.cbo_matches_file:
            result.outcome, result.detail = Outcome.UNCHECKED, f"DuckDB: {expected}"
        return result
    assert not isinstance(expected, str)
    verdict = compare(expected, rows, ordered=False)
    if not verdict.matches:
        result.outcome, result.detail = Outcome.WRONG, verdict.detail
        if "/" in sql and reference.integer_division and \
                compare(reference.query(sql, integer_division=False), rows, ordered=False).matches:
            result.detail = "division: cbo divides as the engine does, not as the query's dialect " + \
                            f"(integer division); {verdict.detail}"
        return result
    if isinstance(record, Query) and result.duckdb_matches_file and not result.cbo_matches_file:
        unsorted = format_result(rows, record.types, record.sort)
        if sorted(unsorted) == sorted(format_result(expected, record.types, record.sort)):
            result.outcome, result.detail = Outcome.WRONG, "row order differs from DuckDB's and the file's"
    return result


def record_is_statement_error(record: Query | Statement) -> bool:
    return isinstance(record, Statement) and not record.ok


def make_worker(dialect: str) -> Worker:
    return Worker(make_runner, (dialect,))
