"""Window functions through cbo's plan on Spark, against DuckDB on the original SQL.

The cases of ``tests/quick/test_windows.py`` (NULL partitions and order keys, peers in RANGE
frames, empty frames, lag/lead defaults, windows over aggregates, QUALIFY) run on Spark with
ANSI mode on. Spark sorts NULLs first in ascending order where DuckDB sorts them last: cbo
spells out each order key's NULL order, so the DuckDB-dialect queries answer alike.
"""

from __future__ import annotations

import pytest

from cbo.answers import compare, is_ordered
from cbo.app.session import Session
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.sources.catalog import load_catalog
from tests.quick.test_windows import CASES, DATA


@pytest.fixture(scope="module")
def engines(spark, tpch_parquet_catalog):
    catalog = load_catalog(tpch_parquet_catalog)
    reference = DuckDBEngine(catalog)
    yield Session(catalog, engine="spark", dialect="duckdb"), reference
    reference.close()


@pytest.mark.parametrize("name", list(CASES))
def test_window_functions_on_spark_answer_as_duckdb_does(engines, name):
    session, reference = engines
    sql = DATA + CASES[name]
    _, expected, _ = reference.run(sql)
    _, rows = session.query(sql)
    verdict = compare(expected, rows, ordered=is_ordered(sql, "duckdb"))
    assert verdict.matches, f"{name}: {verdict.detail}\n{sql}"
