"""cbo writes Spark statements with ``SparkStatements``, sqlglot's Spark dialect less its
ANY-to-EXISTS rewrite (quadratic over nested derived tables). The text must be what sqlglot's
own Spark dialect writes, for every plan cbo renders: here the 99 TPC-DS plans at SF 1
statistics (no engine)."""

from __future__ import annotations

from sqlglot import exp

from cbo.estimate import Estimator
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog
from cbo.sqlgen import SPARK, SparkStatements, SqlRenderer
from cbo.workloads.tpcds_queries import DIALECT as TPCDS_DIALECT
from stats.store import StatsStore
from tests.plan_files import TPCDS_PLANS, TPCDS_STATS, read_cases


def test_spark_statements_are_sqlglots_spark_text(tpcds_parquet_catalog):
    store = StatsStore(TPCDS_STATS)
    estimator = Estimator({table: store.load(table).stats for table in store.tables()})
    planner = Planner(load_catalog(tpcds_parquet_catalog), TPCDS_DIALECT, estimator=estimator)
    assert SPARK.sqlglot is SparkStatements
    compared = 0
    for case in read_cases(TPCDS_PLANS):
        planned = planner.plan(case.sql)
        ast = SqlRenderer(SPARK).statement_ast(planned.plan, planned.names)
        assert ast.sql(dialect=SparkStatements) == ast.sql(dialect="spark"), case.name
        compared += 1
    assert compared == 99


def test_the_rewrite_left_out_is_one_cbo_never_needs():
    # What sqlglot's Spark dialect does and SparkStatements does not: ANY over an array becomes
    # EXISTS with a lambda. cbo's renderer never builds exp.Any.
    above_any = exp.GT(this=exp.Literal.number(5), expression=exp.Any(this=exp.column("a")))
    query = exp.select("1").from_("t").where(above_any)
    assert "EXISTS" in query.sql(dialect="spark")
    assert "ANY" in query.sql(dialect=SparkStatements)
