"""The Python API: ``cbo.Session`` gives DataFrames, plans that render, and EXPLAIN."""

from __future__ import annotations

import json

import cbo


def test_session_sql_returns_a_dataframe(spark, tpch_catalogs):
    session = cbo.Session(tpch_catalogs["all-spark"])
    frame = session.sql("select c_mktsegment, count(*) as n from orders, customer "
                        "where o_custkey = c_custkey group by c_mktsegment order by c_mktsegment")
    rows = frame.collect()
    assert [r["c_mktsegment"] for r in rows] == ["AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"]
    assert sum(r["n"] for r in rows) == 15000


def test_spark_keeps_cbo_join_order(spark, tpch_catalogs):
    # Written order joins part and supplier first, with no predicate between them. Spark's own
    # ReorderJoin would move partsupp in between; cbo's plan (kept in written order here) must
    # reach execution unchanged.
    sql = "select count(*) from part, supplier, partsupp where p_partkey = ps_partkey and s_suppkey = ps_suppkey"
    written = cbo.Session(tpch_catalogs["all-spark"], settings={"join_reordering_strategy": "NONE"}).sql(sql)
    plan = written._jdf.queryExecution().optimizedPlan().toString()
    assert "Join Cross" in plan and "strategy=shuffle_hash" in plan
    assert written.collect()[0][0] == 8000
    # With reordering (the default) the memo joins along the predicates: no cross product.
    reordered = cbo.Session(tpch_catalogs["all-spark"]).sql(sql)
    assert "Join Cross" not in reordered._jdf.queryExecution().optimizedPlan().toString()
    assert reordered.collect()[0][0] == 8000


def test_plan_renders_as_text_svg_and_json(tpch_catalogs):
    session = cbo.Session(tpch_catalogs["federated"], engine="duckdb")
    view = session.plan("select count(*) from lineitem where l_orderkey in (select o_orderkey from orders)")
    assert repr(view).startswith("- ")
    assert view._repr_svg_().startswith("<svg") and "SemiJoin" in view._repr_svg_()
    assert json.dumps(view.json())
    names, rows = session.query("select count(*) from region")
    assert rows == [(5,)]


def test_plans_over_postgres_tables_know_their_keys(tpch_catalogs):
    from cbo.ir.operators import Scan, walk

    view = cbo.Session(tpch_catalogs["all-postgres"], engine="duckdb").plan("select o_orderkey, o_custkey from orders")
    scan = next(n for n in walk(view.plan) if isinstance(n, Scan))
    assert [sorted(c.name for c in key) for key in scan.unique_keys] == [["o_orderkey"]]
