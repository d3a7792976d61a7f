"""SQL the engines answer, answered the same through cbo; SQL the dialect rejects, rejected.

Each answer is cbo's plan run on DuckDB compared with DuckDB running the query itself (and, for
the HAVING alias rule, with SQLite where the two agree); each rejection is one line naming the
problem and its place.
"""

from __future__ import annotations

import sqlite3

import pytest

from cbo.answers import compare
from cbo.app.session import Session
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.errors import CboError
from cbo.ir.expressions import TRUE
from cbo.ir.operators import Join, walk
from cbo.sources.catalog import load_catalog


@pytest.fixture(scope="module")
def catalog(tpch_parquet_catalog):
    return load_catalog(tpch_parquet_catalog)


@pytest.fixture(scope="module")
def duckdb(catalog):
    engine = DuckDBEngine(catalog)
    yield engine
    engine.close()


_SESSIONS: dict[str, Session] = {}


def session(catalog, dialect: str = "trino") -> Session:
    key = f"{id(catalog)}-{dialect}"
    if key not in _SESSIONS:
        _SESSIONS[key] = Session(catalog, engine="duckdb", dialect=dialect)
    return _SESSIONS[key]


def assert_as_duckdb(catalog, duckdb, sql: str, dialect: str = "trino", ordered: bool = False,
                     reference: str | None = None) -> list[tuple]:
    """cbo's answer on DuckDB equals DuckDB's own answer to ``reference`` (default: ``sql``)."""
    _, rows = session(catalog, dialect).query(sql)
    _, expected, _ = duckdb.run(reference or sql)
    verdict = compare(expected, rows, ordered=ordered)
    assert verdict.matches, f"{sql}: {verdict.detail}"
    return rows


def joins_of(catalog, sql: str) -> list[Join]:
    """The joins of cbo's plan for ``sql``."""
    return [n for n in walk(session(catalog).planner.plan(sql).plan) if isinstance(n, Join)]


def error(catalog, sql: str, dialect: str = "trino") -> str:
    with pytest.raises(CboError) as caught:
        session(catalog, dialect).planner.plan(sql)
    message = str(caught.value)
    assert "\n" not in message
    return message


# -- FETCH FIRST ---------------------------------------------------------------------------------

@pytest.mark.parametrize("sql, reference", [
    ("select n_name from nation order by n_name fetch first 2 rows only",
     "select n_name from nation order by n_name limit 2"),
    ("select n_name from nation order by n_name offset 20 rows fetch first 2 rows only",
     "select n_name from nation order by n_name limit 2 offset 20"),
    ("select n_name from nation order by n_name fetch next row only",
     "select n_name from nation order by n_name limit 1"),
])
def test_fetch_first_limits_the_rows(catalog, duckdb, sql, reference):
    rows = assert_as_duckdb(catalog, duckdb, sql, ordered=True, reference=reference)
    assert len(rows) in (1, 2)


def test_fetch_forms_cbo_cannot_run_are_named(catalog):
    assert "WITH TIES is not supported" in error(catalog, "select n_name from nation order by n_name "
                                                          "fetch first 2 rows with ties")
    assert "PERCENT is not supported" in error(catalog, "select n_name from nation fetch first 10 percent rows only")
    assert "write LIMIT n" in error(catalog, "select n_name from nation fetch first 2 rows only", "spark")


# -- what the dialects reject ----------------------------------------------------------------------

