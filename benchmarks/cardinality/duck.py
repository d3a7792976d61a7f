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
    """DuckDB's estimated cardinality of the query's result (its EXPLAIN), or None.

    The top operator's estimate, looked for down a chain of single children. Two operators
    carry none of their own: ``EMPTY_RESULT``, where DuckDB's optimizer proved from its
    statistics that no row comes out (an estimate of 0), and ``UNION`` (ALL), whose rows are
    its inputs' together (the sum of their estimates)."""
    rows = connection.execute(f"explain (format json) {sql}").fetchall()
    plan = json.loads(rows[0][1])
    return _rows(plan[0] if isinstance(plan, list) else plan)


def _rows(node: dict | None) -> float | None:
    while node is not None:
        value = node.get("extra_info", {}).get("Estimated Cardinality")
        if value is not None:
            return float(value)
        children = node.get("children") or []
        if node.get("name") == "EMPTY_RESULT":
            return 0.0
        if node.get("name") == "UNION" and children:
            parts = [_rows(child) for child in children]
            return None if any(p is None for p in parts) else sum(p for p in parts if p is not None)
        node = children[0] if len(children) == 1 else None
    return None
