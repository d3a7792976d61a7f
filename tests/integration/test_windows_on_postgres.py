"""Window functions rendered for PostgreSQL, run on the real server, against DuckDB.

The cases of ``tests/quick/test_windows.py`` (NULL partitions and order keys, peers in RANGE
frames, empty frames, lag/lead defaults, windows over aggregates, QUALIFY, per-partition top-k)
are planned by cbo from DuckDB's dialect and the plan is rendered as PostgreSQL SQL (the SQL
cbo builds for a JDBC source, from sqlglot's AST), then run on cbo's throwaway PostgreSQL of
the test cache. Each answer must equal DuckDB's on the original text. PostgreSQL sorts NULLs
last in ascending order as DuckDB does; cbo spells out every key's NULL order anyway.
"""

from __future__ import annotations

import pytest

from cbo.answers import compare, is_ordered
from cbo.connectors import by_dialect
from cbo.connectors.postgres import client as pg
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog
from cbo.connectors.postgres.server import LocalPostgres
from cbo.sqlgen import to_sql
from tests.conftest import TEST_CACHE
from tests.quick.test_windows import CASES, DATA


@pytest.fixture(scope="module")
def engines(tpch_catalogs, tpch_parquet_catalog):
    # (tpch_catalogs starts the test cache's PostgreSQL and stops it at the session's end)
    catalog = load_catalog(tpch_parquet_catalog)
    info = LocalPostgres(TEST_CACHE / "postgres").start()
    reference = DuckDBEngine(catalog)
    yield Planner(catalog, "duckdb"), pg.parse_url(info.jdbc_url, info.user, info.password()), reference
    reference.close()


@pytest.mark.parametrize("name", list(CASES))
def test_window_functions_rendered_for_postgres_answer_as_duckdb_does(engines, name):
    planner, address, reference = engines
    sql = DATA + CASES[name]
    planned = planner.plan(sql)
    text = to_sql(planned.plan, planned.names, dialect=by_dialect("postgres").sql)
    _, expected, _ = reference.run(sql)
    with pg.connect(address) as conn:
        rows = [tuple(r) for r in conn.execute(text).fetchall()]
    verdict = compare(expected, rows, ordered=is_ordered(sql, "duckdb"))
    assert verdict.matches, f"{name}: {verdict.detail}\n{text}"
