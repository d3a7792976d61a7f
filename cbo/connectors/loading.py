"""What loading Parquet into a database looks like for every connector: column kinds, batches.

Each connector's loader (``cbo.connectors.postgres.loader``, ``cbo.connectors.mariadb.loader``,
``cbo.connectors.sqlite``) names these kinds in its database's words and writes the batches
its own way, all or nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
from sqlglot import exp


def arrow_kind(arrow_type: pa.DataType) -> str | None:
    """The kind of SQL column that holds an Arrow type's values exactly, for every loader to name
    in its database's words: ``int32`` (integers of at most 32 bits), ``int64``, ``decimal``,
    ``double``, ``boolean``, ``date``, ``timestamp``, ``timestamptz`` or ``string``; None for a
    type no loader holds."""
    if pa.types.is_int64(arrow_type):
        return "int64"
    if pa.types.is_integer(arrow_type):
        return "int32" if arrow_type.bit_width <= 32 else "int64"
    if pa.types.is_decimal(arrow_type):
        return "decimal"
    if pa.types.is_floating(arrow_type):
        return "double"
    if pa.types.is_boolean(arrow_type):
        return "boolean"
    if pa.types.is_date(arrow_type):
        return "date"
    if pa.types.is_timestamp(arrow_type):
        return "timestamptz" if arrow_type.tz else "timestamp"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or pa.types.is_string_view(arrow_type):
        return "string"
    return None


def quiet_duckdb() -> duckdb.DuckDBPyConnection:
    """A DuckDB connection that draws no progress bar: the loaders report progress themselves.

    A connection's own setting, not a config at connect: an in-memory database opened earlier in
    the process makes DuckDB refuse a different global configuration ("Could not set option ...
    as a global option")."""
    duck = duckdb.connect()
    try:
        duck.execute("SET enable_progress_bar = false")
    except duckdb.InvalidInputException:
        # Inside a Jupyter kernel without ipywidgets, DuckDB refuses to change the setting at
        # all, even to turn the bar off; it then draws no bar either, which is what we want.
        pass
    return duck


def parquet_batches(path: Path, rows: int) -> Iterator[pa.RecordBatch]:
    """The rows of a Parquet file or directory as Arrow batches of at most ``rows`` rows (DuckDB
    reads Parquet in parallel and hands batches with plain strings)."""
    duck = quiet_duckdb()
    scan = exp.select("*").from_(exp.Anonymous(this="read_parquet", expressions=[exp.Literal.string(str(path))]))
    relation = duck.sql(scan.sql(dialect="duckdb"))
    # DuckDB 2 names it to_arrow_reader; 1.x fetch_arrow_reader.
    to_reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
    yield from to_reader(rows)
