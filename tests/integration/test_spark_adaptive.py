"""cbo's plans under Spark's adaptive execution kept to its plan-preserving parts
(``spark_adaptive=preserving``, ``cbo.exec.spark_adaptive``), on real Spark.

* TPC-H plans chosen at SF 1 statistics (broadcast, shuffled hash and sort-merge joins, anti,
  outer and semi joins) run on the SF 0.01 data, so every runtime size is far below what the
  plan was costed for: the final adaptive plan still has cbo's joins with their strategies, in
  the places they have with adaptive execution off, and EXPLAIN ANALYZE's mapping of Spark's
  metrics onto cbo's plan measures every node it measures with adaptive execution off, with the
  same rows; coalescing did run.
* A NOT IN whose subquery yields a NULL: the broadcast side proves the answer empty, so adaptive
  execution runs fewer Spark jobs and stages than the plan with adaptive execution off, and the
  part responsible is the empty-relation propagation. Jobs are counted, not timed.
"""

from __future__ import annotations

from collections import Counter

import pytest

from benchmarks.spark_adaptive import JobCounter
from cbo.app.session import Session
from cbo.exec.spark_metrics import SparkOp, attribute, read_plan
from cbo.ir.operators import Aggregate, Join, walk
from cbo.physical.algorithm import Algorithm
from cbo.physical.plan import PhysicalPlan
from cbo.planner import Planner
from cbo.settings import ADAPTIVE_OFF, PRESERVING, adaptive_features
from cbo.sources.catalog import load_catalog
from cbo.workloads.tpch_queries import all_queries

SPARK_JOINS = {Algorithm.BROADCAST_HASH_JOIN: "BroadcastHashJoinExec",
               Algorithm.SHUFFLED_HASH_JOIN: "ShuffledHashJoinExec",
               Algorithm.SORT_MERGE_JOIN: "SortMergeJoinExec",
               Algorithm.BROADCAST_NESTED_LOOP_JOIN: "BroadcastNestedLoopJoinExec",
               Algorithm.NULL_AWARE_BROADCAST_HASH_JOIN: "BroadcastHashJoinExec"}
JOIN_TYPES = {"inner": "Inner", "left": "LeftOuter", "right": "RightOuter", "full": "FullOuter", "semi": "LeftSemi",
              "anti": "LeftAnti", "null_aware_anti": "LeftAnti", "mark": "LeftOuter"}
# At SF 1 statistics: q13 a sort-merge left join, q21 a sort-merge anti join, q22 a shuffled
# hash anti join beside a scalar subquery; q05, q09 and q18 chains of broadcast joins with
# semi joins and aggregations between them.
QUERIES = ("q05", "q09", "q13", "q18", "q21", "q22")
NOT_IN_NULL = """select o_orderkey, o_totalprice from orders
where o_custkey not in (select case when c_nationkey = 3 then null else c_custkey end from customer where c_acctbal > 0)
order by o_totalprice"""


@pytest.fixture(scope="module")
def sf1_planner(tpch_parquet_catalog):
    from cbo.estimate import Estimator
    from stats.store import StatsStore
    from tests.plan_files import TPCH_STATS

    store = StatsStore(TPCH_STATS)
    catalog = load_catalog(tpch_parquet_catalog)
    return Planner(catalog, estimator=Estimator({t: store.load(t).stats for t in store.tables()}))


