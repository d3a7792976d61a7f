"""The two shipped cardinality plug-ins against real parts: PostgreSQL's EXPLAIN estimates from
the test cache's local server (TPC-H SF 0.01, ``tpch_catalogs``), and the sampling estimator over
row samples Spark collected (``cbo analyze`` of the Parquet catalog)."""

from __future__ import annotations

import json

import pytest

from benchmarks.tpch.queries import all_queries
from cbo.plugins.postgres import PostgresEstimates
from cbo.errors import CboError
from cbo.plugins.samples import SampleEstimates
from cbo.estimate.subplan import OperatorClass
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog
from cbo.sources.statistics import analyze, load_all

QUERIES = {q.name: q.sql for q in all_queries()}


@pytest.fixture(scope="module")
def spark_stats(spark, tpch_catalogs):  # type: ignore[no-untyped-def]
    catalog = load_catalog(tpch_catalogs["all-spark"])
    analyze(catalog)   # fresh statistics are kept; others collected, with row samples
    stats, problems = load_all(catalog)
    assert not problems
    return catalog, stats


def test_postgres_estimates_are_postgres_own(tpch_catalogs, spark_stats):
    from cbo.connectors.postgres import client as postgres
    from cbo.estimate import Estimator

    catalog, stats = spark_stats
    plugin = PostgresEstimates(tpch_catalogs["all-postgres"])
    try:
        planner = Planner(catalog, estimator=plugin, statistics=Estimator(stats))
        planned = planner.plan(QUERIES["q05"])
        coverage = planned.coverage
        assert coverage.injected == len(coverage.answers) > 20 and not plugin.failures
        # one answer checked against the server directly: the filtered orders
        answer = next(a for a in coverage.answers.values() if a.subplan.operator is OperatorClass.FILTER
                      and a.subplan.tables == (("orders", "lake.orders"),))
        source = load_catalog(tpch_catalogs["all-postgres"]).jdbc_sources()[0]
        connection = postgres.connect(postgres.address_of(source))
        schema = f'"{source.schema}".' if source.schema else ""
        (document,) = connection.execute(
            f"EXPLAIN (FORMAT JSON) SELECT * FROM {schema}\"orders\" WHERE o_orderdate >= DATE '1994-01-01' "
            "AND o_orderdate < DATE '1995-01-01'").fetchone()
        connection.close()
        document = json.loads(document) if isinstance(document, str) else document
        assert answer.rows == document[0]["Plan"]["Plan Rows"]
        # the plug-in answered; the plan is cbo's, and P-error is defined against the oracle
        found = planner.p_error(QUERIES["q05"])
        assert found.p_error >= 1.0 - 1e-9 and found.optimal_cost > 0
    finally:
        plugin.close()


def test_postgres_estimates_need_a_postgres_source(spark_stats):
    catalog, _ = spark_stats
    with pytest.raises(CboError, match="no JDBC source"):
        PostgresEstimates(catalog)


def test_sample_estimates_scale_counts_on_the_samples(spark_stats):
    from cbo.estimate import Estimator

    catalog, stats = spark_stats
    plugin = SampleEstimates(stats)
    try:
        planned = Planner(catalog, estimator=plugin, statistics=Estimator(stats)).plan(QUERIES["q03"])
        coverage = planned.coverage
        assert coverage.injected > 0
        for answer in coverage.answers.values():
            if answer.subplan.operator not in plugin.answers:
                assert answer.source == "cbo"
        # at SF 0.01 every table but lineitem fits its sample: a filter on one is counted exactly
        truth = Planner(catalog, statistics=Estimator(stats)).oracle()
        for answer in coverage.answers.values():
            if answer.source == "samples" and answer.subplan.tables == (("customer", "lake.customer"),):
                assert answer.rows == truth.true_rows(answer.subplan.plan)
                break
        else:
            raise AssertionError("no customer sub-plan answered from the samples")
    finally:
        plugin.close()


def test_sample_estimates_answer_the_reads_of_a_cte_computed_once(spark_stats):
    # q15's revenue0, computed once, is read twice: a join of supplier with one read is a
    # sub-plan the samples answer, its SQL inlining the CTE (no WITH of the statement's)
    from cbo.estimate import Estimator
    from cbo.settings import OptimizerSettings

    catalog, stats = spark_stats
    plugin = SampleEstimates(stats)
    try:
        planned = Planner(catalog, estimator=plugin, statistics=Estimator(stats),
                          settings=OptimizerSettings(cte_strategy="SHARE")).plan(QUERIES["q15"])
        reads = [a for a in planned.coverage.answers.values() if "revenue0_1" in str(a.subplan.description)]
        assert reads, "no sub-plan reads the CTE"
        answered = [a for a in reads if a.source == "samples"]
        assert answered, "the samples answered no sub-plan that reads the CTE"
        assert all(a.rows >= 0 for a in answered)
    finally:
        plugin.close()
