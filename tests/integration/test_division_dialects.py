"""Division follows the query's dialect on every engine (``cbo.frontend.division``).

Each query runs through cbo's plan on Spark and on DuckDB in each dialect: the two answers must
agree (or both engines raise "division by zero"). In PostgreSQL's dialect the answer must also be
PostgreSQL's own, run on the server holding the same TPC-H tables.
"""

from __future__ import annotations

import pytest

from cbo.answers import compare
from cbo.app.session import Session
from cbo.engines.native import PostgresNative
from cbo.errors import CboError
from cbo.sources.catalog import load_catalog

QUERIES = [
    "select n_nationkey, n_nationkey / 7, -n_nationkey / 7, n_nationkey % 7, 30 / 63 - 82 from nation",
    "select n_nationkey, 1.5 / (n_nationkey + 1), n_acctbal_like / 4 from "
    "(select n_nationkey, cast(n_nationkey as decimal(10, 2)) as n_acctbal_like from nation) t",
    "select n_nationkey, cast(n_nationkey as {double}) / (n_regionkey - 2) from nation",
    "select n_nationkey, cast(n_nationkey as {double}) % (n_regionkey - 2) from nation",
    "select n_nationkey, n_nationkey / (n_nationkey - 3) from nation",
    "select n_nationkey, 1.5 / (n_regionkey - 2) from nation",
]
DIALECTS = ("trino", "postgres", "spark", "duckdb")


def spelled(sql: str, dialect: str) -> str:
    """The query in the dialect's own words (PostgreSQL has no type named double)."""
    return sql.format(double="double precision" if dialect == "postgres" else "double")


@pytest.fixture(scope="module")
def sessions(spark, tpch_catalogs):
    catalog = load_catalog(tpch_catalogs["all-spark"])
    return {(engine, dialect): Session(catalog, engine=engine, dialect=dialect)
            for engine in ("spark", "duckdb") for dialect in DIALECTS}


def answer(session: Session, sql: str) -> list[tuple] | str:
    """The rows, or which error: "division by zero", or "refused" (no such operator in the
    dialect: PostgreSQL's % of doubles)."""
    try:
        return session.query(sql)[1]
    except CboError as exc:
        if "no % for double precision" in str(exc):
            return "refused"
        assert "by zero" in str(exc).lower(), exc   # Spark's % says "remainder by zero"
        return "division by zero"


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("sql", QUERIES)
def test_spark_and_duckdb_agree_in_the_query_dialect(sessions, sql, dialect):
    on_spark = answer(sessions["spark", dialect], spelled(sql, dialect))
    on_duckdb = answer(sessions["duckdb", dialect], spelled(sql, dialect))
    if isinstance(on_spark, str) or isinstance(on_duckdb, str):
        assert on_spark == on_duckdb, (on_spark, on_duckdb)
        return
    verdict = compare(on_duckdb, on_spark, ordered=False)
    assert verdict.matches, verdict.detail


def test_the_dialects_differ_where_they_should(sessions):
    integer = {d: answer(sessions["spark", d], spelled(QUERIES[0], d)) for d in DIALECTS}
    assert {row[4] for row in integer["trino"]} == {-82}
    assert {row[4] for row in integer["spark"]} == {30 / 63 - 82}
    doubles = {d: answer(sessions["spark", d], spelled(QUERIES[2], d)) for d in DIALECTS}
    assert doubles["postgres"] == doubles["spark"] == "division by zero"
    assert any(row[1] == float("inf") for row in doubles["trino"])
    assert answer(sessions["spark", "postgres"], spelled(QUERIES[3], "postgres")) == "refused"
    assert answer(sessions["spark", "duckdb"], QUERIES[4]) != "division by zero"


@pytest.fixture(scope="module")
def postgres(tpch_catalogs):
    engine = PostgresNative(load_catalog(tpch_catalogs["all-postgres"]), timeout_s=60)
    yield engine
    engine.close()


@pytest.mark.parametrize("sql", QUERIES)
def test_postgres_dialect_is_postgresql(sessions, postgres, sql):
    sql = spelled(sql, "postgres")
    try:
        _, theirs, _ = postgres.run(sql)
    except Exception as exc:   # psycopg's DivisionByZero, or UndefinedFunction (no % of doubles)
        with pytest.raises(CboError) as caught:
            sessions["duckdb", "postgres"].query(sql)
        if "division by zero" in str(exc).lower():
            assert "by zero" in str(caught.value).lower()
        else:
            assert "no % for double precision" in str(caught.value), (exc, caught.value)
        return
    ours = answer(sessions["duckdb", "postgres"], sql)
    assert not isinstance(ours, str), ours
    verdict = compare(theirs, ours, ordered=False)
    assert verdict.matches, verdict.detail
