"""ROLLUP, CUBE, GROUPING SETS and GROUPING() through cbo's plan on DuckDB, against DuckDB on
the original SQL; the binding of every GROUP BY form, and the one-line errors of the forms
cbo refuses.

Each query is planned by cbo and run twice on DuckDB: rendered as ``GROUP BY GROUPING SETS``
(what the DuckDB engine and PostgreSQL get) and as a union of one aggregation per set (the SQL
of the physical UnionGroupingSets). Spark's renderings run in
``tests/integration/test_grouping_sets_on_spark.py``; the partial aggregation below the sets
is forced on random tables by the ``grouping-sets`` equivalence family.
"""

from __future__ import annotations

import pytest

from cbo.answers import compare, is_ordered
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.errors import CboError
from cbo.ir.operators import Aggregate, GroupingSets, walk
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog
from cbo.sqlgen import to_sql

# Keys with NULLs in the data (a NULL key is not a rolled-up one), a group of one row, a value
# column with NULLs.
DATA = ("with t(g, h, x) as (values (1, 'a', 1.5), (1, 'b', 2.5), (1, null, null), (2, 'a', 4.0), "
        "(null, 'a', 8.0), (null, null, 3.0), (3, 'c', null)) ")

QUERIES = {
    "rollup": "select n_regionkey, n_nationkey % 3 as m, count(*), sum(n_nationkey) from nation "
              "group by rollup(n_regionkey, n_nationkey % 3)",
    "cube_grouping": "select o_orderstatus, o_orderpriority, grouping(o_orderstatus, o_orderpriority) as g, "
                     "count(*), avg(o_totalprice) from orders group by cube(o_orderstatus, o_orderpriority) "
                     "order by g, o_orderstatus nulls last, o_orderpriority nulls last",
    "grouping_sets_listed": "select l_returnflag, l_linestatus, min(l_shipdate), max(l_quantity) from lineitem "
                            "group by grouping sets ((l_returnflag, l_linestatus), (l_linestatus), ())",
    "null_keys_told_apart": DATA + "select g, h, grouping(g) as gg, grouping(h) as gh, count(*), count(x), sum(x) "
                                   "from t group by cube(g, h)",
    "plain_key_beside_rollup": DATA + "select g, h, count(*) from t group by g, rollup(h)",
    "composite_item": DATA + "select g, h, count(*), max(x) from t group by rollup((g, h))",
    "product_of_elements": DATA + "select g, h, count(*) from t group by rollup(g), cube(h)",
    "a_set_listed_twice": DATA + "select g, count(*) from t group by grouping sets ((g), (g), ())",
    "nested_grouping_sets": DATA + "select g, h, count(*) from t group by grouping sets ((g), rollup(g, h), "
                                   "grouping sets ((h), ()))",
    "empty_set_over_no_input": DATA + "select g, count(*), count(x), sum(x), avg(x), grouping(g) from t "
                                      "where x > 100 group by rollup(g)",
    "only_empty_sets": DATA + "select count(*), sum(x) from t where x > 100 group by grouping sets ((), ())",
    "distinct_aggregates": "select n_regionkey, count(distinct n_nationkey % 4), sum(distinct n_nationkey % 4), "
                           "max(distinct n_name) from nation group by rollup(n_regionkey)",
    "moments": DATA + "select g, stddev_samp(x), var_pop(x), variance(x) from t group by rollup(g)",
    "having_and_order_by_grouping": "select n_regionkey, count(*) as c from nation group by rollup(n_regionkey) "
                                    "having grouping(n_regionkey) = 0 or count(*) > 20 "
                                    "order by grouping(n_regionkey), n_regionkey",
    "grouping_under_plain_group_by": "select n_regionkey, grouping(n_regionkey), count(*) from nation "
                                     "group by n_regionkey",
    "filter_above_derived_rollup": "select * from (select n_regionkey as r, count(*) as c from nation "
                                   "group by rollup(n_regionkey)) t where r is null or r > 2",
    "filter_on_a_key_in_every_set": "select * from (select n_regionkey as r, n_nationkey % 2 as p, count(*) as c "
                                    "from nation group by n_regionkey, rollup(n_nationkey % 2)) t where r = 1",
    "joined_and_computed_keys": "select r_name, substring(n_name, 1, 1) as initial, count(*), sum(s_acctbal) "
                                "from supplier join nation on s_nationkey = n_nationkey join region "
                                "on n_regionkey = r_regionkey group by rollup(r_name, substring(n_name, 1, 1))",
}


@pytest.fixture(scope="module")
def engines(tpch_parquet_catalog):
    catalog = load_catalog(tpch_parquet_catalog)
    reference = DuckDBEngine(catalog)
    yield Planner(catalog, dialect="duckdb"), reference
    reference.close()


