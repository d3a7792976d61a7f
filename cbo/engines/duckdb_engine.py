"""DuckDB as the reference engine: it answers over the Parquet copies of the catalog's tables."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import duckdb
from sqlglot import exp

from cbo.catalog_types import Catalog, TableDef
from cbo.errors import CboError
from cbo.limits import MAX_EXPRESSION_DEPTH


def _scan(table: TableDef) -> exp.Expr | None:
    """A DuckDB table function reading the table's files, or None if it has no local copy."""
    path: Path | None = table.path if table.path is not None else table.parquet_copy
    if path is None:
        return None
    fmt = table.format if table.path is not None else "parquet"
    target = str(path / "**" / f"*.{fmt}") if path.is_dir() else str(path)
    reader = {"parquet": "read_parquet", "csv": "read_csv_auto"}.get(fmt)
    if reader is None:
        raise CboError(f"table '{table.qualified_name}': DuckDB cannot read format {fmt!r}")
    return exp.Anonymous(this=reader, expressions=[exp.Literal.string(target)])


def quiet_progress(connection: Any) -> None:
    """No progress bar: on a terminal DuckDB draws it on stdout for a query past two seconds,
    into the answers and tables a command prints. Inside Jupyter DuckDB refuses the setting
    (its notebook progress bar needs ipywidgets, which cbo does not install) and draws none."""
    try:
        connection.execute("set enable_progress_bar = false")
    except duckdb.Error:
        pass


class DuckDBEngine:
    """An in-memory DuckDB database with one view per catalog table that has local files."""

    def __init__(self, catalog: Catalog, threads: int | None = None):
        self.connection = duckdb.connect()
        quiet_progress(self.connection)
        # cbo's SQL nests an operator's expression in parentheses per level: room for queries
        # at cbo's own limits (cbo.limits), past DuckDB's default of 1,000.
        self.connection.execute(f"set max_expression_depth = {MAX_EXPRESSION_DEPTH * 4}")
        if threads:
            self.connection.execute(f"set threads = {int(threads)}")
        self.missing: list[str] = []
        for table in catalog.tables():
            scan = _scan(table)
            if scan is None:
                self.missing.append(table.qualified_name)
                continue
            if table.path is not None and not table.path.exists():
                raise CboError(f"table '{table.qualified_name}': {table.path} does not exist")
            view = exp.Create(this=exp.Table(this=exp.to_identifier(table.name, quoted=True)), kind="VIEW",
                              replace=True, expression=exp.select("*").from_(scan))
            self.connection.execute(view.sql(dialect="duckdb"))

    def run(self, text: str) -> tuple[list[str], list[tuple[Any, ...]], float]:
        started = time.perf_counter()
        try:
            result = self.connection.execute(text)
        except duckdb.CatalogException as exc:
            hint = f" (tables without a Parquet copy: {', '.join(self.missing)})" if self.missing else ""
            raise CboError(f"DuckDB: {str(exc).splitlines()[0]}{hint}") from None
        rows = result.fetchall()
        names = [d[0] for d in result.description or []]
        return names, rows, time.perf_counter() - started

    def close(self) -> None:
        self.connection.close()
