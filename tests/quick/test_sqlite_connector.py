"""The SQLite connector without Spark: catalogs, loading, metadata, statistics, and the SQL cbo
pushes, run by SQLite itself (Python's ``sqlite3``, the library the JDBC driver uses too) and
compared with DuckDB's answer to the same subplan.

Through Spark's JDBC reader (the driver's URL settings, typed reads, whole TPC-H queries):
``tests/integration/test_sqlite_source.py``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import sqlite3
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlglot

from cbo.answers import compare
from cbo.catalog_types import ForeignKey, TableKeys
from cbo.connectors import SQLITE, JoinOrder, by_subprotocol
from cbo.connectors.sqlite import LocalSQLite, cbo_type, load_parquet_database, loaded_manifest
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.errors import CatalogError, CboError, SourceUnreachable
from cbo.estimate import Estimator
from cbo.exec.remote import RemoteQueries
from cbo.ir.operators import Limit
from cbo.planner import Planner
from cbo.settings import OptimizerSettings
from cbo.sources.catalog import load_catalog, parse_catalog
from cbo.sources.metadata import with_database_keys
from cbo.sources.schema import SchemaProvider
from cbo.sources.statistics import fingerprint
from cbo.sqlgen import name_of, to_sql
from cbo.workloads import tpch

# Values that break naive quoting or SQLite's defaults: case (LIKE ignores it by default),
# quotes, LIKE's wildcards, a backslash, unicode, trailing spaces, the empty string beside NULL.
AWKWARD = ["abc", "ABC ", "Abc", "it's", "100%_done", "back\\slash", "ünï©ødé 🙂", "", None, "abc%"]
TPCH_IN_SQLITE = ("region", "nation", "supplier", "customer", "orders", "lineitem", "part", "partsupp")


def awkward_table() -> pa.Table:
    n = len(AWKWARD)
    return pa.table({
        "k": pa.array(range(n), pa.int64()),
        "s": pa.array(AWKWARD, pa.string()),
        "d": pa.array([dt.date(1995, 1, 1) + dt.timedelta(days=40 * i) if i % 4 else None for i in range(n)],
                      pa.date32()),
        "p": pa.array([decimal.Decimal(i * 125) / 100 - 5 if i % 5 else None for i in range(n)], pa.decimal128(15, 2)),
        "b": pa.array([None if i % 3 == 0 else i % 2 == 0 for i in range(n)], pa.bool_()),
    })


@pytest.fixture(scope="module")
def lite(tmp_path_factory, tpch_parquet_catalog) -> Path:
    """A catalog of TPC-H SF 0.01 and an awkward table in one SQLite file (with Parquet copies)."""
    directory = tmp_path_factory.mktemp("sqlite")
    awkward = directory / "awkward.parquet"
    pq.write_table(awkward_table(), awkward)
    parquet = load_catalog(tpch_parquet_catalog)
    tables = {t: parquet.table(t).path for t in TPCH_IN_SQLITE}
    tables["t"] = awkward
    keys = {**tpch.KEYS, "t": TableKeys(("k",))}
    assert load_parquet_database(directory / "tpch.db", tables, keys, {"test": "sqlite connector"})
    entries = "".join(f'[sources.lite.tables.{name}]\nparquet_copy = "{path}"\n' for name, path in tables.items())
    catalog = directory / "lite.toml"
    catalog.write_text(f'[sources.lite]\ntype = "jdbc"\nurl = "jdbc:sqlite:{directory / "tpch.db"}"\n{entries}')
    return catalog


def test_a_sqlite_url_and_a_local_database_name_the_connector(tmp_path):
    by_url = parse_catalog('[sources.s]\ntype = "jdbc"\nurl = "jdbc:sqlite:/data/x.db"\n[sources.s.tables.t]\n',
                           tmp_path / "c.toml").sources["s"]
    assert by_url.connector is SQLITE and by_url.dialect == "sqlite" and by_subprotocol("sqlite") is SQLITE
    assert SQLITE.path_of(by_url) == Path("/data/x.db") and by_url.location() == "jdbc:sqlite:/data/x.db"
    local = parse_catalog(f'[sources.s]\ntype = "jdbc"\nlocal_server = "{tmp_path / "sqlite"}"\ndialect = "sqlite"\n'
                          'schema = "tpch"\n[sources.s.tables.t]\n', tmp_path / "c.toml").sources["s"]
    with pytest.raises(SourceUnreachable, match=r"cbo's local SQLite .* has not been created: start it with "
                                                r"`(CBO_CACHE_DIR=\S+ )?cbo sqlite start`"):
        local.jdbc_url()
    LocalSQLite(local.local_server).start()
    assert local.jdbc_url() == f"jdbc:sqlite:{local.local_server / 'tpch.db'}"
    assert local.password() is None and local.login_user() is None
    with pytest.raises(CatalogError, match="c.toml:4: sources.s.schema: a SQLite source's url names its database"):
        parse_catalog('[sources.s]\ntype = "jdbc"\nurl = "jdbc:sqlite:/x.db"\nschema = "main"\n[sources.s.tables.t]\n',
                      tmp_path / "c.toml")


def test_spark_reads_with_case_sensitive_like_and_iso_dates():
    url = SQLITE.spark_url("jdbc:sqlite:/d/x.db?date_string_format=yyyy&busy_timeout=5")
    assert url == ("jdbc:sqlite:/d/x.db?busy_timeout=5&case_sensitive_like=true&date_string_format=yyyy-MM-dd"
                   "&open_mode=1")
    from cbo.ir import types as T

    options = SQLITE.query_options(False, (("c1", T.decimal(15, 2)), ("c`2", T.DATE), ("c3", T.VARCHAR)))
    assert options == {"customSchema": "`c1` DECIMAL(15,2), `c``2` DATE, `c3` STRING"}


def test_loading_is_exact_and_all_or_nothing(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(awkward_table(), path)
    database = tmp_path / "x.db"
    manifest = {"v": 1}
    assert load_parquet_database(database, {"t": path}, {"t": TableKeys(("k",))}, manifest)
    assert not load_parquet_database(database, {"t": path}, {"t": TableKeys(("k",))}, manifest)  # already there
    assert loaded_manifest(database) == manifest
    with sqlite3.connect(database) as conn:
        rows = conn.execute('select s, d, p, b from t order by k').fetchall()
    assert [r[0] for r in rows] == AWKWARD           # the empty string stayed apart from NULL
    assert rows[1][1] == "1995-02-10" and rows[1][2] == pytest.approx(-3.75) and rows[2][3] == 1
    # a decimal SQLite cannot hold exactly, or a timestamp, is refused; the old file is kept
    wide = tmp_path / "wide.parquet"
    pq.write_table(pa.table({"x": pa.array([decimal.Decimal("1.5")], pa.decimal128(20, 2))}), wide)
    with pytest.raises(CboError, match=r"no SQLite type holds decimal128\(20, 2\) exactly"):
        load_parquet_database(database, {"w": wide}, {}, {"v": 2})
    stamp = tmp_path / "stamp.parquet"
    pq.write_table(pa.table({"x": pa.array([dt.datetime(2020, 1, 1)], pa.timestamp("us"))}), stamp)
    with pytest.raises(CboError, match="no SQLite type for Arrow type timestamp"):
        load_parquet_database(database, {"w": stamp}, {}, {"v": 3})
    assert loaded_manifest(database) == manifest and not (tmp_path / "x.db.loading").exists()


def test_declared_types_read_as_cbo_types():
    assert str(cbo_type("DECIMAL(15,2)")) == "decimal(15,2)" and cbo_type("NUMERIC(30, 2)") is None
    assert [str(cbo_type(t)) for t in ("INTEGER", "BIGINT", "DOUBLE", "TEXT", "VARCHAR(25)", "DATE", "BOOLEAN")] \
        == ["integer", "bigint", "double", "varchar", "varchar", "date", "boolean"]
    assert cbo_type("TIMESTAMP") is None and cbo_type("") is None


def test_columns_and_keys_come_from_the_file(lite):
    catalog = load_catalog(lite)
    columns = SchemaProvider(catalog).columns(catalog.table("t"))
    assert [(c.name, str(c.type)) for c in columns] == [("k", "bigint"), ("s", "varchar"), ("d", "date"),
                                                        ("p", "decimal(15,2)"), ("b", "boolean")]
    keyed = with_database_keys(catalog)
    assert keyed.table("lineitem").primary_key == ("l_orderkey", "l_linenumber")
    assert ForeignKey(("l_orderkey",), "orders", ("o_orderkey",)) in keyed.table("lineitem").foreign_keys
    assert keyed.table("t").primary_key == ("k",) and keyed.table("t").foreign_keys == ()


def test_statistics_are_the_data_s(lite):
    catalog = load_catalog(lite)
    duck = duckdb.connect()
    for name in ("t", "part", "orders"):
        table = catalog.table(name)
        stats = SQLITE.collect(catalog.source_of(table), table)
        assert stats.collector == "sqlite" and stats.fingerprint == fingerprint(catalog, table)
        source = f"read_parquet('{table.parquet_copy}')"
        rows = duck.sql(f"select count(*) from {source}").fetchall()[0][0]
        assert stats.row_count == rows and stats.sample is not None and stats.sample.size == min(rows, 10_000)
        for column in stats.columns.values():
            quoted = f'"{column.name}"'
            low, high, distinct, nulls = duck.sql(f"select min({quoted}), max({quoted}), count(distinct {quoted}), "
                                                  f"count(*) - count({quoted}) from {source}").fetchall()[0]
            assert column.distinct == distinct and column.null_fraction == pytest.approx(nulls / rows), column.name
            if column.kind == "number":
                assert (float(column.min), float(column.max)) == (pytest.approx(float(low)), pytest.approx(float(high)))
            else:
                assert (column.min, column.max) == (low, high), column.name
            counted = sum(b.rows for b in column.histogram) + sum(f for _, f in column.mcv) * rows
            assert counted == pytest.approx(rows - nulls, rel=0.02), column.name
    # low-cardinality columns are all most-common values
    mktsegment = SQLITE.collect(catalog.sources["lite"], catalog.table("customer")).columns["c_mktsegment"]
    assert len(mktsegment.mcv) == 5 and not mktsegment.histogram


def test_analyze_source_refreshes_sqlite_s_own_statistics(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(awkward_table(), path)
    load_parquet_database(tmp_path / "x.db", {"t": path}, {"t": TableKeys(("k",))}, {"v": 1})
    with sqlite3.connect(tmp_path / "x.db") as conn:
        conn.execute("delete from sqlite_stat1")
    catalog = parse_catalog(f'[sources.s]\ntype = "jdbc"\nurl = "jdbc:sqlite:{tmp_path / "x.db"}"\n'
                            '[sources.s.tables.t]\n', tmp_path / "c.toml")
    stats = SQLITE.collect(catalog.sources["s"], catalog.table("t"), analyze=True)   # cbo analyze --analyze-source
    assert stats.row_count == len(AWKWARD)
    with sqlite3.connect(tmp_path / "x.db") as conn:
        assert conn.execute("select count(*) from sqlite_stat1 where tbl = 't'").fetchone()[0] >= 1


PUSHED = {
    # a join with string, date and decimal filters (decimal comparisons are exact)
    "join": "select c_name, o_orderdate, o_totalprice from customer join orders on c_custkey = o_custkey "
            "where c_mktsegment = 'BUILDING' and o_orderdate < date '1995-03-15' and o_totalprice > 1000.50",
    "top_n": "select c_custkey, c_name, c_acctbal from customer order by c_acctbal desc, c_custkey limit 7",
    # NULLs among the first rows: SQLite's default order puts them first in ascending order and
    # last in descending, DuckDB's last in both
    "nulls_default": "select k, d from t order by d, k limit 4",
    "nulls_first": "select k, d from t order by d desc nulls first, k limit 4",
    "like_case": "select k from t where s like 'abc%' or s like 'A_c'",
    "extract": "select extract(year from o_orderdate) as y, count(*) as n, min(o_totalprice) as low from orders "
               "group by extract(year from o_orderdate)",
    "semi_anti": "select s_name from supplier where exists (select * from nation where n_nationkey = s_nationkey "
                 "and n_name like 'A%') and s_suppkey not in (select ps_suppkey from partsupp where ps_availqty < 50)",
    "left_join": "select n_name, count(s_suppkey) as n from nation left join supplier on s_nationkey = n_nationkey "
                 "and s_acctbal > 9000 group by n_name",
    "integers": "select l_orderkey, l_linenumber + 1 as next, -l_linenumber as neg from lineitem "
                "where l_shipdate between date '1996-01-01' and date '1996-01-03'",
}


@pytest.mark.parametrize("name", sorted(PUSHED))
def test_pushed_sql_answers_in_sqlite_as_duckdb_does(name, lite):
    """Every subplan the search pushes (EAGER: the largest it can) is rendered in SQLite's
    dialect from sqlglot's AST and run by SQLite; DuckDB runs the same subplan. Equal answers
    (the rows of a top-N in order) show the dialect's NULL order, dates, case-sensitive LIKE
    and integer arithmetic."""
    catalog = load_catalog(lite)
    stats = {t.qualified_name: SQLITE.collect(catalog.source_of(t), t) for t in catalog.tables()}
    planner = Planner(catalog, schemas=SchemaProvider(catalog, local_copies=True), estimator=Estimator(stats),
                      settings=OptimizerSettings().with_values({"join_pushdown_strategy": "EAGER"}))
    planned = planner.plan(PUSHED[name])
    assert planned.optimized is not None
    pushed = [c.remote_plan for c in planned.optimized.pushdown if c.pushed]
    assert pushed, f"{name}: nothing pushed"
    duck = DuckDBEngine(catalog)
    with sqlite3.connect(SQLITE.path_of(catalog.sources["lite"])) as conn:
        conn.execute("PRAGMA case_sensitive_like = ON")   # as every Spark connection sets it
        for plan in pushed:
            sql = RemoteQueries(catalog).remote_query(plan).sql
            sqlglot.parse_one(sql, read="sqlite")          # SQLite's dialect, as sqlglot wrote it
            got = [tuple(bool(v) if c.type.name == "boolean" and v is not None else v for v, c in zip(r, plan.output))
                   for r in conn.execute(sql).fetchall()]
            _, expected, _ = duck.run(to_sql(plan, tuple(name_of(c) for c in plan.output), "duckdb"))
            verdict = compare(expected, got, ordered=isinstance(plan, Limit))
            assert verdict.matches, f"{name}: {verdict.detail}\n{sql}"
    duck.close()


REFUSED = {
    "select sum(l_extendedprice * (1 - l_discount)) from lineitem": "decimal multiply",
    "select sum(l_quantity) from lineitem": "decimal sum",
    "select avg(o_totalprice) from orders": "decimal avg",
    "select o_orderkey / 7 from orders": "function int_divide",
    "select upper(c_name) from customer": "function upper",
    "select substring(c_phone, 1, 2) from customer": "function substring",
    "select cast(o_orderkey as varchar) from orders": "CAST",
    "select o_orderdate + interval '1' day from orders": "function date_add",
}


@pytest.mark.parametrize("sql", sorted(REFUSED))
def test_what_sqlite_answers_otherwise_stays_in_spark(sql, lite):
    catalog = load_catalog(lite)
    planner = Planner(catalog, schemas=SchemaProvider(catalog, local_copies=True), estimator=Estimator({}),
                      settings=OptimizerSettings().with_values({"join_pushdown_strategy": "EAGER"}))
    planned = planner.plan(sql)
    assert planned.optimized is not None
    assert not [c for c in planned.optimized.pushdown if c.pushed and type(c.remote_plan).__name__ != "Filter"]
    notes = [text for texts in planned.optimized.memo.notes.values() for text in texts]
    assert any(text.startswith(f"not pushed to lite (sqlite): {REFUSED[sql]}") for text in notes), notes


def test_sqlite_plans_flat_joins_itself_and_splits_no_reads():
    assert SQLITE.join_order is JoinOrder.FLAT and not SQLITE.parallel_reads
    assert SQLITE.capabilities is not None and SQLITE.capabilities.float_decimals
    assert {"upper", "lower", "substring", "divide", "modulus", "date_add"}.isdisjoint(SQLITE.capabilities.functions)
