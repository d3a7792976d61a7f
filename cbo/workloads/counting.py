"""Counting a query's rows in DuckDB within a time limit.

The STATS generators (``stats_queries``, ``stats_queries2``) keep only queries whose answer is
not empty and that DuckDB counts in time, and the cardinality harness takes its true counts the
same way. Tables are loaded as DuckDB tables (not views over the files), so DuckDB keeps its
own statistics of them as it would of its own data.
"""

from __future__ import annotations

import threading
from pathlib import Path

import duckdb


class TimedOut(Exception):
    """DuckDB did not count the query within its time limit."""


def load_tables(connection: duckdb.DuckDBPyConnection, paths: dict[str, Path]) -> None:
    for name, path in paths.items():
        target = str(path / "**" / "*.parquet") if path.is_dir() else str(path)
        connection.execute(f'create or replace table "{name}" as select * from read_parquet(?)', [target])


def count(connection: duckdb.DuckDBPyConnection, sql: str, seconds: float) -> int:
    """COUNT(*) of ``sql``, or TimedOut after ``seconds``."""
    timer = threading.Timer(seconds, connection.interrupt)
    timer.start()
    try:
        row = connection.execute(f"select count(*) from ({sql}) as counted").fetchone()
        assert row is not None   # (a count has one row)
        (value,) = row
    except duckdb.InterruptException:
        raise TimedOut(sql) from None
    finally:
        timer.cancel()
    return int(value)
