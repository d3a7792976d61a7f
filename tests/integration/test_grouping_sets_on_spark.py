"""ROLLUP, CUBE, GROUPING SETS and GROUPING() on Spark, each implementation forced, as DuckDB
answers on the original SQL (TPC-H SF 0.01 and small VALUES tables with NULL keys).

Spark's renderings differ from DuckDB's (``cbo.sqlgen``): GROUPING of several keys is a sum of
single-column ``grouping`` bits; an empty grouping set over no input needs a marker row
(Spark's Expand yields nothing there); the union of aggregations reads one REPARTITION exchange
in every branch. The physical plan is forced by turning the other implementation off; the
partial aggregation below the sets is forced out of the memo and rendered both ways.
"""

from __future__ import annotations

import random

import pytest

from benchmarks.equivalence.generators import grouping_sets_forced_plan
from cbo.answers import compare, is_ordered
from cbo.app.session import Session
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.engines.spark import register_catalog, run_sql
from cbo.ir.operators import Aggregate, GroupingSets, walk
from cbo.memo.search import restore_output_order
from cbo.physical.algorithm import Algorithm
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog
from cbo.sqlgen import to_sql

DATA = ("with t(g, h, x) as (values (1, 'a', 1.5), (1, 'b', 2.5), (1, null, null), (2, 'a', 4.0), "
        "(null, 'a', 8.0), (null, null, 3.0), (3, 'c', null)) ")

QUERIES = {
    "rollup_ordered": "select l_returnflag, l_linestatus, sum(l_quantity), avg(l_discount), count(*) from lineitem "
                      "group by rollup(l_returnflag, l_linestatus) "
                      "order by l_returnflag nulls last, l_linestatus nulls last",
    "cube_grouping_of_two": "select o_orderstatus, o_orderpriority, grouping(o_orderstatus, o_orderpriority) as g, "
                            "count(*), max(o_totalprice) from orders group by cube(o_orderstatus, o_orderpriority)",
    "null_keys_told_apart": DATA + "select g, h, grouping(g) as gg, grouping(h, g) as ghg, count(*), count(x), "
                                   "sum(x), stddev_samp(x) from t group by cube(g, h)",
    "empty_set_over_no_input": DATA + "select g, count(*), count(x), sum(x), avg(x), grouping(g) from t "
                                      "where x > 100 group by rollup(g)",
    "sets_listed_twice_and_distinct": "select n_regionkey, count(distinct n_nationkey % 3), count(*) from nation "
                                      "group by grouping sets ((n_regionkey), (n_regionkey), ())",
    "having_grouping": "select n_regionkey, n_nationkey % 2 as p, count(*) from nation "
                       "group by n_regionkey, rollup(n_nationkey % 2) having grouping(n_nationkey % 2) = 1",
}
# where the sets over the partial aggregation are forced (the others: DISTINCT, too few rows)
PARTIAL = ("rollup_ordered", "cube_grouping_of_two", "null_keys_told_apart", "empty_set_over_no_input")
FORMS = {"expand": ("UnionGroupingSets", Algorithm.EXPAND_AGGREGATE),
         "union": ("ExpandGroupingSets", Algorithm.UNION_AGGREGATE)}


@pytest.fixture(scope="module")
def setup(spark, tpch_parquet_catalog):
    catalog = load_catalog(tpch_parquet_catalog)
    reference = DuckDBEngine(catalog)
    register_catalog(spark, catalog)
    yield catalog, reference
    reference.close()


def _expected(reference: DuckDBEngine, name: str) -> list[tuple]:
    _, rows, _ = reference.run(QUERIES[name])
    return rows


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("name", list(QUERIES))
def test_each_implementation_matches_duckdb(name, form, setup, spark):
    catalog, reference = setup
    disabled, algorithm = FORMS[form]
    session = Session(catalog, engine="spark", dialect="duckdb", settings={"disabled_rules": frozenset({disabled})})
    sql = QUERIES[name]
    planned = session.planner.plan(sql)
    nodes = [n for n in walk(planned.plan) if isinstance(n, GroupingSets)]
    assert nodes and all(planned.operator(n).algorithm is algorithm for n in nodes)
    _, rows = session.run(planned)
    verdict = compare(_expected(reference, name), rows, ordered=is_ordered(sql, "duckdb"))
    assert verdict.matches, f"{name} ({form}) on Spark: {verdict.detail}"


@pytest.mark.parametrize("union", [False, True], ids=["grouping_sets", "union"])
@pytest.mark.parametrize("name", PARTIAL)
def test_sets_over_the_partial_aggregation_match_duckdb(name, union, setup, spark):
    catalog, reference = setup
    sql = QUERIES[name]
    planned = Planner(catalog, "duckdb").plan(sql)
    assert planned.optimized is not None
    plan, used = grouping_sets_forced_plan(planned.optimized.root, random.Random(0), True)
    assert used > 0
    assert any(isinstance(n, GroupingSets) and isinstance(n.input, Aggregate) for n in walk(plan))
    text = to_sql(restore_output_order(plan, planned.plan), planned.names, "spark", grouping_sets_as_union=union)
    _, rows, _ = run_sql(spark, text)
    verdict = compare(_expected(reference, name), rows, ordered=is_ordered(sql, "duckdb"))
    assert verdict.matches, f"{name} over the partial aggregation on Spark: {verdict.detail}"


def test_grouping_sets_pushed_to_postgres_match_duckdb(spark, tpch_catalogs):
    # customer is in PostgreSQL in the federated placement; EAGER pushes every subplan the
    # source can run, so the sets (and the GROUPING column) are computed there
    catalog = load_catalog(tpch_catalogs["federated"])
    sql = ("select c_nationkey, c_mktsegment, grouping(c_mktsegment, c_nationkey) as g, count(*), "
           "sum(c_acctbal), avg(c_acctbal) from customer where c_custkey < 400 "
           "group by rollup(c_nationkey, c_mktsegment)")
    session = Session(catalog, engine="spark", dialect="duckdb", settings={"join_pushdown_strategy": "EAGER"})
    planned = session.planner.plan(sql)
    node = next(n for n in walk(planned.plan) if isinstance(n, GroupingSets))
    remote = [op for op in planned.physical.walk() if op.algorithm is Algorithm.REMOTE_QUERY] \
        if planned.physical is not None else []
    assert any(node in list(walk(op.logical)) for op in remote), "the grouping sets stayed in Spark"
    _, rows = session.run(planned)
    reference = DuckDBEngine(load_catalog(tpch_catalogs["all-spark"]))
    try:
        _, expected, _ = reference.run(sql)
    finally:
        reference.close()
    assert len(expected) > 10
    verdict = compare(expected, rows, ordered=False)
    assert verdict.matches, verdict.detail


def test_the_union_of_aggregations_computes_its_input_once(setup, spark):
    # every branch reads the one REPARTITION exchange: Spark reuses it (ReusedExchange) instead
    # of scanning and shuffling the input once per set
    catalog, _ = setup
    session = Session(catalog, engine="spark", dialect="duckdb",
                      settings={"disabled_rules": frozenset({"ExpandGroupingSets", "PartialAggregateBelowGroupingSets"})})
    frame = session.sql("select l_returnflag, l_linestatus, sum(l_quantity), count(*) from lineitem "
                        "group by rollup(l_returnflag, l_linestatus)")
    assert len(frame.collect()) == 4 + 3 + 1   # (flag, status) pairs, flags, the total
    executed = frame._jdf.queryExecution().executedPlan().toString()
    assert executed.count("FileScan parquet") == 1 and executed.count("ReusedExchange") == 2, executed