@pytest.mark.parametrize("sql, dialect, expected", [
    ("select count(*) from nation a outer join region b on a.n_regionkey = b.r_regionkey", "trino",
     "line 1, column 42: OUTER JOIN needs LEFT, RIGHT or FULL before it"),
    ("select count(*) from nation where n_nationkey in (13, , 20)", "trino",
     "line 1, column 55: an item of the list is missing before this comma"),
    ("select , count(*) from nation", "duckdb", "line 1, column 8: an item of the list is missing"),
    ("select count(*) from nation group by , n_name", "trino", "line 1, column 38: an item of the list is missing"),
    ("select substring(, n_name) from nation", "trino", "an item of the list is missing"),
    ("select 'a' 'b' from nation", "trino", "line 1, column 12: two string literals in a row are not joined"),
    ("select 'a' 'b' from nation", "duckdb", "two string literals in a row are not joined without a line break"),
    ("select 'a' 'b' from nation", "postgres", "two string literals in a row are not joined without a line break"),
    ("select 'a'\n 'b' from nation", "trino", "line 2, column 2: two string literals in a row"),
    ("select count(*) from nation a, region a", "postgres",
     'line 1, column 39: table name "a" specified more than once in FROM'),
    ("select count(*) from nation, nation", "postgres", 'table name "nation" specified more than once'),
    ("select a.* from nation a, region a", "trino", "'a.*' is ambiguous: 2 relations in FROM are named 'a'"),
    ("select a.n_name from nation a, nation a", "duckdb", "column reference 'n_name' is ambiguous"),
    ("select count(*) from lineitem tablesample bernoulli (1)", "trino",
     "line 1, column 31: TABLESAMPLE is not supported"),
    ("select count(*) from lineitem tablesample system (10) repeatable (3)", "postgres", "TABLESAMPLE is not supported"),
    ("select count(*) from lineitem using sample 10%", "duckdb", "TABLESAMPLE is not supported"),
    ("select count(*) from lineitem tablesample (10 percent)", "spark", "TABLESAMPLE is not supported"),
    ("select cast(n_nationkey as double precision) % 2 from nation", "postgres",
     "line 1, column 13: PostgreSQL has no % for double precision"),
    ("select count(*) from nation a1, region a2 join nation a3 on a1.n_nationkey = a3.n_nationkey", "duckdb",
     "line 1, column 64: this ON condition reads a table listed before the comma"),
    ("select foo(n_name) from nation", "trino", "line 1, column 8: unknown function foo"),
    ("select total(n_nationkey) from nation", "trino", "unknown function total"),
    ("select group_concat(n_name) from nation", "duckdb", "function group_concat is not supported"),
])
def test_what_the_dialect_rejects_is_rejected(catalog, sql, dialect, expected):
    assert expected in error(catalog, sql, dialect)


@pytest.mark.parametrize("sql, dialect, reference", [
    # SQL joins string literals separated by a line break (PostgreSQL, DuckDB); Spark any two.
    ("select 'a'\n 'b' as x from nation", "duckdb", "select 'ab' as x from nation"),
    ("select 'a'\n 'b' as x from nation", "postgres", "select 'ab' as x from nation"),
    ("select 'a' 'b' as x from nation", "spark", "select 'ab' as x from nation"),
    # DuckDB, Trino and Spark accept a name twice in FROM; only an ambiguous reference fails.
    ("select count(*) from nation a, region a", "trino", None),
    ("select a.r_name from nation a, region a", "duckdb", None),
    # An ON after a comma that reads only the tables after the comma.
    ("select count(*) from nation a1, region a2 join nation a3 on a2.r_regionkey = a3.n_regionkey", "trino", None),
])
def test_what_the_dialect_accepts_is_answered(catalog, duckdb, sql, dialect, reference):
    assert_as_duckdb(catalog, duckdb, sql, dialect, reference=reference)


def test_a_byte_order_mark_is_not_part_of_the_statement(catalog, duckdb):
    assert_as_duckdb(catalog, duckdb, "\ufeffselect count(*) from nation", reference="select count(*) from nation")


# -- constructs from SQLite's sqllogictest corpus ----------------------------------------------------

@pytest.mark.parametrize("sql", [
    "select nullif(n_regionkey, 3), nullif(n_name, 'PERU') from nation",
    "select count(*) from nation where nullif(n_regionkey, 1) is null",
    "SELECT 4 FROM (nation AS x CROSS JOIN nation y)",
    "SELECT count(*), max(j.n_name) FROM (nation AS x CROSS JOIN region y) j",
    "select n_name, r_name from ((nation n join region r on n_regionkey = r_regionkey) "
    "join supplier on s_nationkey = n_nationkey)",
    "select z.n_name, s_name from ((nation n join region r on n_regionkey = r_regionkey) z "
    "join supplier on s_nationkey = z.n_nationkey)",
    "select count(*) from ((select 1 as a) q join nation on a = n_nationkey)",
    "select n_name from nation where 1 in (select 1)",
    "select n_name from nation where exists (select 1 where 1 = 1)",
    "select n_name from nation where not exists (select 1 where 1 = 2)",
])
def test_sqllogictest_constructs_answer_as_duckdb(catalog, duckdb, sql):
    assert assert_as_duckdb(catalog, duckdb, sql)


