"""Large queries run on Spark through cbo as they do on DuckDB: Spark's own SQL parser recurses
per level of nesting, so cbo gives its JVM threads a large stack (``cbo.engines.spark``)."""

from __future__ import annotations

import pytest

from cbo.answers import compare
from cbo.app.session import Session
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.sources.catalog import load_catalog
from tests import deep_queries as deep


@pytest.fixture(scope="module")
def engines(spark, tpch_parquet_catalog):
    catalog = load_catalog(tpch_parquet_catalog)
    duckdb = DuckDBEngine(catalog)
    yield Session(catalog), duckdb
    duckdb.close()


# (AND chains render as OR chains do: the OR chain stands for both, a minute of Spark's time saved)
@pytest.mark.parametrize("kind", [kind for kind in deep.SIZES if kind != "and_chain"])
def test_large_queries_run_on_spark(engines, kind):
    session, duckdb = engines
    sql = deep.BUILDERS[kind](deep.SIZES[kind])
    _, rows = session.query(sql)
    _, expected, _ = duckdb.run(sql)
    verdict = compare(expected, rows, ordered=False)
    assert verdict.matches, verdict.detail
