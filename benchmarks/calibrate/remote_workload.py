"""The remote calibration workload: queries of JDBC sources, pushed and read table by table.

Each item isolates part of what a remote query costs (``cbo.cost.model.CostModel.remote_query``
and the JDBC table read, ``_scan``):

* pushed aggregations and joins returning a handful of rows, over inputs from ten thousand to six
  million rows: the source's work per row read (``remote_row_postgres``, ``remote_row_mysql``),
  and with the smallest ones the latency of a query (``remote_query``); MariaDB's joins of three
  and four tables read through index lookups (TPC-H Q9's pushed subtree), not from an index
  alone as its counts are;
* pushed filters and joins whose result is large and narrow or large and wide, aggregated in
  Spark: rows and bytes sent through JDBC (``jdbc_row``, ``jdbc_byte``);
* tables read through JDBC one by one and worked on in Spark (``join_pushdown_strategy=NONE``),
  as cbo-local and AUTOMATIC's local alternatives run them;
* TPC-H queries pushed whole (``EAGER``) and run locally (``NONE``), for realistic mixtures.

PostgreSQL items run on the all-postgres placement (every TPC-H table in PostgreSQL), MariaDB
items on federated3 (part, partsupp, supplier, nation, region in MariaDB). Held back: queries of
the same kinds over other tables and predicates, never seen by the fit.
"""

from __future__ import annotations

from benchmarks.calibrate.workload import Item
from benchmarks.tpch.queries import all_queries

EAGER = {"join_pushdown_strategy": "EAGER"}
NONE = {"join_pushdown_strategy": "NONE"}


POSTGRES_PUSHED = {
    # the source's work per row: a few rows come back
    "pg_count_supplier": "select count(*) from supplier where s_acctbal > 0",
    "pg_count_part": "select count(*) from part where p_size < 10",
    "pg_count_orders": "select count(*) from orders where o_orderdate < date '1994-01-01'",
    "pg_count_lineitem": "select count(*) from lineitem where l_quantity < 10",
    "pg_agg_lineitem_flags": "select l_returnflag, l_linestatus, sum(l_quantity) from lineitem "
                             "group by l_returnflag, l_linestatus",
    "pg_join_orders_customer": "select count(*) from orders, customer where o_custkey = c_custkey "
                               "and c_mktsegment = 'AUTOMOBILE'",
    "pg_join_lineitem_orders": "select count(*) from lineitem, orders where l_orderkey = o_orderkey "
                               "and o_orderdate < date '1993-06-01'",
    # many groups come back: transfer of a pushed result
    "pg_agg_orders_by_customer": "select o_custkey, max(o_totalprice) from orders group by o_custkey",
    "pg_agg_lineitem_by_supplier": "select l_suppkey, sum(l_extendedprice) from lineitem group by l_suppkey",
}

POSTGRES_LOCAL = {
    # tables read through JDBC, narrow and wide columns, worked on in Spark
    "pg_read_orders_narrow": "select o_orderstatus, count(*) from orders group by o_orderstatus",
    "pg_read_orders_wide": "select o_orderpriority, max(o_comment), max(o_clerk) from orders group by o_orderpriority",
    "pg_read_lineitem_narrow": "select l_returnflag, sum(l_quantity) from lineitem group by l_returnflag",
    "pg_read_customer_wide": "select c_mktsegment, max(c_address), max(c_comment) from customer group by c_mktsegment",
    "pg_read_partsupp": "select count(*), max(ps_comment) from partsupp",
}