def _sqlite(duckdb) -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    _, rows, _ = duckdb.run("select n_nationkey, n_name, n_regionkey from nation")
    connection.execute("create table nation (n_nationkey int, n_name text, n_regionkey int)")
    connection.executemany("insert into nation values (?, ?, ?)", rows)
    return connection


@pytest.mark.parametrize("sql, sqlite_agrees", [
    # The name is an ungrouped column and a select-list alias: the alias (DuckDB's rule; SQLite
    # reads the bare column of an arbitrary row of the group instead).
    ("SELECT n_nationkey AS n_regionkey FROM nation GROUP BY n_nationkey HAVING n_regionkey > 20", False),
    ("SELECT n_nationkey + 1 AS n_regionkey FROM nation GROUP BY n_nationkey HAVING n_regionkey > 20", False),
    # A grouped column keeps its name (every engine).
    ("SELECT n_nationkey AS n_regionkey FROM nation GROUP BY n_nationkey, n_regionkey HAVING n_regionkey > 3",
     True),
    # Inside an aggregate the name is the column.
    ("SELECT n_regionkey AS n_nationkey, count(*) FROM nation GROUP BY n_regionkey HAVING max(n_nationkey) > 20",
     True),
    # An alias that is no column.
    ("SELECT n_nationkey AS k FROM nation GROUP BY n_nationkey HAVING k > 22", True),
])
def test_having_reads_a_select_alias_where_duckdb_does(catalog, duckdb, sql, sqlite_agrees):
    rows = assert_as_duckdb(catalog, duckdb, sql)
    assert rows
    if sqlite_agrees:
        expected = _sqlite(duckdb).execute(sql).fetchall()
        assert compare(expected, rows, ordered=False).matches


def test_having_with_an_ungrouped_qualified_column_stays_an_error(catalog):
    assert "must appear in GROUP BY" in error(
        catalog, "SELECT n_nationkey AS n_regionkey FROM nation GROUP BY n_nationkey HAVING nation.n_regionkey > 2")


# -- decorrelation ----------------------------------------------------------------------------------

@pytest.mark.parametrize("sql", [
    # An outer column in a grouped subquery's select list.
    "select count(*) from orders where o_orderkey in "
    "(select o_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 300)",
    "select count(*) from orders where o_orderkey in "
    "(select o_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 3000)",
    "select count(*) from orders where o_orderkey + 1 in (select o_orderkey + l_orderkey from lineitem "
    "where l_orderkey = 1)",
    "select count(*) from orders where o_totalprice > "
    "(select max(l_extendedprice) + o_orderkey from lineitem where l_orderkey = o_orderkey)",
    "select count(*) from orders where o_custkey not in "
    "(select o_custkey + c_custkey from customer where c_nationkey = 3)",
    "select count(*), sum(case when o_custkey in (select o_orderkey + c_custkey from customer "
    "where c_nationkey = 3) then 1 else 0 end) from orders",
    "select o_orderkey, (select count(*) + o_orderkey from lineitem where l_orderkey = o_orderkey "
    "and l_quantity > 45) from orders where o_orderkey < 100",
])
def test_an_outer_column_in_a_subquery_select_list(catalog, duckdb, sql):
    assert_as_duckdb(catalog, duckdb, sql)


@pytest.mark.parametrize("sql", [
    "select count(*) from lineitem l1, orders o where o.o_orderkey = l1.l_orderkey and exists "
    "(select distinct * from lineitem l2 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey)",
    "select count(*) from lineitem l1, orders o where o.o_orderkey = l1.l_orderkey and not exists "
    "(select distinct l2.l_partkey from lineitem l2 where l2.l_orderkey = l1.l_orderkey "
    "and l2.l_suppkey <> l1.l_suppkey order by 1)",
])
def test_exists_over_distinct_joins_no_product_of_the_outer_tables(catalog, duckdb, sql):
    products = [n for n in joins_of(catalog, sql) if n.condition == TRUE]
    assert not products, f"a cross join in the plan: {products[0]}"
    assert_as_duckdb(catalog, duckdb, sql)


