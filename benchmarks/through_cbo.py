"""One query through cbo on DuckDB, each step's failure kept apart: the conformance and fuzzing
benchmarks judge a query by what cbo did with it.

An error the planner raises for the user (a ``CboError``: the query is refused, in one line) is
not one it raises by accident (an internal error), and neither is the engine rejecting the SQL
cbo wrote, which is cbo's fault where DuckDB answers the query as written.

``CboRunner`` is what a deadline worker (``benchmarks.deadline``) keeps in its child process: a
planner over one catalog at a time and DuckDB over the catalog's Parquet files.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cbo.errors import CboError


@dataclass(frozen=True)
class CboOutcome:
    """What cbo did with one query: ``kind`` is ``rows``, ``refused`` (a CboError while
    planning), ``internal`` (any other exception while planning or writing SQL) or
    ``engine_error`` (DuckDB failed on the SQL cbo wrote)."""

    kind: str
    rows: list[tuple[Any, ...]] | None = None
    message: str = ""        # the error's message (all of it: a refusal must be one line)
    error_type: str = ""
    sql: str = ""            # the SQL cbo ran (for rows and engine errors)
    trace: str = ""

    @property
    def summary(self) -> str:
        return f"{self.error_type}: {first_line(self.message)}" if self.error_type else self.kind


def first_line(text: object) -> str:
    for line in str(text).strip().splitlines():
        if line.strip():
            return line.strip()[:400]
    return ""


def through_cbo(planner: Any, execute: Callable[[str], list[tuple[Any, ...]]], sql: str) -> CboOutcome:
    """Plan ``sql``, write the plan as DuckDB SQL and ``execute`` it."""
    from cbo.sqlgen import to_sql

    try:
        planned = planner.plan(sql)
    except CboError as exc:
        return CboOutcome("refused", message=str(exc), error_type=type(exc).__name__)
    except Exception as exc:   # noqa: BLE001 - a bug of cbo's, reported as one
        return CboOutcome("internal", message=f"planning: {first_line(exc)}", error_type=type(exc).__name__,
                          trace=traceback.format_exc(limit=10)[-3000:])
    try:
        text = to_sql(planned.plan, planned.names, "duckdb")
    except Exception as exc:   # noqa: BLE001
        return CboOutcome("internal", message=f"writing SQL: {first_line(exc)}", error_type=type(exc).__name__,
                          trace=traceback.format_exc(limit=10)[-3000:])
    try:
        rows = execute(text)
    except Exception as exc:   # noqa: BLE001 - the engine's verdict on cbo's SQL, judged by the caller
        return CboOutcome("engine_error", message=first_line(exc), error_type=type(exc).__name__, sql=text)
    return CboOutcome("rows", rows=rows, sql=text)


class CboRunner:
    """Plans and runs queries over one catalog at a time (``load`` switches), on DuckDB."""

    def __init__(self, dialect: str):
        self.dialect = dialect
        self._planner: Any = None
        self._engine: Any = None

    def load(self, catalog_path: str) -> None:
        from cbo.engines.duckdb_engine import DuckDBEngine
        from cbo.planner import Planner
        from cbo.sources.catalog import load_catalog

        if self._engine is not None:
            self._engine.close()
        catalog = load_catalog(Path(catalog_path))
        self._planner = Planner(catalog, self.dialect)
        self._engine = DuckDBEngine(catalog, threads=1)

    def run(self, sql: str) -> CboOutcome:
        assert self._planner is not None, "load a catalog first"
        return through_cbo(self._planner, lambda text: self._engine.connection.execute(text).fetchall(), sql)


def warm_up(dialect: str) -> None:
    """Plan, write and run TPC-H's 22 queries over empty tables once: a new process imports and
    builds what planning needs on its first queries (seconds), which must not count against
    the first real query's deadline."""
    import tempfile

    import duckdb

    from benchmarks.equivalence.schemas import tpch
    from cbo.planner import Planner
    from cbo.sources.catalog import load_catalog
    from cbo.workloads.tpch_queries import all_queries

    schema = tpch()
    with tempfile.TemporaryDirectory(prefix="cbo-warm-up-") as directory:
        planner = Planner(load_catalog(schema.write(Path(directory))), dialect)
        connection = duckdb.connect(config={"threads": 1})
        for table in schema.tables:
            connection.execute(f"create view {table.name} as select * from '{directory}/{table.name}.parquet'")
        for query in all_queries():
            through_cbo(planner, lambda text: connection.execute(text).fetchall(), query.sql)
        connection.close()


def make_runner(dialect: str) -> CboRunner:
    warm_up(dialect)
    return CboRunner(dialect)
