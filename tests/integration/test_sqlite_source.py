"""SQLite as the third real JDBC source, read by Spark through xerial's driver.

Against database files in the test cache's local SQLite directory (``<cache>/sqlite``): TPC-H
at SF 0.01 all in SQLite, and federated with PostgreSQL and Parquet, through cbo on Spark
checked against DuckDB query by query; subplans pushed into SQLite as one query each, in its
dialect; statistics collected from the file; awkward values read back exactly and compared in
pushed filters as DuckDB compares them (case-sensitive LIKE, NULL order); a database file that
is missing named in one line.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlglot
import tomli_w

from benchmarks.tpch.queries import all_queries
from cbo.answers import compare, is_ordered
from cbo.app.session import Session
from cbo.catalog_types import TableKeys
from cbo.connectors import SQLITE
from cbo.connectors.sqlite import load_parquet_database
from cbo.engines.native import DuckDBNative
from cbo.errors import CboError, SourceUnreachable
from cbo.sources.catalog import load_catalog
from cbo.sources.statistics import analyze, load_all
from cbo.workloads import tpch

QUERIES = all_queries()
DATABASE = "tpch_sf0_01"
# lineitem stays in Parquet, customer and orders in PostgreSQL, the rest in SQLite
IN_POSTGRES = ("customer", "orders")
IN_PARQUET = ("lineitem",)


def _source(tables: dict[str, Path], names: tuple[str, ...]) -> dict:
    return {t: {"parquet_copy": str(tables[t])} for t in names}


@pytest.fixture(scope="module")
def sqlite_catalogs(tpch_catalogs) -> dict[str, Path]:
    """TPC-H SF 0.01 loaded into the test cache's SQLite (``tpch_sf0_01.db``, loaded once and
    kept), and two catalogs over it: all of it in SQLite, and SQLite with the test cache's
    PostgreSQL and the Parquet files."""
    parquet = load_catalog(tpch_catalogs["all-spark"])
    tables = {t: parquet.table(t).path for t in tpch.TABLES}
    server = SQLITE.local_server()
    server.start()
    manifest = {"dataset": tpch.TABLES, "sf": 0.01, "loader": "cbo-sqlite/1",
                "sizes": [tables[t].stat().st_size for t in tpch.TABLES]}
    load_parquet_database(Path(server.database(DATABASE).path), tables, tpch.KEYS, manifest)
    lite = {"type": "jdbc", "local_server": str(server.root), "dialect": "sqlite", "schema": DATABASE}
    pg = load_catalog(tpch_catalogs["all-postgres"]).sources["pg"]
    postgres = {"type": "jdbc", "local_server": str(pg.local_server), "dialect": "postgres", "schema": pg.schema}
    in_sqlite = tuple(t for t in tpch.TABLES if t not in IN_POSTGRES + IN_PARQUET)
    documents = {
        "all-sqlite": {"sources": {"lite": {**lite, "tables": _source(tables, tpch.TABLES)}}},
        "federated-sqlite": {"sources": {
            "lake": {"type": "spark", "tables": {t: {"path": str(tables[t])} for t in IN_PARQUET}},
            "pg": {**postgres, "tables": _source(tables, IN_POSTGRES)},
            "lite": {**lite, "tables": _source(tables, in_sqlite)}}},
    }
    directory = tables["nation"].parent / "catalogs-sqlite"
    directory.mkdir(exist_ok=True)
    written = {}
    for name, document in documents.items():
        written[name] = directory / f"{name}.toml"
        written[name].write_text(tomli_w.dumps(document))
    return written


@pytest.fixture(scope="module")
def duckdb_answers(tpch_catalogs):
    engine = DuckDBNative(load_catalog(tpch_catalogs["all-spark"]))
    answers = {q.name: engine.run(q.sql)[1] for q in QUERIES}
    engine.close()
    return answers


@pytest.fixture(scope="module")
def sqlite_session(spark, sqlite_catalogs):
    return Session(load_catalog(sqlite_catalogs["all-sqlite"]), engine="spark")


@pytest.fixture(scope="module")
def federated_session(spark, sqlite_catalogs):
    return Session(load_catalog(sqlite_catalogs["federated-sqlite"]), engine="spark")


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_cbo_on_spark_over_sqlite_matches_duckdb(query, sqlite_session, duckdb_answers):
    _, rows = sqlite_session.query(query.sql)
    verdict = compare(duckdb_answers[query.name], rows, ordered=is_ordered(query.sql))
    assert verdict.matches, f"{query.name} through cbo on Spark/all-sqlite: {verdict.detail}"


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_sqlite_postgres_and_parquet_federated_match_duckdb(query, federated_session, duckdb_answers):
    _, rows = federated_session.query(query.sql)
    verdict = compare(duckdb_answers[query.name], rows, ordered=is_ordered(query.sql))
    assert verdict.matches, f"{query.name} through cbo on Spark/federated-sqlite: {verdict.detail}"


def test_same_source_subtrees_run_in_sqlite_as_one_query(sqlite_session, federated_session):
    q03 = next(q for q in QUERIES if q.name == "q03")
    records = [r for r in sqlite_session.pushdown(q03.sql) if r.pushed]
    assert records and all(r.dialect == "sqlite" and r.source == "lite" for r in records)
    (joined,) = [r for r in records if len(r.tables) == 3]   # customer, orders and lineitem in one query
    parsed = sqlglot.parse_one(joined.sql, read="sqlite")
    assert {t.name for t in parsed.find_all(sqlglot.exp.Table)} == {"customer", "orders", "lineitem"}
    assert "DATE('1995-03-15')" in joined.sql        # a date literal as SQLite compares text dates
    # the revenue (a decimal product, summed) stays in Spark: SQLite would round it
    assert "SUM" not in joined.sql.upper() and '"l_extendedprice" AS' in joined.sql
    text = sqlite_session.explain(q03.sql)
    assert "pushed SQL (lite): SELECT" in text and "decimal multiply" in text
    # federated: the SQLite part of Q5 (nation, region, supplier) is one SQLite query, PostgreSQL's its own
    q05 = next(q for q in QUERIES if q.name == "q05")
    pushed = [r for r in federated_session.pushdown(q05.sql) if r.pushed]
    assert {r.dialect for r in pushed} == {"sqlite", "postgres"}
    assert any(r.dialect == "sqlite" and len(r.tables) >= 2 for r in pushed), pushed


def test_statistics_are_collected_from_the_file(sqlite_catalogs, tpch_catalogs):
    catalog = load_catalog(sqlite_catalogs["all-sqlite"])
    results = analyze(catalog, ["lite.part", "lite.supplier", "lite.nation"], force=True)
    assert [r.status for r in results] == ["collected"] * 3
    stats, problems = load_all(catalog, check_fresh=True)
    assert problems == []
    duck = duckdb.connect()
    for name in ("part", "supplier", "nation"):
        found = stats[f"lite.{name}"]
        assert found.collector == "sqlite"
        path = catalog.table(name).parquet_copy
        assert found.row_count == duck.sql(f"select count(*) from read_parquet('{path}')").fetchall()[0][0]
        for column in found.columns.values():
            distinct = duck.sql(f'select count(distinct "{column.name}") from read_parquet(\'{path}\')').fetchall()
            assert column.distinct == distinct[0][0], column.name
    # fresh statistics are kept
    assert [r.status for r in analyze(catalog, ["lite.nation"])] == ["fresh"]


AWKWARD = ["abc", "ABC ", "Abc", "it's", 'say "hi"', "100%_done", "back\\slash", "ünï©ødé 🙂", "", None, "x" * 3000,
           "tab\there", "new\nline", "--comment"]


@pytest.fixture(scope="module")
def awkward_catalog(sqlite_catalogs, tmp_path_factory) -> Path:
    """A table of awkward values in a SQLite file given by URL, with a Parquet copy."""
    directory = tmp_path_factory.mktemp("awkward-sqlite")
    n = len(AWKWARD)
    table = pa.table({
        "k": pa.array(range(n), pa.int64()),
        "s": pa.array(AWKWARD, pa.string()),
        "d": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=37 * i) if i % 4 else None for i in range(n)],
                      pa.date32()),
        "p": pa.array([decimal.Decimal(i * 125) / 100 - 5 if i % 5 else None for i in range(n)],
                      pa.decimal128(15, 2)),
        "b": pa.array([None if i % 3 == 0 else i % 2 == 0 for i in range(n)], pa.bool_()),
    })
    copy = directory / "t.parquet"
    pq.write_table(table, copy)
    load_parquet_database(directory / "awkward.db", {"t": copy}, {"t": TableKeys(("k",))}, {"test": "awkward"})
    catalog = directory / "awkward.toml"
    catalog.write_text(f'[sources.lite]\ntype = "jdbc"\nurl = "jdbc:sqlite:{directory / "awkward.db"}"\n'
                       f'[sources.lite.tables.t]\nparquet_copy = "{copy}"\n')
    return catalog


def test_awkward_values_read_back_exactly(spark, awkward_catalog):
    catalog = load_catalog(awkward_catalog)
    sql = "select k, s, d, p, b from t order by k"
    _, got = Session(catalog, engine="spark").query(sql)
    _, expected = Session(catalog, engine="duckdb").query(sql)
    assert got == expected
    assert [row[1] for row in got] == AWKWARD


@pytest.mark.parametrize("literal", ["abc", "ABC ", "it's", "100%_done", "back\\slash", "", "%", "_", "a%", "A_c"])
def test_pushed_filters_with_awkward_literals_match_duckdb(literal, spark, awkward_catalog):
    """The filter runs inside SQLite (literals escaped by sqlglot; LIKE case-sensitive on every
    connection Spark opens) and gives the rows DuckDB gives on the Parquet copy."""
    quoted = "'" + literal.replace("'", "''") + "'"
    sql = f"select k from t where s = {quoted} or s like {quoted} or s > {quoted} order by k"
    catalog = load_catalog(awkward_catalog)
    session = Session(catalog, engine="spark")
    assert "pushed SQL (lite)" in session.explain(sql)
    assert session.query(sql)[1] == Session(catalog, engine="duckdb").query(sql)[1]


@pytest.mark.parametrize("order", ["d, k", "d desc, k", "d desc nulls first, k", "p, k", "s desc, k"])
def test_a_pushed_top_n_keeps_duckdb_s_null_order(order, spark, awkward_catalog):
    sql = f"select k, d, p from t order by {order} limit 5"
    catalog = load_catalog(awkward_catalog)
    session = Session(catalog, engine="spark", settings={"join_pushdown_strategy": "EAGER"})
    records = session.pushdown(sql)
    assert any(r.pushed and "ORDER BY" in r.sql and "LIMIT 5" in r.sql for r in records), records
    assert session.query(sql)[1] == Session(catalog, engine="duckdb").query(sql)[1]


def test_a_missing_database_file_is_named_in_one_line(spark, awkward_catalog, tmp_path):
    moved = tmp_path / "gone.toml"
    moved.write_text(awkward_catalog.read_text().replace("awkward.db", "no-such.db"))
    with pytest.raises(SourceUnreachable) as caught:
        Session(load_catalog(moved), engine="spark").query("select k from t")
    assert "the SQLite database" in str(caught.value) and "no-such.db does not exist" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert not (awkward_catalog.parent / "no-such.db").exists()   # never created by looking for it
    with pytest.raises(CboError, match="statistics|does not exist"):
        analyze(load_catalog(moved))
