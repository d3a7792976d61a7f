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
    assert "Join Cross" in plan and "strategy=broadcast" in plan   # a broadcast nested loop
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


def test_explain_analyze_on_spark_gives_rows_and_times(spark, tpch_catalogs):
    session = cbo.Session(tpch_catalogs["all-spark"])
    sql = ("select n_name, count(*) from customer, nation where c_nationkey = n_nationkey "
           "and c_acctbal > 0 group by n_name")
    body = json.loads(session.explain(sql, format="json", analyze=True))
    nodes, stack = [], [body["plan"]]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(node["children"])
        assert node["actual_rows_from"]
        assert all(seconds >= 0 for seconds in node.get("spark_time_s", {}).values())
    by_operator = {n["operator"]: n for n in nodes}
    assert by_operator["Scan"]["actual_rows"] in (25, 1500)      # nation or customer at SF 0.01
    assert "scanTime" in by_operator["Scan"]["spark_time_s"]      # Spark's own metric
    assert body["plan"]["actual_rows"] == 25                      # every nation has customers
    assert body["plan"]["analyze"]["runs"] == 1 and body["plan"]["analyze"]["wall_time_s"] > 0
    (join,) = [n for n in nodes if n["operator"].endswith("Join")]
    assert join["strategy"] in ("broadcast_hash", "shuffle_hash", "sort_merge")
    text = session.explain(sql, analyze=True)
    assert "actual rows" in text and "Analyzed from one run on spark" in text and "Spark: " in text
