"""DuckDB as the source of true cardinalities (and of its own estimates), with a time limit."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import duckdb


class TimedOut(Exception):
    pass


def load_tables(connection: duckdb.DuckDBPyConnection, paths: dict[str, Path]) -> None:
    """Tables (not views) so DuckDB keeps its own statistics, as it would for its own data."""
    for name, path in paths.items():
        target = str(path / "**" / "*.parquet") if path.is_dir() else str(path)
        connection.execute(f'create or replace table "{name}" as select * from read_parquet(?)', [target])


def count(connection: duckdb.DuckDBPyConnection, sql: str, seconds: float) -> int:
    """COUNT(*) of ``sql``, or TimedOut after ``seconds``."""
    timer = threading.Timer(seconds, connection.interrupt)
    timer.start()
    try:
        (value,) = connection.execute(f"select count(*) from ({sql}) as counted").fetchone()  # type: ignore[misc]
    except duckdb.InterruptException:
        raise TimedOut(sql) from None
    finally:
        timer.cancel()
    return int(value)


def estimate(connection: duckdb.DuckDBPyConnection, sql: str) -> float | None:
    """DuckDB's estimated cardinality of the query's result (its EXPLAIN), or None."""
    rows = connection.execute(f"explain (format json) {sql}").fetchall()
    plan = json.loads(rows[0][1])
    node = plan[0] if isinstance(plan, list) else plan
    while node is not None:
        value = node.get("extra_info", {}).get("Estimated Cardinality")
        if value is not None:
            return float(value)
        children = node.get("children") or []
        node = children[0] if len(children) == 1 else None
    return None
