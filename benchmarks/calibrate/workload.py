"""The calibration workload: training queries and held-back queries, each with its settings.

Training queries isolate the work each constant prices: scans of narrow and wide column sets,
aggregations with few and many groups, joins of small and large inputs run with each strategy
(forced by disabling the other join rules or the broadcast limit), sorts, nested loops; and the
odd-numbered TPC-H queries, for realistic mixtures. Held back: the even-numbered TPC-H queries,
each with cbo's chosen plan and with broadcast joins disabled, none of them seen by the fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.tpch.queries import all_queries

ONLY_BROADCAST = {"disabled_rules": "ShuffledHashJoin,SortMergeJoin"}
ONLY_SHUFFLE_HASH = {"disabled_rules": "BroadcastHashJoin,SortMergeJoin"}
ONLY_SORT_MERGE = {"disabled_rules": "BroadcastHashJoin,ShuffledHashJoin"}
NO_BROADCAST = {"broadcast_limit_bytes": "0"}
JOIN_VARIANTS = {"broadcast": ONLY_BROADCAST, "shuffle_hash": ONLY_SHUFFLE_HASH, "sort_merge": ONLY_SORT_MERGE}


@dataclass(frozen=True)
class Item:
    name: str
    sql: str
    settings: dict[str, str] = field(default_factory=dict)
    # the remote calibration's catalog to run it on: all-postgres (PostgreSQL) or federated3
    # (MariaDB tables); None for the Spark calibration, which has one catalog
    placement: str | None = None


SCANS = {
    "scan_lineitem_narrow": "select count(*) from lineitem where l_quantity < 10",
    "scan_lineitem_wide": "select count(*) from lineitem where l_comment like '%fur%' and l_shipinstruct <> 'NONE'",
    "scan_orders": "select count(*) from orders where o_comment like '%special%'",
    "scan_partsupp": "select sum(ps_supplycost) from partsupp where ps_availqty > 100",
    "scan_part": "select count(*) from part where p_name like '%green%'",
}

AGGREGATES = {
    "agg_few_groups": "select l_returnflag, l_linestatus, sum(l_quantity) from lineitem "
                      "group by l_returnflag, l_linestatus",
    "agg_many_groups": "select l_orderkey, sum(l_extendedprice) from lineitem group by l_orderkey",
    "agg_mid_groups": "select l_suppkey, count(*), avg(l_discount) from lineitem group by l_suppkey",
    "agg_orders_by_customer": "select o_custkey, max(o_totalprice) from orders group by o_custkey",
    "distinct_partsupp": "select count(*) from (select distinct ps_partkey from partsupp) t",
    # wide grouping keys (strings), so that agg_byte is told apart from agg_row
    "distinct_customer_all": "select count(*) from (select distinct * from customer) t",
    "distinct_orders_wide": "select count(*) from (select distinct o_orderkey, o_clerk, o_comment from orders) t",
}

JOINS = {
    "join_orders_customer": "select count(*) from orders, customer where o_custkey = c_custkey "
                            "and c_mktsegment = 'AUTOMOBILE'",
    "join_lineitem_part": "select sum(l_quantity) from lineitem, part where l_partkey = p_partkey and p_size < 10",
    "join_lineitem_orders": "select count(*) from lineitem, orders where l_orderkey = o_orderkey "
                            "and o_orderdate < date '1993-06-01'",
    "join_partsupp_supplier": "select sum(ps_supplycost) from partsupp, supplier where ps_suppkey = s_suppkey "
                              "and s_acctbal > 0",
    "join_lineitem_orders_all": "select o_orderpriority, count(*) from lineitem, orders where l_orderkey = o_orderkey "
                                "group by o_orderpriority",
}

# The build side of a semi or left join is its right input: with only broadcast joins allowed
# these broadcast all of orders (1.5 M rows at SF 1) or part, where the joins above would
# broadcast the small side; without them the fit has never seen a large broadcast.
LARGE_BROADCASTS = {
    "semi_lineitem_orders": "select count(*) from lineitem where l_quantity > 49 and exists "
                            "(select * from orders where o_orderkey = l_orderkey)",
    "left_lineitem_part": "select count(p_size) from (select * from lineitem where l_discount = 0.1 "
                          "and l_quantity < 5) l left join part on l_partkey = p_partkey",
    "semi_partsupp_part": "select count(*) from partsupp where ps_availqty < 100 and exists "
                          "(select * from part where p_partkey = ps_partkey)",
}

OTHERS = {
    "sort_orders": "select o_orderkey, o_totalprice from orders where o_orderdate < date '1992-06-01' "
                   "order by o_totalprice desc, o_orderkey",
    "top_customers": "select c_custkey, c_acctbal from customer order by c_acctbal desc, c_custkey limit 20",
    "nested_loop_nation": "select count(*) from supplier, nation where s_acctbal > n_nationkey * 400",
    "semi_orders": "select count(*) from orders where exists (select * from lineitem where l_orderkey = o_orderkey "
                   "and l_quantity > 49)",
}


def training() -> list[Item]:
    items = [Item(name, sql) for name, sql in {**SCANS, **AGGREGATES, **OTHERS}.items()]
    for name, sql in {**JOINS, **LARGE_BROADCASTS}.items():
        for variant, settings in JOIN_VARIANTS.items():
            items.append(Item(f"{name}/{variant}", sql, settings))
    for query in all_queries():
        if query.number % 2 == 1:
            items.append(Item(query.name, query.sql))
            items.append(Item(f"{query.name}/no_broadcast", query.sql, NO_BROADCAST))
    return items


def held_back() -> list[Item]:
    items = []
    for query in all_queries():
        if query.number % 2 == 0:
            items.append(Item(query.name, query.sql))
            items.append(Item(f"{query.name}/no_broadcast", query.sql, NO_BROADCAST))
    return items
