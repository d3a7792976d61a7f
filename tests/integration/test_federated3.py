"""MariaDB as the second real source, and the three-source TPC-H placement federated3.

Against cbo's throwaway MariaDB of the test cache (never a user's): awkward values loaded and
read back exactly, folded filters with awkward literals, statistics compared with the data, the
22 TPC-H queries at SF 0.01 through cbo on Spark checked against DuckDB, the password nowhere
it must not be, and a source that goes away named in a one-line error.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks.tpch.queries import all_queries
from cbo.answers import compare, is_ordered
from cbo.sources.catalog import load_catalog, parse_catalog
from cbo.connectors.mariadb import client as mariadb
from cbo.engines.native import DuckDBNative
from cbo.errors import SourceUnreachable
from cbo.catalog_types import TableKeys
from cbo.connectors.mariadb.server import LocalMariaDB
from cbo.connectors.mariadb.loader import load_parquet_database
from cbo.app.session import Session
from cbo.sources.statistics import analyze, load_all, store_for

QUERIES = all_queries()

# Values that break naive quoting or text semantics: quotes, backslashes (an escape character in
# MariaDB's string literals), LIKE wildcards, unicode, trailing spaces and case (MariaDB's default
# collation would equate 'abc' and 'ABC '), empty strings beside NULLs, a long string.
AWKWARD = ["it's", 'say "hi"', "back\\slash", "100%_done", "ünï©ødé 🙂", "abc", "ABC ", "", None,
           "x" * 3000, "tab\there", "new\nline", "\\'", "--comment", "`tick`"]


@pytest.fixture(scope="module")
def maria(tpch_federated3):
    """The test cache's MariaDB (started by tpch_federated3) and a connection address to it."""
    info = LocalMariaDB().start()
    return info, mariadb.MariaAddress(info.host, info.port, info.database, info.user, info.password())


@pytest.fixture(scope="module")
def awkward_catalog(maria, tmp_path_factory) -> Path:
    """A table of awkward values loaded into MariaDB (database ``cbo_awkward``), with a Parquet copy."""
    directory = tmp_path_factory.mktemp("awkward")
    table = pa.table({
        "k": pa.array(range(len(AWKWARD)), pa.int64()),
        "s": pa.array(AWKWARD, pa.string()),
        "d": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=37 * i) if i % 4 else None
                       for i in range(len(AWKWARD))], pa.date32()),
        "p": pa.array([decimal.Decimal(i * 125) / 100 - 5 if i % 5 else None for i in range(len(AWKWARD))],
                      pa.decimal128(15, 2)),
    })
    path = directory / "awkward.parquet"
    pq.write_table(table, path)
    with mariadb.connect(maria[1]) as conn:
        load_parquet_database(conn, "cbo_awkward", {"t": path}, {"t": TableKeys(("k",))},
                              {"test": "awkward", "rows": len(AWKWARD), "version": 2})
    catalog = directory / "awkward.toml"
    catalog.write_text(f'[sources.m]\ntype = "jdbc"\nlocal_server = "{LocalMariaDB().root}"\ndialect = "mysql"\n'
                       f'schema = "cbo_awkward"\n[sources.m.tables.t]\nparquet_copy = "{path}"\n')
    return catalog


def test_awkward_values_load_and_read_back_exactly(maria, awkward_catalog):
    with mariadb.connect(maria[1]) as conn, conn.cursor() as cur:
        cur.execute("select k, s from cbo_awkward.t order by k")
        assert [s for _, s in cur.fetchall()] == AWKWARD
        cur.execute("select count(*) from cbo_awkward.t where s = ''")
        assert cur.fetchone() == (1,)  # the empty string stayed apart from NULL


@pytest.mark.parametrize("literal", [v for v in AWKWARD if v is not None and len(v) < 100] + ["abc ", "%", "_"])
def test_folded_filters_with_awkward_literals_match_duckdb(literal, spark, awkward_catalog):
    """The filter runs inside MariaDB (folded into the scan's query, literals escaped by sqlglot)
    and gives the rows DuckDB gives on the Parquet copy."""
    quoted = "'" + literal.replace("'", "''") + "'"
    sql = f"select k from t where s = {quoted} or s like {quoted} or s > {quoted} order by k"
    session = Session(load_catalog(awkward_catalog), engine="spark")
    assert "pushed SQL (m)" in session.explain(sql)
    _, got = session.query(sql)
    _, expected = Session(load_catalog(awkward_catalog), engine="duckdb").query(sql)
    assert got == expected


