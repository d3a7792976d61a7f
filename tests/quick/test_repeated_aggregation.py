"""A repeated aggregation computed once in PostgreSQL (TPC-H Q15's view, named twice).

``cbo.ir.shape`` finds the two copies of the view (equal up to column ids); a pushed query in
PostgreSQL reads them from one ``WITH ... AS MATERIALIZED`` CTE (``cbo.sqlgen``), and the remote
cost charges the view's work once (``cbo.memo.rules.jdbc_pushdown``). Planned only, at SF 1
statistics; the shared rendering runs on DuckDB against the inlined one. The CTE is inlined
(``cte_strategy=INLINE``): the source's own sharing of the copies is what is tested here; the
search's choice of computing it once in Spark is ``tests/quick/test_ctes.py``'s.
"""

from __future__ import annotations

import dataclasses

import pytest
import sqlglot

from cbo.connectors import POSTGRES
from cbo.estimate import Estimator
from cbo.ir.operators import Aggregate, walk
from cbo.ir.shape import shape
from cbo.physical.remote_work import remote_work
from cbo.physical.algorithm import Algorithm
from cbo.planner import Planner
from cbo.settings import OptimizerSettings
from cbo.sources.catalog import load_catalog
from cbo.sqlgen import SqlRenderer, repeated_subtrees
from cbo.workloads.tpch_queries import QUERY_DIR
from tests.duckdb_answers import assert_answers_as_planned
from tests.quick.test_pushdown_records import plan
from tests.quick.test_rule_files import _stored

Q15 = (QUERY_DIR / "q15.sql").read_text()
# The view's second use filtered on another quarter: a different aggregation.
Q15_OTHER_QUARTER = Q15.replace("total_revenue = (\n        select\n            max(total_revenue)\n        from\n"
                                "            revenue0\n    )",
                                "total_revenue > (select avg(s) from (select sum(l_extendedprice) as s from lineitem "
                                "where l_shipdate >= date '1996-04-01' and l_shipdate < date '1996-07-01' "
                                "group by l_suppkey) x)")


@pytest.fixture(scope="module")
def planner(tpch_parquet_catalog):
    return Planner(load_catalog(tpch_parquet_catalog), estimator=Estimator(_stored("tpch-sf1")),
                   settings=OptimizerSettings(cte_strategy="INLINE"))


def test_the_two_copies_of_a_view_have_one_shape(planner):
    assert Q15_OTHER_QUARTER != Q15
    aggregations = [n for n in walk(planner.plan(Q15).plan) if isinstance(n, Aggregate) and n.group_by]
    assert len(aggregations) == 2 and aggregations[0] != aggregations[1]   # fresh column ids
    assert shape(aggregations[0]) == shape(aggregations[1])
    other = [n for n in walk(planner.plan(Q15_OTHER_QUARTER).plan) if isinstance(n, Aggregate) and n.group_by]
    assert len(other) == 2 and shape(other[0]) != shape(other[1])
    assert len(repeated_subtrees(planner.plan(Q15).plan)) == 1
    assert not repeated_subtrees(planner.plan(Q15_OTHER_QUARTER).plan)


@pytest.mark.parametrize("sql", [Q15, Q15_OTHER_QUARTER], ids=["q15", "other-quarter"])
def test_the_shared_rendering_answers_as_the_inlined_one(planner, tpch_parquet_catalog, sql):
    planned = planner.plan(sql)
    renderer = SqlRenderer("duckdb", share_repeated=True)
    query = renderer.shared_query(planned.plan)
    columns = [sqlglot.exp.alias_(sqlglot.exp.column(f"c{c.id}", quoted=True), n, quoted=True)
               for c, n in zip(planned.plan.output, planned.names)]
    shared = renderer.with_ctes(sqlglot.exp.select(*columns).from_(query.subquery("q"))).sql(dialect="duckdb")
    assert shared.count("WITH") == (1 if sql == Q15 else 0)
    assert shared.count('"lineitem"') == (1 if sql == Q15 else 2)
    assert_answers_as_planned(tpch_parquet_catalog, planned, shared)


def _remote_root(planned):  # type: ignore[no-untyped-def]
    (root,) = [n for n in planned.physical.operators() if n.algorithm is Algorithm.REMOTE_QUERY]
    return root


def test_pushed_q15_computes_the_view_once_and_is_charged_once(tpch_parquet_catalog, monkeypatch):
    tables = ("lineitem", "supplier")
    planned, records = plan(tpch_parquet_catalog, Q15, tables, join_pushdown_strategy="EAGER", cte_strategy="INLINE")
    (record,) = [r for r in records if r.pushed]
    parsed = sqlglot.parse_one(record.sql, read="postgres")
    assert [t.name for t in parsed.find_all(sqlglot.exp.Table)].count("lineitem") == 1
    assert "AS MATERIALIZED" in record.sql
    shared = remote_work(_remote_root(planned).logical)

    monkeypatch.setattr(POSTGRES, "capabilities", dataclasses.replace(POSTGRES.capabilities, shares_repeated=False))
    planned_twice, records_twice = plan(tpch_parquet_catalog, Q15, tables, join_pushdown_strategy="EAGER",
                                        cte_strategy="INLINE")
    (record_twice,) = [r for r in records_twice if r.pushed]
    parsed = sqlglot.parse_one(record_twice.sql, read="postgres")
    assert [t.name for t in parsed.find_all(sqlglot.exp.Table)].count("lineitem") == 2
    twice = remote_work(_remote_root(planned_twice).logical)
    assert shared is not None and twice is not None
    # the view reads lineitem's 6 million rows (and aggregates 0.2 million): charged once
    assert twice.rows - shared.rows >= 6_000_000
    assert twice.aggregated - shared.aggregated > 100_000
    assert record.remote_cost is not None and record_twice.remote_cost is not None
    assert record.remote_cost < record_twice.remote_cost


def test_without_sharing_every_copy_is_inline(planner):
    # MariaDB, and a partitioned read (its key range cannot reach into a materialized CTE)
    renderer = SqlRenderer(POSTGRES.sql, share_repeated=False)
    text = renderer.with_ctes(sqlglot.exp.select("*").from_(
        renderer.shared_query(planner.plan(Q15).plan).subquery("q"))).sql(dialect="postgres")
    assert "WITH" not in text and text.count('"lineitem"') == 2
