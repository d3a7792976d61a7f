"""The 22 TPC-H queries at SF 0.01 give DuckDB's answers on Spark (three placements) and PostgreSQL.

Spark reads Parquet directly and PostgreSQL tables through its JDBC source; PostgreSQL runs the
all-postgres placement natively. Numbers are compared within a tolerance; row order only where
the query has an ORDER BY.
"""

from __future__ import annotations

import pytest

from benchmarks.tpch.queries import all_queries
from cbo.answers import compare, is_ordered
from cbo.catalog import load_catalog
from cbo.engines.native import DuckDBNative, PostgresNative
from cbo.engines.spark import register_catalog, run_sql

QUERIES = all_queries()


@pytest.fixture(scope="module")
def duckdb_answers(tpch_catalogs):
    engine = DuckDBNative(load_catalog(tpch_catalogs["all-spark"]))
    answers = {q.name: engine.run(q.sql)[1] for q in QUERIES}
    engine.close()
    return answers


@pytest.fixture(scope="module")
def spark_placements(spark, tpch_catalogs):
    """Registers a placement's tables as Spark views, re-registering only when it changes."""
    current: dict[str, str] = {}

    def use(placement: str):
        if current.get("placement") != placement:
            register_catalog(spark, load_catalog(tpch_catalogs[placement]))
            current["placement"] = placement
        return spark

    return use


def test_duckdb_answers_are_not_empty(duckdb_answers):
    # Guards the comparisons below against a reference that answers nothing.
    assert sum(1 for rows in duckdb_answers.values() if rows) == 22
    assert duckdb_answers["q01"][0][0] == "A"


@pytest.mark.parametrize("placement", ["all-spark", "federated", "all-postgres"])
@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_spark_matches_duckdb(placement, query, spark_placements, duckdb_answers):
    session = spark_placements(placement)
    _, rows, _ = run_sql(session, query.sql)
    verdict = compare(duckdb_answers[query.name], rows, ordered=is_ordered(query.sql))
    assert verdict.matches, f"{query.name} on Spark/{placement}: {verdict.detail}"


@pytest.fixture(scope="module")
def postgres_engine(tpch_catalogs):
    engine = PostgresNative(load_catalog(tpch_catalogs["all-postgres"]), timeout_s=120)
    yield engine
    engine.close()


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_postgres_matches_duckdb(query, postgres_engine, duckdb_answers):
    _, rows, _ = postgres_engine.run(query.sql)
    verdict = compare(duckdb_answers[query.name], rows, ordered=is_ordered(query.sql))
    assert verdict.matches, f"{query.name} on PostgreSQL: {verdict.detail}"