def cbo_joins(node: PhysicalPlan, found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """cbo's joins in pre-order (left input first) as (Spark operator, Spark join type); the
    right input of a join run as a scalar subquery runs apart from the plan's tree in Spark."""
    if isinstance(node.logical, Join) and node.algorithm in SPARK_JOINS:
        found.append((SPARK_JOINS[node.algorithm], JOIN_TYPES[node.logical.kind]))
    inputs = node.inputs[:1] if node.algorithm is Algorithm.SCALAR_SUBQUERY else node.inputs
    for child in inputs:
        cbo_joins(child, found)
    return found


def spark_joins(op: SparkOp, found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    if op.join_type is not None:
        found.append((op.kind, op.join_type))
    for child in op.children:
        spark_joins(child, found)
    return found


def ops(op: SparkOp) -> list[SparkOp]:
    return [op, *(below for child in op.children for below in ops(child))]


def run(session: Session, planned, features):   # type: ignore[no-untyped-def]
    """Rows, the executed plan read back (the final plan under adaptive execution) and its text."""
    executor = session._spark(planned)
    executor.adaptive = features
    with executor.own_join_order():
        frame = executor.dataframe(planned.plan, planned.names)
        rows = frame.collect()
    java_plan = frame._jdf.queryExecution().executedPlan()
    return rows, read_plan(java_plan), java_plan.toString()


@pytest.mark.parametrize("name", QUERIES)
def test_the_final_adaptive_plan_keeps_cbos_joins(name, spark, sf1_planner):
    query = next(q for q in all_queries() if q.name == name)
    planned = sf1_planner.plan(query.sql)
    assert planned.physical is not None
    session = Session(sf1_planner.catalog)
    rows_off, executed_off, _ = run(session, planned, ADAPTIVE_OFF)
    rows, executed, text = run(session, planned, PRESERVING)
    assert "AdaptiveSparkPlan isFinalPlan=true" in text
    # The same joins in the same places, each with its strategy and type, as with adaptive
    # execution off; and the strategies are cbo's. (Spark's own optimizer still moves an anti
    # join below an inner join in q21 and q22, with or without adaptive execution; the metric
    # mapping reports the moved joins as not measured.)
    ours = cbo_joins(planned.physical, [])
    assert ours, f"{name} has no join to check"
    theirs = spark_joins(executed, [])
    assert theirs == spark_joins(executed_off, []), f"{name}: adaptive execution moved a join:\n{text}"
    assert Counter(theirs) == Counter(ours), f"{name}: Spark's final plan changed cbo's joins:\n{text}"
    # EXPLAIN ANALYZE's mapping of Spark's metrics onto cbo's plan reads the final plan: every
    # node measured with adaptive execution off is measured with it on, with the same rows.
    scalar = frozenset(id(n.logical) for n in planned.physical.operators() if n.algorithm is Algorithm.SCALAR_SUBQUERY)
    actuals_off = attribute(planned.plan, executed_off, {}, len(rows_off), scalar)
    actuals = attribute(planned.plan, executed, {}, len(rows), scalar)
    measured = [node for node in walk(planned.plan) if actuals_off[id(node)].rows is not None]
    assert any(isinstance(node, (Join, Aggregate)) for node in measured), f"{name}: nothing measured to compare"
    for node in walk(planned.plan):
        assert actuals[id(node)].rows == actuals_off[id(node)].rows, (name, node, actuals[id(node)])
    # Adaptive execution really ran: SF 1's partition count over SF 0.01's rows gets coalesced.
    reads = [op for op in ops(executed) if op.kind == "AQEShuffleReadExec"]
    assert reads and any(op.metrics["numPartitions"][0] < planned.partitions for op in reads), text


def test_not_in_with_a_null_runs_fewer_jobs_with_empty_relation_propagation(spark, tpch_parquet_catalog):
    session = Session(load_catalog(tpch_parquet_catalog))
    planned = session._plan(NOT_IN_NULL)
    assert any(n.algorithm is Algorithm.NULL_AWARE_BROADCAST_HASH_JOIN for n in planned.physical.operators())
    run(session, planned, ADAPTIVE_OFF)   # the tables' views are made (and their files listed) once
    counted = {}
    for mode in ("off", "preserving", "coalesce+skew_join+local_read"):
        with JobCounter(spark) as jobs:
            rows, executed, text = run(session, planned, adaptive_features(mode))
        assert rows == [], mode
        counted[mode] = (jobs.jobs, jobs.stages, executed, text)
    off, preserving, without_empty = counted["off"], counted["preserving"], counted["coalesce+skew_join+local_read"]
    # Off: the broadcast, the sort's sampling job and its shuffle all run. Preserving: the
    # broadcast's NULL proves the answer empty; nothing after it runs: one job, one stage.
    assert preserving[:2] == (1, 1) and off[1] > 1 and off[0] > 1, (off[:2], preserving[:2])
    assert without_empty[1] > 1, (without_empty[:2], preserving[:2])   # the rule that does it
    assert "EmptyRelation" in preserving[3] and "EmptyRelation" not in without_empty[3]
    assert not any(op.kind == "FileSourceScanExec" and op.metrics.get("numOutputRows", (0,))[0]
                   for op in ops(preserving[2]))   # the probe side's scan never ran


def test_explain_analyze_reads_a_relation_adaptive_execution_proved_empty(spark, tpch_parquet_catalog):
    session = Session(load_catalog(tpch_parquet_catalog), settings={"spark_adaptive": "preserving"})
    text = session.explain(NOT_IN_NULL, analyze=True)
    first = text.splitlines()
    assert "actual rows 0" in first[0], text
    assert "adaptive execution found it empty" in first[1], text
    assert "(adaptive execution: preserving)" in text
    # Off, the same query is measured operator by operator, nothing about empty relations.
    session.set(spark_adaptive="off")
    text = session.explain(NOT_IN_NULL, analyze=True)
    assert "adaptive execution found it empty" not in text and "(adaptive execution: off)" in text
    assert "actual rows 0" in text.splitlines()[0]