@pytest.mark.parametrize("sql", [
    # TPC-DS q41's shape: the same correlation in every branch of an OR.
    "select count(*) from part p1 where p_size < 10 and (select count(*) from part "
    "where (p_brand = p1.p_brand and p_container = 'SM BOX') "
    "or (p_brand = p1.p_brand and p_size > 45)) > 0",
    # ... and in a branch of a nested OR with a NULL-producing rest.
    "select s_suppkey, (select count(*) from nation where (n_nationkey = s_nationkey and n_regionkey = 1) "
    "or (n_nationkey = s_nationkey and (n_comment is null or n_name like 'A%'))) from supplier "
    "where s_suppkey < 60",
])
def test_a_correlation_shared_by_every_or_branch_is_a_grouping_key(catalog, duckdb, sql):
    # Factored out of the OR, the correlation is an equality the subquery's aggregate groups
    # by; left inside, the whole OR needs the outer rows' distinct values as a domain, joined
    # back with IS NOT DISTINCT FROM.
    domain_joins = [n for n in joins_of(catalog, sql) if "is_not_distinct_from" in repr(n.condition)]
    assert not domain_joins, f"decorrelated through a domain: {domain_joins[0].condition}"
    assert_as_duckdb(catalog, duckdb, sql)


_NULLY = "(select case when n_nationkey % 5 = 0 then null else n_nationkey end from nation where n_regionkey < 3)"


@pytest.mark.parametrize("sql, two_valued", [
    # Reached through AND/OR only: a NULL from the IN acts as FALSE, so the mark is two-valued.
    (f"select count(*) from supplier where s_nationkey in {_NULLY} or s_acctbal < 0", True),
    (f"select count(*) from supplier where (s_nationkey in {_NULLY} and s_acctbal > 0) or s_suppkey < 5", True),
    ("select count(*) from supplier where s_acctbal < 0 or s_nationkey in "
     "(select n_nationkey from nation where n_name > s_name and n_regionkey < 3)", True),
    # A value computed from the outer query's columns keeps the three-valued form.
    ("select count(*) from supplier where s_acctbal < 0 or s_nationkey in "
     "(select case when n_regionkey = s_nationkey % 5 then null else n_nationkey end from nation "
     "where n_name > s_name)", False),
    # Under NOT or IS NULL, NULL and FALSE differ: the three-valued mark stays.
    (f"select count(*) from supplier where not (s_nationkey in {_NULLY}) or s_acctbal < 0", False),
    (f"select count(*) from supplier where (s_nationkey in {_NULLY}) is null or s_acctbal < 0", False),
    (f"select count(*) from supplier where coalesce(s_nationkey in {_NULLY}, true) or s_acctbal < 0", False),
])
def test_an_in_reached_through_and_or_is_a_two_valued_mark(catalog, duckdb, sql, two_valued):
    marks = [n for n in joins_of(catalog, sql) if n.kind == "mark"]
    assert marks
    assert all((n.mark_predicate == TRUE) == two_valued for n in marks), [n.mark_predicate for n in marks]
    assert_as_duckdb(catalog, duckdb, sql)


# -- division ---------------------------------------------------------------------------------------
# (cbo.frontend.division: integer division in Trino, Presto and PostgreSQL; a zero divisor an error
# except IEEE doubles in Trino and Presto and every division in DuckDB.)

DIVISIONS = "select n_nationkey / 7, -n_nationkey / 7, n_nationkey % 7, 30 / 63 - 82 from nation"


@pytest.mark.parametrize("dialect, reference", [
    ("trino", "select n_nationkey // 7, (-n_nationkey) // 7, n_nationkey % 7, 30 // 63 - 82 from nation"),
    ("presto", "select n_nationkey // 7, (-n_nationkey) // 7, n_nationkey % 7, 30 // 63 - 82 from nation"),
    ("postgres", "select n_nationkey // 7, (-n_nationkey) // 7, n_nationkey % 7, 30 // 63 - 82 from nation"),
    ("duckdb", None),
    ("spark", None),
])
def test_integer_division_follows_the_dialect(catalog, duckdb, dialect, reference):
    rows = assert_as_duckdb(catalog, duckdb, DIVISIONS, dialect, reference=reference)
    assert {r[3] for r in rows} == ({-82} if reference else {30 / 63 - 82})


