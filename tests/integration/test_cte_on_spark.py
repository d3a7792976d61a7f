"""A CTE computed once runs once on Spark, and answers as DuckDB answers the query as written.

The search's shared form (``CteAnchor``) runs its producer as a persisted DataFrame that each
consumer reads through a view (``cbo.exec.spark_sql``). Spark's executed plan shows it: every
consumer is an ``InMemoryTableScan`` of one and the same cached relation, and the producer's
scan of lineitem, inside that relation's plan, read lineitem's rows once (its metrics).
"""

from __future__ import annotations

import pytest

from cbo.answers import compare
from cbo.app.session import Session
from cbo.engines.native import DuckDBNative
from cbo.exec.spark_exec import SparkExecutor
from cbo.ir.operators import CteAnchor, walk
from cbo.planner import Planner
from cbo.settings import ADAPTIVE_OFF, PRESERVING, OptimizerSettings
from cbo.sources.catalog import load_catalog

Q15 = """
with revenue0 (supplier_no, total_revenue) as (
    select l_suppkey, sum(l_extendedprice * (1 - l_discount)) from lineitem
    where l_shipdate >= date '1996-01-01' and l_shipdate < date '1996-04-01'
    group by l_suppkey)
select s_suppkey, s_name, total_revenue
from supplier, revenue0
where s_suppkey = supplier_no and total_revenue = (select max(total_revenue) from revenue0)
"""
# three reads, one filtered: a CTE that reads another one, both named twice or more
NESTED = """
with per_supp as (select l_suppkey k, count(*) n, sum(l_quantity) q from lineitem group by l_suppkey),
     big as (select k, q from per_supp where n > (select avg(n) from per_supp))
select a.k, a.q, b.q from big a join big b on a.k = b.k + 1 where a.q > 0
"""


def _walk_java(node):  # type: ignore[no-untyped-def]
    """A Spark physical plan's nodes, through adaptive execution's final plan and its stages."""
    kind = node.getClass().getSimpleName()
    if kind == "AdaptiveSparkPlanExec":
        yield from _walk_java(node.executedPlan())
        return
    yield node
    if kind.endswith("QueryStageExec"):
        yield from _walk_java(node.plan())
        return
    children = node.children()
    for i in range(children.size()):
        yield from _walk_java(children.apply(i))


@pytest.fixture(scope="module")
def catalog(tpch_parquet_catalog):
    return load_catalog(tpch_parquet_catalog)


@pytest.mark.parametrize("strategy", ["SHARE", "AUTOMATIC", "INLINE"])
@pytest.mark.parametrize("sql", [Q15, NESTED], ids=["q15", "nested"])
def test_answers_equal_duckdb(spark, catalog, strategy, sql):
    expected = DuckDBNative(catalog).run(sql)[1]
    planned = Planner(catalog, settings=OptimizerSettings(cte_strategy=strategy)).plan(sql)
    shared = any(isinstance(n, CteAnchor) for n in walk(planned.plan))
    if strategy != "AUTOMATIC":   # (cost picks either)
        assert shared == (strategy == "SHARE"), planned.plan
    session = Session(catalog)
    for engine in ("spark", "duckdb"):
        _, rows = session.run(planned, engine)
        verdict = compare(expected, rows, ordered=False)
        assert verdict.matches, f"{engine}, {strategy}: {verdict.detail}\n{planned.plan}"


@pytest.mark.parametrize("adaptive", [ADAPTIVE_OFF, PRESERVING], ids=["aqe-off", "aqe-preserving"])
def test_the_shared_subplan_runs_once(spark, catalog, adaptive):
    planned = Planner(catalog, settings=OptimizerSettings(cte_strategy="SHARE")).plan(Q15)
    assert isinstance(planned.plan, CteAnchor) or any(isinstance(n, CteAnchor) for n in walk(planned.plan))
    executor = SparkExecutor(spark, catalog).for_plan(planned.physical, planned.partitions, adaptive)
    with executor.own_join_order():
        frame = executor.dataframe(planned.plan, planned.names)
        rows = frame.collect()
        executed = frame._jdf.queryExecution().executedPlan()
    try:
        assert len(rows) == 1
        scans = [n for n in _walk_java(executed) if n.nodeName() == "InMemoryTableScan"]
        assert len(scans) == 2, executed.toString()
        # one cached relation behind both reads: one computation of the producer
        builders = {scan.relation().cacheBuilder().hashCode() for scan in scans}
        assert len(builders) == 1
        cached = scans[0].relation().cacheBuilder().cachedPlan()
        files = [n for n in _walk_java(cached) if n.nodeName().startswith("Scan parquet")]
        assert len(files) == 1, cached.toString()
        read = files[0].metrics().apply("numOutputRows").value()
        lineitem = DuckDBNative(catalog).run("select count(*) from lineitem")[1][0][0]
        assert 0 < read <= lineitem   # read once (a second computation would add to the metric)
        # nothing else of the statement reads lineitem
        outside = [n for n in _walk_java(executed) if n.nodeName().startswith("Scan parquet")]
        assert all("lineitem" not in n.toString() for n in outside), executed.toString()
    finally:
        executor.release()


def test_explain_analyze_measures_each_read_of_the_stored_rows(spark, catalog):
    session = Session(catalog, settings={"cte_strategy": "SHARE"})
    text = session.explain(Q15, analyze=True)
    lines = text.splitlines()
    assert lines[0].startswith("- CteAnchor[revenue0") and "actual rows 1)" in lines[0], text
    reads = [i for i, line in enumerate(lines) if "CteConsumer[revenue0" in line]
    assert len(reads) == 2, text
    # a read is Spark's InMemoryTableScan of the stored rows (the one under the join; the other
    # sits below an aggregation Spark wraps in a filter of its own, which the matcher stops at)
    measured = [i for i in reads if "actual rows not measured" not in lines[i]]
    assert measured, text
    for i in measured:
        source = next(line for line in lines[i + 1:] if line.strip().startswith("actual:"))
        assert "InMemoryTableScan" in source, text
