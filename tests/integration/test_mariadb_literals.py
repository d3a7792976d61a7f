"""Pushed SQL for MariaDB quotes every identifier and escapes every literal: fuzzed on the real server.

Hypothesis draws a column name and string values (quotes, backticks, backslashes, ``%`` and
``_``, unicode, very long strings) and a literal; the table is created in cbo's throwaway
MariaDB of the test cache, a query with ``=``, ``LIKE`` and ``<`` on that literal is planned by
cbo, and the query that cbo folds into the scan (what execution sends, built from sqlglot's
AST) runs on MariaDB. Its rows must be DuckDB's for the same query on the same values.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cbo.connectors.mariadb import client as mariadb
from cbo.exec.remote import RemoteQueries
from cbo.planner import Planner
from cbo.sources.catalog import parse_catalog
from cbo.connectors.mariadb.server import LocalMariaDB
from tests.awkward_text import awkward_text

DATABASE = "cbo_fuzz"
# MariaDB identifiers: at most 64 characters, no trailing space, none outside the BMP (the
# alphabet has none).
identifiers, strings = awkward_text(identifier_max=20)


@pytest.fixture(scope="module")
def server(tpch_federated3):
    info = LocalMariaDB().start()
    address = mariadb.MariaAddress(info.host, info.port, info.database, info.user, info.password())
    with mariadb.connect(address) as conn, conn.cursor() as cur:
        cur.execute(f"create database if not exists {mariadb.identifier(DATABASE)} "
                    "character set utf8mb4 collate utf8mb4_nopad_bin")
    return info, address


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(column=identifiers, values=st.lists(st.one_of(st.none(), strings), min_size=1, max_size=6), literal=strings)
def test_folded_queries_with_awkward_names_and_literals_match_duckdb(server, tmp_path, column, values, literal):
    _, address = server
    values = [*values, literal]  # the literal is among the values: = and LIKE have a row to find
    with mariadb.connect(address, database=DATABASE) as conn, conn.cursor() as cur:
        cur.execute("drop table if exists t")
        cur.execute(f"create table t (k int primary key, {mariadb.identifier(column)} varchar(4000))")
        cur.executemany("insert into t values (%s, %s)", list(enumerate(values)))
    copy = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": pa.array(range(len(values)), pa.int32()), column: pa.array(values, pa.string())}),
                   copy)
    catalog_file = tmp_path / "c.toml"
    catalog_file.write_text(f'[sources.m]\ntype = "jdbc"\nlocal_server = "{LocalMariaDB().root}"\n'
                            f'dialect = "mysql"\nschema = "{DATABASE}"\n[sources.m.tables.t]\n'
                            f'parquet_copy = "{copy}"\n')
    catalog = parse_catalog(catalog_file.read_text(), catalog_file)
    duck = duckdb.connect()
    duck.execute(f"create view t as select * from read_parquet('{copy}')")
    quoted_column = '"' + column.replace('"', '""') + '"'
    quoted_literal = "'" + literal.replace("'", "''") + "'"
    # One comparison per query: an OR of them would let one hide another's wrong answer.
    for operator in ("=", "like", "<"):
        sql = f"select k from t where {quoted_column} {operator} {quoted_literal}"
        planned = Planner(catalog).plan(sql)
        pushed = RemoteQueries(catalog, partitioned_reads=False).pushed(planned.plan)
        assert len(pushed) == 1
        remote = next(iter(pushed.values()))
        with mariadb.connect(address, database=DATABASE) as conn, conn.cursor() as cur:
            cur.execute(remote.sql)
            got = sorted(row[0] for row in cur.fetchall())
        expected = sorted(row[0] for row in duck.execute(sql).fetchall())
        assert got == expected, f"{operator}: {remote.sql[:300]}"