@pytest.mark.parametrize("sql, dialects", [
    ("select n_nationkey / (n_nationkey - 3) from nation", ("trino", "postgres", "spark")),
    ("select 1.5 / (n_regionkey - 2) from nation", ("trino", "presto", "postgres", "spark")),
    ("select cast(n_nationkey as double) / (n_regionkey - 2) from nation", ("postgres", "spark")),
    ("select cast(n_nationkey as double) % (n_regionkey - 2) from nation", ("spark",)),
    ("select n_nationkey % (n_regionkey - 2) from nation", ("trino", "postgres", "spark", "duckdb")),
])
def test_a_zero_divisor_is_an_error_where_the_dialect_says_so(catalog, sql, dialects):
    for dialect in dialects:
        with pytest.raises(CboError, match="(?i)division by zero"):
            session(catalog, dialect).query(sql)


@pytest.mark.parametrize("sql, dialects", [
    ("select n_nationkey / (n_nationkey - 3), 0 / (n_nationkey - 3) from nation", ("duckdb",)),
    ("select 1.5 / (n_regionkey - 2) from nation", ("duckdb",)),
    ("select cast(n_nationkey as double) / (n_regionkey - 2), cast(n_nationkey as double) % (n_regionkey - 2) "
     "from nation", ("trino", "presto", "duckdb")),
])
def test_a_zero_divisor_gives_infinity_or_nan_where_the_dialect_says_so(catalog, duckdb, sql, dialects):
    for dialect in dialects:
        rows = assert_as_duckdb(catalog, duckdb, sql, dialect)
        assert any(v != v or v in (float("inf"), float("-inf")) for row in rows for v in row)


# -- column alias lists, star modifiers, row constructors -----------------------------------------

@pytest.mark.parametrize("sql", [
    "select a, n_name from (select n_nationkey, n_name from nation) t(a)",
    "with t(a) as (select n_nationkey, n_name from nation) select a, n_name from t",
    "select a, r_name from region r(a)",
    "select b, a from region r(a, b, c) where c like '%a%'",
    "select t.a from (select n_nationkey, n_regionkey from nation) t(a) where t.n_regionkey = 1",
])
@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])
def test_fewer_column_aliases_name_the_rest_by_their_own_names(catalog, duckdb, sql, dialect):
    assert assert_as_duckdb(catalog, duckdb, sql, dialect=dialect)


def test_a_table_alias_list_renames_the_table_columns(catalog, duckdb):
    # The list was once ignored: r_name stayed readable under its own name.
    assert_as_duckdb(catalog, duckdb, "select a, b from region r(a, b, c) order by a", ordered=True)
    assert "unknown column 'r_name'" in error(catalog, "select r_name from region r(a, b, c)")


@pytest.mark.parametrize("dialect", ["trino", "presto", "spark"])
def test_fewer_column_aliases_are_refused_where_the_dialect_requires_all(catalog, dialect):
    assert error(catalog, "select a from (select n_nationkey, n_name from nation) t(a)", dialect) == \
        "line 1, column 56: t has 2 columns but 1 column aliases"
    assert "r has 3 columns but 1 column aliases" in error(catalog, "select a from region r(a)", dialect)
    assert "CTE t has 2 columns but 1 column aliases" in error(
        catalog, "with t(a) as (select n_nationkey, n_name from nation) select a from t", dialect)


def test_more_column_aliases_than_columns_are_refused_everywhere(catalog):
    assert "t has 2 columns but 3 column aliases" in error(
        catalog, "select a from (select n_nationkey, n_name from nation) t(a, b, c)", "duckdb")


