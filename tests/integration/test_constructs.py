"""SQL constructs beyond the 22 TPC-H queries, through cbo on Spark and on DuckDB.

Each query runs through cbo's plan on the federated placement (PostgreSQL over JDBC plus
Parquet) on Spark, and rendered as SQL on DuckDB; both must give DuckDB's answer on the
original SQL.
"""

from __future__ import annotations

import pytest

from cbo.answers import compare, is_ordered
from cbo.sources.catalog import load_catalog
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.app.session import Session

QUERIES = {
    "union_all": "select n_name from nation where n_regionkey = 1 union all select r_name from region",
    "union": "select n_regionkey from nation union select r_regionkey from region",
    "intersect": "select n_regionkey from nation intersect select r_regionkey from region where r_regionkey < 3",
    "except": "select n_nationkey from nation except select r_regionkey from region",
    "values": "select v.x, v.y from (values (1, 'a'), (2, null), (3, 'c')) as v(x, y) where v.x > 1",
    "cte_twice": "with big as (select c_custkey, c_acctbal from customer where c_acctbal > 9000) "
                 "select count(*) from big b1 join big b2 on b1.c_custkey = b2.c_custkey",
    "limit_offset": "select o_orderkey from orders order by o_totalprice desc, o_orderkey limit 5 offset 3",
    "order_by_hidden": "select c_name from customer order by c_acctbal desc, c_custkey limit 4",
    "using_join": "with a as (select n_nationkey as k, n_name from nation), b as (select s_nationkey as k, s_name "
                  "from supplier) select k, count(*) from a join b using (k) group by k",
    "full_using": "with a as (select n_nationkey as k from nation where n_nationkey < 10), b as (select r_regionkey "
                  "as k from region) select k from a full join b using (k)",
    "right_join": "select r_name, n_name from nation right join region on n_regionkey = r_regionkey "
                  "and n_name like 'A%'",
    "full_join": "select c_custkey, o_orderkey from (select * from customer where c_custkey < 20) c "
                 "full join (select * from orders where o_orderkey < 100) o on c_custkey = o_custkey",
    "left_join_is_null": "select count(*) from customer left join orders on c_custkey = o_custkey "
                         "where o_orderkey is null",
    "case_coalesce_cast": "select case when s_acctbal > 5000 then 'rich' when s_acctbal > 0 then 'ok' else 'poor' end, "
                          "count(*), cast(sum(s_acctbal) as double), coalesce(max(s_comment), 'none') "
                          "from supplier group by 1",
    "between_in_like": "select count(*) from part where p_size between 10 and 20 and p_brand in ('Brand#12', "
                       "'Brand#23') and p_type not like '%COPPER'",
    "extract_substring": "select extract(year from o_orderdate) as y, substring(o_orderpriority, 1, 1) as p, "
                         "count(*) from orders group by 1, 2",
    "date_arithmetic": "select count(*) from lineitem where l_shipdate between date '1995-01-01' "
                       "and date '1995-01-01' + interval '2' month",
    "count_distinct": "select l_returnflag, count(distinct l_suppkey), count(*) from lineitem group by l_returnflag",
    "having_scalar": "select n_regionkey, count(*) from nation group by n_regionkey "
                     "having count(*) >= (select min(c) from (select count(*) as c from nation group by n_regionkey) t)",
    "in_in_select": "select n_name, n_nationkey in (select s_nationkey from supplier where s_acctbal > 9000) as rich "
                    "from nation",
    "exists_or": "select count(*) from customer where c_acctbal < 0 or exists "
                 "(select * from orders where o_custkey = c_custkey and o_totalprice > 400000)",
    # IN and EXISTS marks over Parquet tables, so that Spark computes them (not PostgreSQL): the
    # mark's three values where it is visible (SELECT), NOT over it, and correlated groups that
    # are empty, hold a NULL, or hold the value
    "in_select_nulls": "select p_partkey, p_size in (select case when s_suppkey % 3 = 0 then null else s_suppkey end "
                       "from supplier where s_suppkey < 20) as m from part where p_partkey < 40",
    "in_select_empty": "select p_partkey, p_size in (select s_suppkey from supplier where s_suppkey < 0) as m "
                       "from part where p_partkey < 10",
    "not_in_or_nulls": "select count(*) from part where p_partkey < 200 and (p_size > 45 or not (p_size in "
                       "(select case when s_suppkey = 7 then null else s_suppkey end from supplier "
                       "where s_suppkey < 20)))",
    "in_or": "select count(*) from part where p_size > 45 or p_size in (select s_suppkey from supplier "
             "where s_suppkey < 5)",
    "correlated_in_select": "select p_partkey, p_size in (select case when ps_availqty < 1000 then null "
                            "else ps_suppkey % 50 end from partsupp where ps_partkey = p_partkey "
                            "and ps_availqty < 5000) as m from part where p_partkey < 60",
    "exists_select": "select p_partkey, exists (select * from partsupp where ps_partkey = p_partkey "
                     "and ps_availqty > 9900) as e from part where p_partkey < 60",
    "exists_uncorrelated_or": "select count(*) from part where p_size = 1 or exists "
                              "(select * from supplier where s_name = 'nobody')",
    "not_in_nullable": "select count(*) from nation where n_nationkey not in "
                       "(select case when r_regionkey = 2 then null else r_regionkey end from region)",
    "scalar_in_select": "select c_custkey, (select count(*) from orders where o_custkey = c_custkey) as n "
                        "from customer where c_custkey < 10",
    "all_any": "select count(*) from part where p_retailprice > all (select p_retailprice from part "
               "where p_size = 1) or p_retailprice = any (select 901.0)",
    "non_equi_correlation": "select count(*) from supplier s where s_acctbal > "
                            "(select avg(c_acctbal) from customer where c_nationkey < s.s_nationkey)",
    "select_distinct": "select distinct o_orderstatus, o_orderpriority from orders",
    "no_from": "select 1 + 2 as three, 'x' as letter",
    "cross_join": "select count(*) from region cross join nation",
    # customer is in PostgreSQL: the moments are pushed there (numeric argument, DOUBLE result)
    "moments_pushed": "select c_nationkey, stddev_samp(c_acctbal), var_pop(c_acctbal), count(*) from customer "
                      "where c_custkey < 40 group by c_nationkey",
    "moments_on_spark": "select l_linestatus, stddev_pop(l_quantity), variance(l_discount) from lineitem "
                        "where l_orderkey < 10 group by l_linestatus",
}


