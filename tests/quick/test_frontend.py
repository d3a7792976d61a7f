"""The frontend: binding TPC-H, plan properties, and errors that name what and where."""

from __future__ import annotations

import pytest

from benchmarks.tpch.queries import all_queries
from cbo.sources.catalog import load_catalog
from cbo.errors import CboError
from cbo.ir.expressions import conjuncts
from cbo.ir.operators import Filter, Join, Scan, equated_columns, walk
from cbo.planner import Planner


@pytest.fixture(scope="module")
def planner(tpch_parquet_catalog):
    return Planner(load_catalog(tpch_parquet_catalog))


def error(planner, sql: str) -> str:
    with pytest.raises(CboError) as caught:
        planner.plan(sql)
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("query", all_queries(), ids=lambda q: q.name)
def test_every_tpch_query_plans_with_predicates_pushed_into_joins(planner, query):
    planned = planner.plan(query.sql)
    for node in walk(planned.plan):
        for expr in node.expressions():
            assert "SUBQUERY" not in str(expr)
        if isinstance(node, Filter) and isinstance(node.input, Join):
            join = node.input
            for conjunct in conjuncts(node.predicate):
                pair = equated_columns(conjunct)
                assert not (pair and {pair[0], pair[1]} & set(join.left.output)
                            and {pair[0], pair[1]} & set(join.right.output) and join.kind == "inner"), \
                    f"{query.name}: join predicate {conjunct} left above the join"


def test_plans_are_values(planner):
    sql = all_queries()[2].sql
    first, second = planner.plan(sql).plan, planner.plan(sql).plan
    assert first == second and hash(first) == hash(second)


def test_keys_and_not_null_come_from_the_catalog(planner):
    plan = planner.plan("select o_orderkey, o_custkey from orders").plan
    scan = next(n for n in walk(plan) if isinstance(n, Scan))
    key = next(c for c in scan.columns if c.name == "o_orderkey")
    assert frozenset({key}) in scan.unique_keys
    assert key in plan.not_null
    grouped = planner.plan("select o_custkey, count(*) from orders group by o_custkey").plan
    assert any(len(k) == 1 and next(iter(k)).name == "o_custkey" for k in grouped.unique_keys)


@pytest.mark.parametrize("sql, expected", [
    ("select x from lineitem", "line 1, column 8: unknown column 'x'"),
    ("select * from lineitm", "line 1, column 15: unknown table 'lineitm' (did you mean 'lineitem'?)"),
    ("select l_orderkey from lineitem where orderkey = 1",
     "line 1, column 39: unknown column 'orderkey' (did you mean 'l_orderkey'?)"),
    ("select l.x from lineitem l", "unknown column 'l.x'"),
    ("select z.l_orderkey from lineitem l", "unknown table or alias 'z'"),
    ("select l_partkey from lineitem a join lineitem b on a.l_orderkey = b.l_orderkey",
     "column reference 'l_partkey' is ambiguous: it matches a.l_partkey, b.l_partkey"),
    ("select r_name from region group by r_regionkey",
     "column 'r_name' must appear in GROUP BY or be used in an aggregate"),
    ("select r_name + 1 from region", "operator + cannot combine varchar and integer"),
    ("select r_name from region where sum(r_regionkey) > 1", "line 1, column 33: aggregate SUM(r_regionkey) is not allowed in WHERE"),
    ("select r_name from region where r_regionkey = 'x'", "line 1, column 33: cannot compare bigint with varchar"),
    ("select r_name from region where r_regionkey in (select n_nationkey, n_name from nation)",
     "subquery must return one column, it returns 2"),
    ("select r_name from region where rank() over (order by r_name) = 1",
     "line 1, column 55: window functions are not allowed in WHERE"),
    ("with recursive r as (select 1) select * from r", "recursive CTEs"),
    ("select r_name from region order by 3", "ORDER BY position 3 is not in the select list"),
    ("select from where", "syntax error: line 1, column 13"),
    ("insert into region values (1, 'x', 'y')", "only queries (SELECT ...) are supported"),
])
def test_errors_name_the_problem_and_place(planner, sql, expected):
    assert expected in error(planner, sql)