@pytest.mark.parametrize("sql", [
    "select * exclude (n_comment, n_regionkey) from nation",
    "select n.* exclude (n_comment) from nation n join region r on n.n_regionkey = r.r_regionkey",
    "select * replace (n_nationkey + 100 as n_nationkey, upper(n_name) as n_name) from nation",
    "select * rename (n_name as name) from nation where n_regionkey = 2",
    "select * exclude (r_comment) from region, nation where r_regionkey = n_regionkey",
])
def test_star_modifiers_are_duckdbs(catalog, duckdb, sql):
    # They were once ignored, and the star gave every column: a wrong answer.
    names, _ = session(catalog, "duckdb").query(sql)
    expected_names, _, _ = duckdb.run(sql)
    assert [n.lower() for n in names] == [n.lower() for n in expected_names]
    assert_as_duckdb(catalog, duckdb, sql, dialect="duckdb")


def test_a_star_modifier_naming_no_column_is_refused(catalog):
    assert "column 'nope' in EXCLUDE is not a column of *" in error(catalog, "select * exclude (nope) from nation",
                                                                     "duckdb")


ROWS_WITH_NULLS = "(values (1, null), (1, 2), (null, 2), (3, 4), (null, null), (2, 5)) t(x, y)"
ROW_PREDICATES = ["(x, y) = (1, 2)", "(x, y) <> (1, 2)", "(x, y) = (y, x)", "(x, y) in ((1, 2), (3, 4))",
                  "(x, y) not in ((1, 2), (3, 4))", "(x, y) in ((1, null))", "(x, y) = (1, null)"]


@pytest.mark.parametrize("predicate", ROW_PREDICATES)
def test_row_comparisons_in_duckdbs_dialect_are_duckdbs(catalog, duckdb, predicate):
    """DuckDB's rows are structs: a NULL field is equal to a NULL field, so no comparison is NULL."""
    sql = f"select x, y, {predicate}, not ({predicate}) from {ROWS_WITH_NULLS}"
    assert_as_duckdb(catalog, duckdb, sql, dialect="duckdb")
    assert_as_duckdb(catalog, duckdb, f"select count(*) from {ROWS_WITH_NULLS} where not ({predicate})",
                     dialect="duckdb")


@pytest.mark.parametrize("predicate", ROW_PREDICATES)
def test_row_comparisons_in_trinos_dialect_are_the_standards(catalog, predicate):
    """SQL's rule (Trino, PostgreSQL; SQLite as the reference): a conjunction in three-valued
    logic, NULL where no field differs and one is NULL."""
    _, rows = session(catalog).query(f"select x, y, {predicate} from {ROWS_WITH_NULLS}")
    data = "(1, null), (1, 2), (null, 2), (3, 4), (null, null), (2, 5)"
    with sqlite3.connect(":memory:") as sqlite:
        expected = sqlite.execute(f"with t(x, y) as (values {data}) select x, y, {predicate} from t").fetchall()
    as_bool = [(x, y, None if v is None else bool(v)) for x, y, v in expected]
    assert sorted(rows, key=repr) == sorted(as_bool, key=repr)
    assert any(v is None for _, _, v in as_bool) or predicate in ("(x, y) = (y, x)",)


def test_row_comparisons_cbo_does_not_run_are_named(catalog):
    assert "ordering row constructors" in error(catalog, "select 1 from nation where (n_nationkey, 1) < (2, 3)")
    assert "a row constructor IN a subquery" in error(
        catalog, "select 1 from nation where (n_nationkey, n_regionkey) in (select r_regionkey, 1 from region)")
    assert "rows of 2 and 3 fields cannot be compared" in error(catalog,
                                                                 "select 1 from nation where (1, 2) = (1, 2, 3)")
    assert "row constructor" in error(catalog, "select (n_nationkey, 1) from nation")


def test_decorrelation_refusals_name_the_subquery_place(catalog):
    sql = ("select n_name from nation\nwhere exists (select 1 from region\n"
           "  left join supplier on s_nationkey = n_nationkey)")
    message = error(catalog, sql)
    assert message.startswith("line 2, column 29: a left join in a subquery whose ON condition reads")
    assert error(catalog, "select count(*) from nation join region on n_regionkey = r_regionkey and "
                          "exists (select 1 from supplier where s_nationkey = n_nationkey)") == \
        "line 1, column 96: a subquery in the ON condition of an inner join is not supported: move it to WHERE"
    assert "an anti join" not in error(catalog, "select n_name from nation where exists (select 1 from region where "
                                                "not exists (select 1 from supplier where s_nationkey = n_nationkey "
                                                "and s_suppkey = r_regionkey))")