def test_columns_and_keys_are_read_from_mariadb(awkward_catalog):
    from cbo.sources.metadata import with_database_keys
    from cbo.sources.schema import SchemaProvider

    catalog = load_catalog(awkward_catalog)
    table = catalog.table("t")
    columns = SchemaProvider(catalog).columns(table)
    assert [(c.name, c.type.name) for c in columns] == [("k", "bigint"), ("s", "varchar"), ("d", "date"),
                                                        ("p", "decimal")]
    assert with_database_keys(catalog).table("t").primary_key == ("k",)


def test_statistics_describe_the_data(tpch_federated3):
    catalog = load_catalog(tpch_federated3)
    analyze(catalog, ["maria.part", "maria.supplier"], analyze_source=True, force=True)
    stats, problems = load_all(catalog, check_fresh=True)
    assert problems == []
    duck = duckdb.connect()
    for name in ("part", "supplier"):
        found = stats[f"maria.{name}"]
        assert found.collector == "mariadb"
        path = catalog.table(name).parquet_copy
        rows = duck.sql(f"select count(*) from read_parquet('{path}')").fetchall()[0][0]
        assert found.row_count == rows
        assert found.sample is not None and found.sample.size == min(rows, 10_000)
        for column in found.columns.values():
            name_sql = f'"{column.name}"'
            low, high, distinct = duck.sql(f"select min({name_sql}), max({name_sql}), count(distinct {name_sql}) "
                                           f"from read_parquet('{path}')").fetchall()[0]
            assert column.null_fraction == 0
            if column.kind == "number":
                assert float(column.min) == pytest.approx(float(low))
                assert float(column.max) == pytest.approx(float(high))
            else:
                assert (column.min, column.max) == (low, high)
            assert column.distinct == pytest.approx(distinct, rel=0.02), column.name
            counted = sum(b.rows for b in column.histogram) + sum(f for _, f in column.mcv) * rows
            if column.histogram or column.mcv:
                assert counted == pytest.approx(rows, rel=0.02), column.name
    # Low-cardinality columns come back as MCVs (one value per JSON_HB bucket).
    mfgr = stats["maria.part"].columns["p_mfgr"]
    assert len(mfgr.mcv) == 5 and not mfgr.histogram


@pytest.fixture(scope="module")
def federated3_session(spark, tpch_federated3):
    return Session(load_catalog(tpch_federated3), engine="spark")


@pytest.fixture(scope="module")
def duckdb_answers(tpch_catalogs):
    engine = DuckDBNative(load_catalog(tpch_catalogs["all-spark"]))
    answers = {q.name: engine.run(q.sql)[1] for q in QUERIES}
    engine.close()
    return answers


def test_federated3_places_tables_in_three_sources(tpch_federated3):
    catalog = load_catalog(tpch_federated3)
    placed = {name: sorted(source.tables) for name, source in catalog.sources.items()}
    assert placed == {"lake": ["lineitem"], "pg": ["customer", "orders"],
                      "maria": ["nation", "part", "partsupp", "region", "supplier"]}
    assert catalog.sources["maria"].dialect == "mysql" and catalog.sources["pg"].dialect == "postgres"


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_cbo_on_spark_federated3_matches_duckdb(query, federated3_session, duckdb_answers):
    _, rows = federated3_session.query(query.sql)
    verdict = compare(duckdb_answers[query.name], rows, ordered=is_ordered(query.sql))
    assert verdict.matches, f"{query.name} through cbo on Spark/federated3: {verdict.detail}"


def test_explain_shows_mariadb_sql_and_no_password(federated3_session, maria, tpch_federated3, tpch_catalogs):
    query = next(q for q in QUERIES if q.name == "q02")
    text = federated3_session.explain(query.sql)
    # MariaDB's dialect: backtick-quoted identifiers (after STRAIGHT_JOIN where a join is pushed
    # in cbo's order, cbo.exec.remote_join_order)
    assert re.search(r"pushed SQL \(maria\): SELECT (STRAIGHT_JOIN )?`", text), text
    password = maria[0].password()
    assert password not in text
    assert password not in federated3_session.explain(query.sql, format="json")
    saved = [tpch_federated3, *tpch_catalogs.values()]
    saved += [p for p in store_for(load_catalog(tpch_federated3)).directory.rglob("*") if p.is_file()]
    for path in saved:
        assert password.encode() not in Path(path).read_bytes(), path


