"""The 22 TPC-H queries at SF 0.01 give DuckDB's answers everywhere they run.

* natively: Spark SQL (its own planner) and PostgreSQL, on their own copies;
* through cbo's plan on Spark (DataFrames) in all three placements: Parquet read directly,
  PostgreSQL tables through Spark's JDBC source with filters and projections folded in;
* through cbo's plan rendered as SQL: in PostgreSQL's dialect run by PostgreSQL, and in Spark's
  dialect run by Spark SQL (round trips of plan-to-SQL).

Numbers are compared within a tolerance; row order only where the query has an ORDER BY.
"""

from __future__ import annotations

import pytest

from benchmarks.tpch.queries import all_queries
from cbo.answers import compare, is_ordered
from cbo.connectors import POSTGRES
from cbo.sources.catalog import load_catalog
from cbo.physical.algorithm import Algorithm
from cbo.engines.native import DuckDBNative, PostgresNative
from cbo.engines.spark import register_catalog, run_sql
from cbo.planner import Planner
from cbo.app.session import Session
from cbo.sqlgen import to_sql

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


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_spark_sql_matches_duckdb(query, spark_placements, duckdb_answers):
    placement = "all-spark"
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


@pytest.fixture(scope="module")
def cbo_sessions(spark, tpch_catalogs):
    return {p: Session(load_catalog(tpch_catalogs[p]), engine="spark") for p in tpch_catalogs}


@pytest.mark.parametrize("placement", ["all-spark", "federated", "all-postgres"])
@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_cbo_on_spark_matches_duckdb(placement, query, cbo_sessions, duckdb_answers):
    _, rows = cbo_sessions[placement].query(query.sql)
    verdict = compare(duckdb_answers[query.name], rows, ordered=is_ordered(query.sql))
    assert verdict.matches, f"{query.name} through cbo on Spark/{placement}: {verdict.detail}"


@pytest.mark.parametrize("placement", ["all-spark", "federated", "all-postgres"])
@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_cbo_on_duckdb_matches_duckdb(placement, query, tpch_catalogs, duckdb_answers):
    # DuckDB reads the Parquet copies of PostgreSQL's tables, whatever the placement.
    _, rows = Session(load_catalog(tpch_catalogs[placement]), engine="duckdb").query(query.sql)
    verdict = compare(duckdb_answers[query.name], rows, ordered=is_ordered(query.sql))
    assert verdict.matches, f"{query.name} through cbo on DuckDB/{placement}: {verdict.detail}"


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_cbo_plan_as_postgres_sql_matches_duckdb(query, postgres_engine, duckdb_answers, tpch_catalogs):
    planned = Planner(load_catalog(tpch_catalogs["all-postgres"])).plan(query.sql)
    _, rows, _ = postgres_engine.run(to_sql(planned.plan, planned.names, POSTGRES.sql))
    verdict = compare(duckdb_answers[query.name], rows, ordered=is_ordered(query.sql))
    assert verdict.matches, f"{query.name} as PostgreSQL SQL: {verdict.detail}"


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_cbo_plan_as_spark_sql_matches_duckdb(query, spark_placements, duckdb_answers, tpch_catalogs):
    session = spark_placements("all-spark")
    planned = Planner(load_catalog(tpch_catalogs["all-spark"])).plan(query.sql)
    _, rows, _ = run_sql(session, to_sql(planned.plan, planned.names, "spark"))
    verdict = compare(duckdb_answers[query.name], rows, ordered=is_ordered(query.sql))
    assert verdict.matches, f"{query.name} as Spark SQL: {verdict.detail}"


@pytest.fixture(scope="module")
def sf1_estimator():
    """TPC-H SF 1 statistics (tests/testdata): the memo chooses the join orders and build sides
    it would choose at SF 1, and those plans run here on the SF 0.01 data."""
    from cbo.estimate import Estimator
    from stats.store import StatsStore
    from tests.plan_files import TPCH_STATS

    store = StatsStore(TPCH_STATS)
    return Estimator({t: store.load(t).stats for t in store.tables()})


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_memo_plan_at_sf1_statistics_runs_on_spark_and_matches_duckdb(query, spark, sf1_estimator,
                                                                        duckdb_answers, tpch_catalogs):
    catalog = load_catalog(tpch_catalogs["all-spark"])
    planned = Planner(catalog, estimator=sf1_estimator).plan(query.sql)
    assert planned.optimized is not None and planned.optimized.counters.rule_applications >= 0
    _, rows = Session(catalog).run(planned)
    verdict = compare(duckdb_answers[query.name], rows, ordered=is_ordered(query.sql))
    assert verdict.matches, f"{query.name} through the memo's plan at SF 1 statistics on Spark: {verdict.detail}"


SPARK_JOINS = {Algorithm.BROADCAST_HASH_JOIN: "BroadcastHashJoin", Algorithm.SHUFFLED_HASH_JOIN: "ShuffledHashJoin",
               Algorithm.SORT_MERGE_JOIN: "SortMergeJoin", Algorithm.BROADCAST_NESTED_LOOP_JOIN: "BroadcastNestedLoopJoin"}


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_spark_runs_the_chosen_physical_plan(query, spark, sf1_estimator, tpch_catalogs):
    """Spark's executed plan has exactly cbo's join operators (strategy per join) and the
    partition count cbo chose; where Spark reuses an identical exchange (Q11, Q15), the reused
    subtree's joins are not printed again."""
    import re
    from collections import Counter

    from cbo.ir.operators import Join

    catalog = load_catalog(tpch_catalogs["all-spark"])
    session = Session(catalog)
    planned = Planner(catalog, estimator=sf1_estimator).plan(query.sql)
    text = session._spark(planned).physical_plan(planned.plan, planned.names)
    # A join run as a scalar subquery is no join in Spark's plan (a filter reading the value).
    ours = Counter(SPARK_JOINS[n.algorithm] for n in planned.physical.operators()
                   if isinstance(n.logical, Join) and n.algorithm is not Algorithm.SCALAR_SUBQUERY)
    theirs = Counter(re.findall(r"\b(BroadcastHashJoin|ShuffledHashJoin|SortMergeJoin|BroadcastNestedLoopJoin|"
                                r"CartesianProduct)\b", text))
    if "ReusedExchange" in text:
        assert theirs <= ours, f"{query.name}: Spark ran {dict(theirs)}, cbo chose {dict(ours)}"
    else:
        assert theirs == ours, f"{query.name}: Spark ran {dict(theirs)}, cbo chose {dict(ours)}"
    # Adaptive execution as ``spark_adaptive`` says (its final plans: test_spark_adaptive.py).
    assert ("AdaptiveSparkPlan" in text) == bool(session.settings.spark_adaptive)
    partitions = set(re.findall(r"hashpartitioning\([^)]*\), (\d+)\)", text))
    assert partitions <= {str(planned.partitions)}