def test_correlation_in_an_unsupported_place_is_named(planner):
    message = error(planner, "select r_name from region where r_regionkey = "
                             "(select n_nationkey from nation where n_regionkey = r_regionkey limit 1)")
    assert "LIMIT/OFFSET in a correlated subquery is not supported" in message


@pytest.mark.parametrize("sql, expected", [
    # sqlglot's own words were "Required keyword: 'this' missing for <class '...Where'>".
    ("select n_name from nation where", "syntax error: line 1, column 27: WHERE needs a condition"),
    ("select n_name from nation having", "line 1, column 27: HAVING needs a condition"),
    ("select n_name from nation order by", "line 1, column 27: ORDER BY needs at least one expression"),
    ("select n_name from nation where n_nationkey = 1 and", "line 1, column 49: AND needs an operand after it"),
    ("select n_name from nation limit", "line 1, column 27: LIMIT needs a number"),
])
def test_incomplete_clauses_say_what_is_missing_in_sql_terms(planner, sql, expected):
    message = error(planner, sql)
    assert expected in message
    assert "Required keyword" not in message and "sqlglot" not in message


@pytest.mark.parametrize("sql, expected", [
    # sqlglot accepted both and the query answered 25 rows.
    ("select n_name, from nation group",
     "syntax error: line 1, column 14: a comma before FROM: an item of the list is missing"),
    ("select n_name, from nation", "line 1, column 14: a comma before FROM"),
    ("select n_name\nfrom nation group", "syntax error: line 2, column 13: GROUP is a reserved word, not an alias: "
                                          "GROUP BY needs BY and its columns"),
    ("select n_name from nation n order", "Invalid expression"),
    ("select n_name from nation order", "line 1, column 27: ORDER is a reserved word, not an alias"),
    ("select n_name from nation group by", "line 1, column 27: GROUP BY needs at least one column"),
    ("select n_regionkey, count(*) from nation group by n_regionkey, order by 1", "a comma before ORDER BY"),
    ("select from nation", "line 1, column 1: SELECT needs at least one column"),
])
def test_trailing_commas_and_dangling_clause_words_are_rejected(planner, sql, expected):
    assert expected in error(planner, sql)


def test_clause_words_stay_usable_as_quoted_names_and_duckdb_keeps_its_trailing_comma(tpch_parquet_catalog):
    planner = Planner(load_catalog(tpch_parquet_catalog))
    assert planner.plan('select n_name as "group" from nation "order"').names == ("group",)
    duckdb = Planner(load_catalog(tpch_parquet_catalog), dialect="duckdb")
    assert duckdb.plan("select n_name, from nation").names == ("n_name",)  # DuckDB's own SQL allows it


def test_integer_arithmetic_on_constants_is_folded_in_64_bits(planner):
    """The engines compute INTEGER op INTEGER in 32 bits and raise on overflow wherever a plan
    evaluates it; folded once by the binder, a constant past 32 bits is a BIGINT, and one past
    64 bits a one-line error naming the expression."""
    from cbo.ir.expressions import Constant
    from cbo.ir.operators import walk as walk_plan

    plan = planner.plan("select n_name from nation where n_nationkey < 2147483647 * 2 - 1").plan
    filters = [node for node in walk_plan(plan) if isinstance(node, Filter)]
    assert filters and any(isinstance(arg, Constant) and arg.value == 4294967293
                           for f in filters for c in conjuncts(f.predicate) for arg in c.args)
    with pytest.raises(CboError, match=r"integer overflow: 9223372036854775807 \+ 1 does not fit in a BIGINT"):
        planner.plan("select n_name from nation where n_nationkey < 9223372036854775807 + 1")
