"""SQL constructs TPC-DS needs, through cbo's plan on DuckDB against DuckDB on the original SQL.

CTEs seen from every nested scope, the STDDEV / VARIANCE family and date +/- integer. Each
query is planned by cbo, rendered as DuckDB SQL and run by DuckDB (the engine cbo's sessions
use); the answer must equal DuckDB's on the original text. The data is TPC-H SF 0.01 plus small
VALUES tables with NULLs and single-row groups. Forms cbo does not take fail with one line
naming the problem and its place.
"""

from __future__ import annotations

import pytest

from cbo.answers import compare, is_ordered
from cbo.app.session import Session
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.errors import CboError
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog


@pytest.fixture(scope="module")
def engines(tpch_parquet_catalog):
    catalog = load_catalog(tpch_parquet_catalog)
    reference = DuckDBEngine(catalog)
    yield {dialect: Session(catalog, engine="duckdb", dialect=dialect) for dialect in ("trino", "duckdb")}, reference
    reference.close()


def check(engines, sql: str, dialect: str = "trino") -> list:
    sessions, reference = engines
    _, expected, _ = reference.run(sql)
    _, rows = sessions[dialect].query(sql)
    verdict = compare(expected, rows, ordered=is_ordered(sql, dialect))
    assert verdict.matches, f"{verdict.detail}\n{sql}"
    return rows


def refused(catalog, sql: str, dialect: str = "trino") -> str:
    with pytest.raises(CboError) as caught:
        Planner(load_catalog(catalog), dialect=dialect).plan(sql)
    message = str(caught.value)
    assert "\n" not in message
    return message


CTE_SCOPES = {
    # the example: a CTE read from a derived table
    "derived_table": "with a as (select n_nationkey x from nation) select count(*) from (select * from a) t",
    "derived_in_derived": "with a as (select n_nationkey x, n_regionkey r from nation) "
                          "select r, c from (select r, count(*) c from (select * from a where x > 3) t1 group by r) t2",
    "set_op_in_derived": "with a as (select n_nationkey x from nation where n_regionkey = 1), "
                         "b as (select r_regionkey x from region) "
                         "select count(*), sum(x) from (select x from a union all select x from b union all "
                         "select x from a) t",
    "scalar_subquery": "with a as (select n_nationkey x, n_regionkey r from nation) "
                       "select r_name, (select count(*) from a where a.r = r_regionkey) from region",
    "in_subquery_in_derived": "with a as (select n_nationkey x from nation where n_nationkey < 5) "
                              "select count(*) from (select * from nation where n_nationkey in (select x from a)) t",
    "exists_in_derived": "with a as (select n_regionkey r from nation where n_nationkey < 5) "
                         "select count(*) from (select * from region where exists (select 1 from a where a.r = "
                         "r_regionkey)) t",
    "chained": "with a as (select n_nationkey x, n_regionkey r from nation), b as (select r, count(*) c from a "
               "group by r), c as (select * from (select r, c from b) t where c > 1) select * from c order by r",
    "many_references": "with a as (select n_nationkey x, n_regionkey r from nation) "
                       "select count(*) from a a1 join a a2 on a1.r = a2.r join (select * from a) a3 on a3.x = a1.x "
                       "where a1.x in (select x from a where r < 3)",
    "inner_with_shadows": "with a as (select 1 as v) select * from (with a as (select 2 as v) select v from a) t",
    "inner_with_sees_outer": "with a as (select n_nationkey x from nation) "
                             "select count(*) from (with b as (select x from a where x > 2) select * from b) t",
    "cte_reads_outer_cte_in_subquery": "with a as (select n_nationkey x from nation), "
                                       "b as (select count(*) n from (select x from a) t) select n from b",
}


@pytest.mark.parametrize("name", list(CTE_SCOPES))
def test_cte_is_visible_in_every_nested_scope(engines, name):
    assert check(engines, CTE_SCOPES[name])


def test_a_cte_defined_twice_in_one_with_is_refused(tpch_parquet_catalog):
    message = refused(tpch_parquet_catalog, "with a as (select 1 x), a as (select 2 x) select * from a")
    assert message.startswith("line 1, column") and "CTE 'a' is defined twice" in message


