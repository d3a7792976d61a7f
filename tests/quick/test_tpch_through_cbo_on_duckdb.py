"""Every TPC-H query through cbo's plan, rendered as SQL, gives DuckDB's answer on DuckDB."""

from __future__ import annotations

import pytest

from benchmarks.tpch.queries import all_queries
from cbo.answers import compare, is_ordered
from cbo.sources.catalog import load_catalog
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.app.session import Session


@pytest.fixture(scope="module")
def engines(tpch_parquet_catalog):
    catalog = load_catalog(tpch_parquet_catalog)
    return Session(catalog, engine="duckdb"), DuckDBEngine(catalog)


@pytest.mark.parametrize("query", all_queries(), ids=lambda q: q.name)
def test_cbo_plan_on_duckdb_matches(engines, query):
    session, duckdb = engines
    _, rows = session.query(query.sql)
    _, expected, _ = duckdb.run(query.sql)
    verdict = compare(expected, rows, ordered=is_ordered(query.sql))
    assert verdict.matches, f"{query.name}: {verdict.detail}"