MARIADB_PUSHED = {
    "my_count_supplier": "select count(*) from supplier where s_acctbal > 0",
    "my_count_part": "select count(*) from part where p_size < 10",
    "my_count_partsupp": "select count(*) from partsupp where ps_availqty > 100",
    "my_agg_partsupp_by_supplier": "select ps_suppkey, sum(ps_supplycost) from partsupp group by ps_suppkey",
    "my_join_partsupp_supplier": "select count(*) from partsupp, supplier where ps_suppkey = s_suppkey "
                                 "and s_acctbal > 0",
    "my_join_supplier_nation": "select n_name, count(*) from supplier, nation where s_nationkey = n_nationkey "
                               "group by n_name",
    # joins reading rows through index lookups (nested loops), as TPC-H Q9's pushed subtree does:
    # not answerable from an index alone as the counts above are
    "my_join_part_partsupp_supplier": "select n_name, sum(ps_supplycost), max(p_name) from part, partsupp, supplier, "
                                      "nation where p_partkey = ps_partkey and ps_suppkey = s_suppkey "
                                      "and s_nationkey = n_nationkey and p_name like '%green%' group by n_name",
    "my_join_partsupp_supplier_wide": "select s_nationkey, sum(ps_supplycost * ps_availqty), max(s_name) "
                                      "from partsupp, supplier where ps_suppkey = s_suppkey group by s_nationkey",
    "my_join_part_partsupp_brand": "select p_brand, sum(ps_availqty), max(ps_comment) from part, partsupp "
                                   "where p_partkey = ps_partkey and p_size < 25 group by p_brand",
}

MARIADB_LOCAL = {
    "my_read_part_wide": "select p_brand, max(p_name), max(p_comment) from part group by p_brand",
    "my_read_partsupp_narrow": "select count(*), sum(ps_availqty) from partsupp",
}

HELD_BACK_POSTGRES = {
    "pg_count_customer": ("select count(*) from customer where c_acctbal > 5000", EAGER),
    "pg_count_lineitem_dates": ("select count(*) from lineitem where l_shipdate >= date '1995-01-01'", EAGER),
    "pg_join_partsupp_part": ("select count(*) from partsupp, part where ps_partkey = p_partkey "
                              "and p_size > 40", EAGER),
    "pg_agg_partsupp_by_part": ("select ps_partkey, sum(ps_availqty) from partsupp group by ps_partkey", EAGER),
    "pg_read_part_local": ("select p_brand, max(p_comment) from part group by p_brand", NONE),
    "pg_read_orders_dates_local": ("select o_orderpriority, count(*) from orders where o_orderdate "
                                   "< date '1995-01-01' group by o_orderpriority", NONE),
}

HELD_BACK_MARIADB = {
    "my_count_partsupp_cost": ("select count(*) from partsupp where ps_supplycost < 500", EAGER),
    "my_join_part_partsupp": ("select count(*) from part, partsupp where p_partkey = ps_partkey "
                              "and p_size < 5", EAGER),
    "my_read_supplier_local": ("select s_nationkey, max(s_comment) from supplier group by s_nationkey", NONE),
    "my_join_part_partsupp_supplier_red": ("select s_nationkey, sum(ps_supplycost) from part, partsupp, supplier "
                                           "where p_partkey = ps_partkey and ps_suppkey = s_suppkey "
                                           "and p_name like '%red%' group by s_nationkey", EAGER),
}

# TPC-H queries over PostgreSQL tables only (all-postgres), pushed whole and run locally.
TPCH_TRAINING = (3, 5, 10, 12)
TPCH_HELD_BACK = (4, 19)


def _tpch(numbers: tuple[int, ...]) -> list[Item]:
    items = []
    for query in all_queries():
        if query.number in numbers:
            items.append(Item(f"{query.name}/eager", query.sql, EAGER, placement="all-postgres"))
            items.append(Item(f"{query.name}/local", query.sql, NONE, placement="all-postgres"))
    return items


def training() -> list[Item]:
    items = [Item(n, s, EAGER, placement="all-postgres") for n, s in POSTGRES_PUSHED.items()]
    items += [Item(n, s, NONE, placement="all-postgres") for n, s in POSTGRES_LOCAL.items()]
    items += [Item(n, s, EAGER, placement="federated3") for n, s in MARIADB_PUSHED.items()]
    items += [Item(n, s, NONE, placement="federated3") for n, s in MARIADB_LOCAL.items()]
    return items + _tpch(TPCH_TRAINING)


def held_back() -> list[Item]:
    items = [Item(n, s, settings, placement="all-postgres") for n, (s, settings) in HELD_BACK_POSTGRES.items()]
    items += [Item(n, s, settings, placement="federated3") for n, (s, settings) in HELD_BACK_MARIADB.items()]
    return items + _tpch(TPCH_HELD_BACK)