@pytest.fixture(scope="module")
def runners(spark, tpch_catalogs):
    catalog = load_catalog(tpch_catalogs["federated"])
    reference = DuckDBEngine(load_catalog(tpch_catalogs["all-spark"]))
    return {"spark": Session(catalog, engine="spark"), "duckdb": Session(catalog, engine="duckdb")}, reference


@pytest.mark.parametrize("engine", ["spark", "duckdb"])
@pytest.mark.parametrize("name", list(QUERIES))
def test_construct_matches_duckdb(name, engine, runners):
    sessions, reference = runners
    sql = QUERIES[name]
    _, expected, _ = reference.run(sql)
    _, rows = sessions[engine].query(sql)
    verdict = compare(expected, rows, ordered=is_ordered(sql))
    assert verdict.matches, f"{name} on {engine}: {verdict.detail}"


@pytest.mark.parametrize("engine", ["spark", "duckdb"])
def test_a_scalar_subquery_with_two_rows_fails_with_a_clear_error(engine, runners):
    from cbo.errors import CboError

    sessions, _ = runners
    with pytest.raises(CboError, match=f"query failed on {engine}: .*scalar subquery returned more than one row"):
        sessions[engine].query("select n_name, (select r_name from region where r_regionkey > n_regionkey) from nation")