def test_a_source_that_goes_away_is_named_in_one_line(spark, maria, tpch_federated3, tmp_path):
    """Stopped before the query: the local server's source says it is not running and how to
    start it. Stopped after planning (a source given by URL): the run fails, and the error names
    the source that no longer answers. Neither shows the password."""
    info = maria[0]
    by_url = tmp_path / "by-url.toml"
    by_url.write_text(f'[sources.maria]\ntype = "jdbc"\nurl = "{info.jdbc_url}"\nuser = "{info.user}"\n'
                      f'password_file = "{info.password_file}"\nschema = "tpch_sf0_01"\n'
                      '[sources.maria.tables.nation]\n[sources.maria.tables.region]\n')
    sql = "select n_name, r_name from nation join region on n_regionkey = r_regionkey where r_name = 'ASIA'"
    local_session = Session(load_catalog(tpch_federated3), engine="spark")
    url_session = Session(parse_catalog(by_url.read_text(), by_url), engine="spark")
    planned = url_session.planner.plan(sql)
    server = LocalMariaDB()
    server.stop()
    try:
        with pytest.raises(SourceUnreachable) as stopped:
            local_session.query(sql)
        message = str(stopped.value)
        assert "source 'maria'" in message and "cbo mariadb start" in message
        with pytest.raises(SourceUnreachable) as gone:
            url_session.run(planned)
        message = str(gone.value)
        # Whichever connection finds the server gone first (cbo's own metadata reads, or Spark's
        # JDBC read, probed by cbo.exec.source_failure) names the source.
        assert "source 'maria'" in message, message
        for text in (str(stopped.value), str(gone.value)):
            assert "\n" not in text and info.password() not in text
    finally:
        server.start()


def test_pushed_sql_is_what_mariadb_receives(federated3_session, maria):
    """EXPLAIN's pushed SQL for MariaDB is exactly what the server receives (its general log),
    inside Spark's ``SELECT cols FROM (q) alias`` with no filter of Spark's own."""
    import json
    import re

    query = next(q for q in QUERIES if q.name == "q02")  # part filtered by size and a LIKE
    body = json.loads(federated3_session.explain(query.sql, format="json"))
    stack, pushed = [body["plan"]], set()
    while stack:
        node = stack.pop()
        stack.extend(node["children"])
        if "pushed_sql" in node and "`tpch_sf0_01`." in node["pushed_sql"]:
            pushed.add(node["pushed_sql"])
    assert any("LIKE" in text for text in pushed)
    with mariadb.connect(maria[1]) as conn, conn.cursor() as cur:
        cur.execute("truncate table mysql.general_log")
        cur.execute("set global log_output = 'TABLE', general_log = 1")
        try:
            federated3_session.query(query.sql)
        finally:
            cur.execute("set global general_log = 0")
        cur.execute("select argument from mysql.general_log where command_type in ('Query', 'Execute')")
        statements = [bytes(row[0]).decode() if isinstance(row[0], (bytes, bytearray)) else row[0]
                      for row in cur.fetchall()]
    sent = set()
    for statement in statements:
        if "`tpch_sf0_01`." not in statement:
            continue
        match = re.fullmatch(r"SELECT .*? FROM \((.*)\)\s+\w+(?:\s+WHERE\s+(.*))?", statement, re.DOTALL)
        assert match, f"not the shape Spark's JDBC reader sends: {statement}"
        assert (match.group(2) or "").strip() in ("", "1=0"), statement
        sent.add(match.group(1).strip())
    assert sent == pushed, f"EXPLAIN: {sorted(pushed)}\nreceived: {sorted(sent)}"


def test_a_large_mariadb_table_is_read_in_key_ranges(spark, tpch_federated3):
    """Above the row threshold (lowered here to 1), the key's bounds come from MariaDB and Spark
    reads the pushed query in parallel key ranges, every row exactly once."""
    from cbo.exec.remote import RemoteQueries
    from cbo.exec.spark_sql import SparkViews
    from cbo.planner import Planner

    catalog = load_catalog(tpch_federated3)
    planned = Planner(catalog).plan("select ps_partkey, ps_suppkey from partsupp where ps_availqty > 10")
    views = SparkViews(spark, catalog, partitions=3)
    views.remote = RemoteQueries(catalog, min_rows_for_partitions=1)
    (remote,) = views.remote.pushed(planned.plan).values()
    assert remote.partition_column is not None and remote.bounds == (1, 2000)
    frame = views._read_remote(remote)
    assert frame.rdd.getNumPartitions() == 3
    rows = frame.collect()
    duck = duckdb.connect()
    copy = catalog.table("partsupp").parquet_copy
    expected = duck.sql(f"select count(*) from read_parquet('{copy}') where ps_availqty > 10").fetchall()[0][0]
    assert len(rows) == expected and len(set(map(tuple, rows))) == expected