def test_a_derived_table_does_not_see_its_sibling_from_items(tpch_parquet_catalog):
    # not LATERAL: the subquery cannot read the table beside it in FROM
    message = refused(tpch_parquet_catalog, "select * from nation, (select n_name from region) t")
    assert "unknown column 'n_name'" in message


# Groups of several values, of one value (the sample forms are NULL), of only NULLs and of
# NULLs beside one value; decimal, integer and double arguments.
MOMENT_DATA = ("with t(g, x, d, i) as (values (1, 1.5, 1.5e0, 1), (1, 2.25, 2.25e0, 4), (1, null, null, null), "
               "(1, 7.0, 7.0e0, 9), (2, 3.0, 3.0e0, 3), (3, null, null, null), (4, null, null, null), "
               "(4, 5.5, 5.5e0, 6), (5, -2.0, -2e0, -2), (5, -2.0, -2e0, -2)) ")
MOMENT_FUNCTIONS = ("stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop")


@pytest.mark.parametrize("function", MOMENT_FUNCTIONS)
@pytest.mark.parametrize("argument", ["x", "d", "i"])
def test_moments_per_group_with_nulls_and_single_rows(engines, function, argument):
    rows = check(engines, MOMENT_DATA + f"select g, {function}({argument}) from t group by g order by g",
                 dialect="duckdb")
    by_group = dict(rows)
    assert by_group[3] is None and by_group[5] == 0.0
    assert (by_group[2] is None) == ("pop" not in function)


@pytest.mark.parametrize("function", MOMENT_FUNCTIONS)
def test_moments_without_grouping_and_over_no_rows(engines, function):
    check(engines, MOMENT_DATA + f"select {function}(x), {function}(distinct i), count(*) from t", dialect="duckdb")
    rows = check(engines, MOMENT_DATA + f"select {function}(x) from t where g > 10", dialect="duckdb")
    assert rows == [(None,)]


def test_moments_over_tables_in_expressions_and_having(engines):
    check(engines, "select l_returnflag, stddev_samp(l_quantity), var_pop(l_extendedprice * (1 - l_discount)), "
                   "stddev_pop(l_tax) / avg(l_tax) from lineitem group by l_returnflag "
                   "having variance(l_quantity) > 10 order by 1")


def test_moments_need_a_number(tpch_parquet_catalog):
    message = refused(tpch_parquet_catalog, "select stddev(n_name) from nation")
    assert message.startswith("line 1, column") and "stddev_samp needs a number, got varchar" in message


DATES = ("with t(d, n) as (values (date '2000-02-27', 1), (date '2000-02-28', 2), (date '1999-12-31', null), "
         "(null, 3), (date '2000-03-01', -1)) ")


@pytest.mark.parametrize("expression", [
    "d + 5", "5 + d", "d - 3", "d + n", "d - n", "n + d", "d + (n * 400)",
    "date '2000-02-28' + 1", "date '2000-03-01' - 1", "d + null", "date_add(d, n)", "date_add(d, interval 2 day)",
])
def test_date_plus_integer_adds_days(engines, expression):
    rows = check(engines, DATES + f"select d, n, {expression} from t order by 1, 2", dialect="duckdb")
    assert any(row[2] is not None for row in rows) != ("null" in expression)


def test_date_plus_integer_filters_and_joins(engines):
    check(engines, "select count(*) from orders o join lineitem l on l_orderkey = o_orderkey "
                   "where l_shipdate > o_orderdate + 100 and o_orderdate - 10 < date '1995-01-01'", dialect="duckdb")


@pytest.mark.parametrize("dialect", ["trino", "presto"])
def test_date_plus_integer_is_refused_where_the_dialect_has_no_such_operator(tpch_parquet_catalog, dialect):
    message = refused(tpch_parquet_catalog, "select o_orderdate + 5 from orders", dialect)
    assert message.startswith("line 1, column") and f"date + integer is not {dialect} SQL" in message
    assert "INTERVAL" in refused(tpch_parquet_catalog, "select o_orderdate - o_custkey from orders", dialect)


def test_date_add_by_a_unit_other_than_days_is_refused(tpch_parquet_catalog):
    message = refused(tpch_parquet_catalog, "select date_add('month', 1, o_orderdate) from orders")
    assert "date_add by month is not supported" in message
