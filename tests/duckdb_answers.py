"""One comparison for tests that render a planned query another way (flat joins, shared CTEs):
the other rendering must answer on DuckDB as cbo's own rendering of the plan does, compared
as multisets by ``cbo.answers`` (the comparison every engine's answers go through)."""

from __future__ import annotations

from pathlib import Path

from cbo.answers import compare
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.planner import PlannedQuery
from cbo.sources.catalog import load_catalog
from cbo.sqlgen import to_sql


def assert_answers_as_planned(catalog: Path, planned: PlannedQuery, sql: str) -> None:
    """``sql`` answers on DuckDB, over ``catalog``'s tables, as ``planned`` rendered by
    ``to_sql``, and the answer is not empty (an empty answer would prove little)."""
    engine = DuckDBEngine(load_catalog(catalog))
    try:
        _, expected, _ = engine.run(to_sql(planned.plan, planned.names, "duckdb"))
        _, rows, _ = engine.run(sql)
    finally:
        engine.close()
    assert expected, "the planned query answers no row"
    verdict = compare(expected, rows, ordered=False)
    assert verdict.matches, verdict.detail
