"""DuckDB as the source of true cardinalities (and of its own estimates), with a time limit.

Counting lives with the workloads (``cbo.workloads.counting``: the STATS generators count too);
DuckDB's own estimate is the harness's.
"""

from __future__ import annotations

import json

import duckdb

from cbo.workloads.counting import TimedOut, count, load_tables

__all__ = ["TimedOut", "count", "estimate", "load_tables"]


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
