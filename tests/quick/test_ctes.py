"""CTEs named more than once: bound once as a producer, its references consumers of it, and
whichever form the search picks (computed once, inlined, or a mix for CTEs that read each
other) answers as DuckDB answers the query as written.

Spark's run of the shared form is checked in ``tests/integration/test_cte_on_spark.py``.
"""

from __future__ import annotations

import json

import pytest

from cbo.answers import compare
from cbo.engines.native import DuckDBNative
from cbo.errors import CboError
from cbo.ir.operators import CteAnchor, CteConsumer, Filter, Scan, SetOp, walk
from cbo.planner import Planner
from cbo.settings import OptimizerSettings
from cbo.sources.catalog import load_catalog
from cbo.sqlgen import to_sql

TWICE = "with a as (select n_nationkey k, n_name nm from nation) select x.nm from a x, a y where x.k = y.k + 1"
ONCE = "with a as (select n_nationkey k, n_name nm from nation) select nm from a where k > 3"
CORRELATED = """select p_partkey from part where p_size > (
    with c as (select ps_supplycost s from partsupp where ps_partkey = p_partkey)
    select count(*) from c x, c y where x.s = y.s)"""
# a CTE that reads another, each named more than once; a scalar subquery inside a producer
NESTED = """
with per_supp as (select l_suppkey k, count(*) n, sum(l_quantity) q from lineitem group by l_suppkey),
     big as (select k, q from per_supp where n > (select avg(n) from per_supp))
select a.k, a.q, b.q from big a join big b on a.k = b.k + 1 where a.q > 0
"""
UNION = """
with t as (select 's' kind, s_suppkey k, s_acctbal v from supplier
           union all select 'c', c_custkey, c_acctbal from customer)
select x.k, x.v, y.v from t x, t y where x.kind = 's' and y.kind = 'c' and x.k = y.k and x.v > y.v
"""


@pytest.fixture(scope="module")
def catalog(tpch_parquet_catalog):
    return load_catalog(tpch_parquet_catalog)


@pytest.fixture(scope="module")
def duckdb(catalog):
    engine = DuckDBNative(catalog)
    yield engine
    engine.close()


def _bound(catalog, sql: str, strategy: str = "AUTOMATIC"):  # type: ignore[no-untyped-def]
    return Planner(catalog, settings=OptimizerSettings(cte_strategy=strategy)).logical(sql)[1]


def _nodes(plan, kind):  # type: ignore[no-untyped-def]
    return [n for n in walk(plan) if isinstance(n, kind)]


def test_a_cte_named_twice_is_one_producer_read_by_two_consumers(catalog):
    plan = _bound(catalog, TWICE)
    assert isinstance(plan, CteAnchor) and plan.name == "a"
    consumers = _nodes(plan.body, CteConsumer)
    assert len(consumers) == 2 and consumers[0].columns != consumers[1].columns
    assert all(c.producer is plan.producer for c in consumers)
    # the producer is read once: one scan of nation in the whole plan
    assert len(_nodes(plan, Scan)) == 1


@pytest.mark.parametrize("sql, strategy", [(ONCE, "AUTOMATIC"), (CORRELATED, "AUTOMATIC"), (TWICE, "INLINE")])
def test_no_anchor_where_nothing_is_shared(catalog, sql, strategy):
    assert not _nodes(_bound(catalog, sql, strategy), CteAnchor)


def test_a_filter_on_a_reference_stays_above_its_consumer(catalog):
    plan = _bound(catalog, "with a as (select n_nationkey k from nation) select x.k from a x, a y "
                           "where x.k = y.k and x.k < 5")
    filters = [f for f in _nodes(plan, Filter) if isinstance(f.input, CteConsumer)]
    assert len(filters) == 1
    assert not _nodes(plan.producer, Filter)   # the producer is every reference's: unfiltered


def test_a_filter_above_a_union_reaches_each_branch(catalog):
    plan = _bound(catalog, UNION, "INLINE")
    for union in _nodes(plan, SetOp):
        assert all(isinstance(branch, Filter) or _nodes(branch, Filter) for branch in union.inputs), union


@pytest.mark.parametrize("strategy", ["AUTOMATIC", "SHARE", "INLINE"])
@pytest.mark.parametrize("sql", [TWICE, NESTED, UNION], ids=["twice", "nested", "union"])
def test_every_form_answers_as_duckdb(catalog, duckdb, sql, strategy):
    planned = Planner(catalog, settings=OptimizerSettings(cte_strategy=strategy)).plan(sql)
    anchors = {a.cte: a for a in _nodes(planned.plan, CteAnchor)}
    assert bool(anchors) == (strategy != "INLINE") or strategy == "AUTOMATIC"
    # each consumer names the columns its anchor's producer (as chosen) outputs: the renderers
    # read the producer's rows by those names
    for consumer in _nodes(planned.plan, CteConsumer):
        assert set(consumer.producer.output) == set(anchors[consumer.cte].producer.output), consumer.name
    expected = duckdb.run(sql)[1]
    actual = duckdb.run(to_sql(planned.plan, planned.names, "duckdb"))[1]
    verdict = compare(expected, actual, ordered=False)
    assert verdict.matches, f"{strategy}: {verdict.detail}\n{planned.plan}"


def test_nested_ctes_can_be_shared_and_inlined_in_one_plan(catalog):
    # the memo holds every mix; here the outer CTE is stored once and the filtered inner one
    # inlined into both of its references
    planned = Planner(catalog).plan(NESTED)
    assert [a.name for a in _nodes(planned.plan, CteAnchor)] == ["per_supp"]
    notes = [n for g in planned.optimized.memo.groups for n in planned.optimized.memo.notes_of(g)]
    assert any(n.startswith("CTE big (2 reads): computed once") and n.endswith(": inlined") for n in notes), notes


def test_each_subplan_of_a_shared_plan_runs_alone_on_duckdb(catalog, duckdb):
    # as EXPLAIN ANALYZE on DuckDB counts each subplan: one that reads a CTE whose anchor is
    # above it defines the CTE itself
    planned = Planner(catalog, settings=OptimizerSettings(cte_strategy="SHARE")).plan(NESTED)
    consumers = _nodes(planned.plan, CteConsumer)
    assert consumers
    for node in [*consumers, *(n for n in walk(planned.plan) if _nodes(n, CteConsumer))]:
        names = tuple(f"c{i}" for i in range(len(node.output)))
        rows = duckdb.run(f"SELECT count(*) FROM ({to_sql(node, names, 'duckdb')}) AS sub")[1]
        assert rows[0][0] >= 0


def test_an_unknown_cte_strategy_is_named():
    with pytest.raises(CboError, match="cte_strategy must be one of AUTOMATIC, INLINE, SHARE, not 'sometimes'"):
        OptimizerSettings().with_values({"cte_strategy": "sometimes"})


def test_the_strategy_is_an_enum_recorded_by_its_value():
    # a manifest holds settings as JSON (settings_record); read back, the record gives the same settings
    from cbo.settings import CteStrategy, settings_record

    settings = OptimizerSettings().with_values({"cte_strategy": " share"})
    assert settings.cte_strategy is CteStrategy.SHARE and "InlineCte" in settings.rules_off
    record = settings_record(settings)
    assert record["cte_strategy"] == "SHARE"
    assert json.loads(json.dumps(record))["cte_strategy"] == "SHARE"
    assert OptimizerSettings().with_values({"cte_strategy": record["cte_strategy"]}) == settings
    assert OptimizerSettings(cte_strategy=CteStrategy.INLINE).cte_strategy is CteStrategy.INLINE