@pytest.mark.parametrize("union", [False, True], ids=["grouping_sets", "union"])
@pytest.mark.parametrize("name", list(QUERIES))
def test_grouping_sets_match_duckdb(name, union, engines):
    planner, reference = engines
    sql = QUERIES[name]
    planned = planner.plan(sql)
    _, expected, _ = reference.run(sql)
    _, rows, _ = reference.run(to_sql(planned.plan, planned.names, "duckdb", grouping_sets_as_union=union))
    assert expected or name in ("only_empty_sets",)
    verdict = compare(expected, rows, ordered=is_ordered(sql, "duckdb"))
    assert verdict.matches, f"{name}: {verdict.detail}"


def _grouping_sets(planner: Planner, sql: str) -> GroupingSets:
    found = [node for node in walk(planner.plan(sql).bound) if isinstance(node, GroupingSets)]
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("clause, sets", [
    ("rollup(a, b, c)", [("a", "b", "c"), ("a", "b"), ("a",), ()]),
    ("cube(a, b)", [("a", "b"), ("a",), ("b",), ()]),
    ("grouping sets ((a, b), (c), ())", [("a", "b"), ("c",), ()]),
    ("a, rollup(b)", [("a", "b"), ("a",)]),
    ("rollup((a, b), c)", [("a", "b", "c"), ("a", "b"), ()]),
    ("rollup(a), rollup(b)", [("a", "b"), ("a",), ("b",), ()]),
    ("grouping sets ((a), (a))", [("a",), ("a",)]),
    ("grouping sets (rollup(a, b), c)", [("a", "b"), ("a",), (), ("c",)]),
    ("grouping sets ((a), grouping sets ((b), ()))", [("a",), ("b",), ()]),
])
def test_group_by_forms_bind_to_their_sets(clause, sets, tpch_parquet_catalog):
    planner = Planner(load_catalog(tpch_parquet_catalog), dialect="duckdb")
    sql = (f"select count(*) from (select n_nationkey as a, n_regionkey as b, n_name as c from nation) t "
           f"group by {clause}")
    node = _grouping_sets(planner, sql)
    short = {"n_nationkey": "a", "n_regionkey": "b", "n_name": "c"}
    assert [tuple(short[node.keys[i].name] for i in s) for s in node.sets] == sets


def test_with_rollup_is_a_rollup_of_every_key(tpch_parquet_catalog):
    planner = Planner(load_catalog(tpch_parquet_catalog), dialect="spark")
    node = _grouping_sets(planner, "select n_regionkey, n_nationkey, count(*) from nation "
                                   "group by n_regionkey, n_nationkey with rollup")
    assert [tuple(node.keys[i].name for i in s) for s in node.sets] == \
        [("n_regionkey", "n_nationkey"), ("n_regionkey",), ()]


def test_one_grouping_set_is_a_plain_aggregation(tpch_parquet_catalog):
    planned = Planner(load_catalog(tpch_parquet_catalog), dialect="duckdb").plan(
        "select n_regionkey, count(*) from nation group by grouping sets ((n_regionkey))")
    assert not any(isinstance(node, GroupingSets) for node in walk(planned.bound))
    assert any(isinstance(node, Aggregate) for node in walk(planned.bound))


@pytest.mark.parametrize("sql, expected", [
    ("select grouping(n_name) from nation group by rollup(n_regionkey)",
     "the arguments of GROUPING() must be grouping expressions"),
    ("select grouping(n_regionkey) from nation", "GROUPING() needs a GROUP BY"),
    ("select n_regionkey from nation where grouping(n_regionkey) = 0 group by rollup(n_regionkey)",
     "GROUPING() is not allowed in WHERE"),
    ("select count(*) from nation group by cube(n_nationkey, n_regionkey, n_name, n_comment, n_nationkey + 1, "
     "n_nationkey + 2, n_nationkey + 3, n_nationkey + 4, n_nationkey + 5, n_nationkey + 6, n_nationkey + 7, "
     "n_nationkey + 8, n_nationkey + 9)", "CUBE of 13 expressions makes 8,192 grouping sets"),
    ("select n_regionkey, count(*) from nation group by rollup(n_regionkey), n_name2",
     "unknown column 'n_name2'"),
])
def test_refused_forms_say_why_in_one_line(sql, expected, tpch_parquet_catalog):
    with pytest.raises(CboError) as caught:
        Planner(load_catalog(tpch_parquet_catalog), dialect="duckdb").plan(sql)
    message = str(caught.value)
    assert message.startswith("line 1, column") and expected in message and "\n" not in message


def test_a_bare_column_beside_grouping_sets_is_an_error(tpch_parquet_catalog):
    with pytest.raises(CboError, match="n_name"):
        Planner(load_catalog(tpch_parquet_catalog), dialect="duckdb").plan(
            "select n_name, count(*) from nation group by rollup(n_regionkey)")
