"""Pushed SQL for PostgreSQL quotes every identifier and escapes every literal: fuzzed on the real
server, as ``test_mariadb_literals`` does for MariaDB.

Hypothesis draws a column name and string values (quotes, backslashes, ``%`` and ``_``, unicode,
very long strings) and a literal; the table is created in cbo's throwaway PostgreSQL of the test
cache (column collation "C", so ``<`` orders bytes as DuckDB does), a query with ``=``, ``LIKE`` and
``<`` on that literal is planned by cbo, and the query that cbo folds into the scan (what
execution sends, built from sqlglot's AST) runs on PostgreSQL. Its rows must be DuckDB's for the
same query on the same values. LIKE patterns with backslashes are checked case by case too:
PostgreSQL's LIKE escapes with a backslash unless told ``ESCAPE ''``, DuckDB's does not.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from psycopg import sql as pgsql

from cbo.connectors.postgres import client as pg
from cbo.exec.remote import RemoteQueries
from cbo.planner import Planner
from cbo.sources.catalog import parse_catalog
from cbo.connectors.postgres.server import LocalPostgres
from tests.awkward_text import awkward_text

SCHEMA = "cbo_fuzz"
# PostgreSQL identifiers: at most 63 bytes (20 characters of at most 3 bytes here); its text
# holds no NUL character.
identifiers, strings = awkward_text(identifier_max=20, excluded="\x00")


@pytest.fixture(scope="module")
def server(tpch_catalogs):
    info = LocalPostgres().start()
    address = pg.parse_url(info.jdbc_url, info.user, info.password())
    with pg.connect(address) as conn:
        conn.execute(pgsql.SQL("create schema if not exists {}").format(pgsql.Identifier(SCHEMA)))
    return address


def load(address, tmp_path, column: str, values: list[str | None]):  # type: ignore[no-untyped-def]
    """The table in PostgreSQL and as Parquet for DuckDB; the catalog naming it."""
    with pg.connect(address) as conn:
        conn.execute(pgsql.SQL("drop table if exists {}.t").format(pgsql.Identifier(SCHEMA)))
        conn.execute(pgsql.SQL('create table {}.t (k int primary key, {} text collate "C")')
                     .format(pgsql.Identifier(SCHEMA), pgsql.Identifier(column)))
        with conn.cursor() as cur:
            cur.executemany(pgsql.SQL("insert into {}.t values (%s, %s)").format(pgsql.Identifier(SCHEMA)),
                            list(enumerate(values)))
    copy = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": pa.array(range(len(values)), pa.int32()), column: pa.array(values, pa.string())}),
                   copy)
    catalog_file = tmp_path / "c.toml"
    catalog_file.write_text(f'[sources.p]\ntype = "jdbc"\nlocal_server = "{LocalPostgres().root}"\n'
                            f'dialect = "postgres"\nschema = "{SCHEMA}"\n[sources.p.tables.t]\n'
                            f'parquet_copy = "{copy}"\n')
    duck = duckdb.connect()
    duck.execute(f"create view t as select * from read_parquet('{copy}')")
    return parse_catalog(catalog_file.read_text(), catalog_file), duck


def pushed_rows(address, catalog, sql: str) -> tuple[list[int], str]:  # type: ignore[no-untyped-def]
    planned = Planner(catalog).plan(sql)
    pushed = RemoteQueries(catalog, partitioned_reads=False).pushed(planned.plan)
    assert len(pushed) == 1
    remote = next(iter(pushed.values()))
    with pg.connect(address) as conn:
        return sorted(row[0] for row in conn.execute(remote.sql).fetchall()), remote.sql  # type: ignore[arg-type]


def quoted(column: str, literal: str) -> tuple[str, str]:
    return '"' + column.replace('"', '""') + '"', "'" + literal.replace("'", "''") + "'"


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(column=identifiers, values=st.lists(st.one_of(st.none(), strings), min_size=1, max_size=6), literal=strings)
@example(column="a\\b", values=["back\\slash", "back\\\\slash", "backslash"], literal="back\\slash")
def test_folded_queries_with_awkward_names_and_literals_match_duckdb(server, tmp_path, column, values, literal):
    values = [*values, literal]  # the literal is among the values: = and LIKE have a row to find
    catalog, duck = load(server, tmp_path, column, values)
    quoted_column, quoted_literal = quoted(column, literal)
    # One comparison per query: an OR of them would let one hide another's wrong answer.
    for operator in ("=", "like", "<"):
        sql = f"select k from t where {quoted_column} {operator} {quoted_literal}"
        got, remote = pushed_rows(server, catalog, sql)
        expected = sorted(row[0] for row in duck.execute(sql).fetchall())
        assert got == expected, f"{operator}: {remote[:300]}"


VALUES = ["back\\slash", "back\\\\slash", "backslash", "a%b", "a\\%b", "a\\xb", "ab\\", "\\", "x_y", "x\\_y", "xzy"]
PATTERNS = ["back\\slash", "back\\\\slash", "a\\%b", "a\\%", "%\\", "\\", "x\\_y", "x_y", "%\\%", "\\\\"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_like_backslash_is_an_ordinary_character_on_postgres(server, tmp_path, pattern):
    catalog, duck = load(server, tmp_path, "s", VALUES)
    sql = f"select k from t where s like {quoted('s', pattern)[1]}"
    expected = sorted(row[0] for row in duck.execute(sql).fetchall())
    got, remote = pushed_rows(server, catalog, sql)
    assert got == expected, remote
    assert "ESCAPE ''" in remote
    # What the ESCAPE clause is for: PostgreSQL's default LIKE disagrees on the first pattern.
    if pattern == "back\\slash":
        with pg.connect(server) as conn:
            assert conn.execute("select 'back\\slash' like 'back\\slash'").fetchone()[0] is False  # type: ignore[index]


def test_like_backslash_is_an_ordinary_character_on_spark(spark, tmp_path):
    """cbo's plan on Spark: Spark's LIKE escapes with a backslash (and rejects one before an
    ordinary character, INVALID_FORMAT.ESC_IN_THE_MIDDLE), so cbo doubles every backslash of
    the pattern; the answers are DuckDB's for every pattern, literal or computed."""
    from cbo.app.session import Session

    copy = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": pa.array(range(len(VALUES)), pa.int32()), "s": pa.array(VALUES, pa.string()),
                             "p": pa.array([PATTERNS[i % len(PATTERNS)] for i in range(len(VALUES))], pa.string())}),
                   copy)
    catalog_file = tmp_path / "c.toml"
    catalog_file.write_text(f'[sources.lake]\ntype = "spark"\n[sources.lake.tables.t]\npath = "{copy}"\n')
    session = Session(catalog_file)
    duck = duckdb.connect()
    duck.execute(f"create view t as select * from read_parquet('{copy}')")
    queries = [f"select k from t where s like {quoted('s', p)[1]}" for p in PATTERNS]
    queries += ["select k from t where s like p", "select a.k, b.k from t a join t b on a.s like b.p"]
    for sql in queries:
        expected = sorted(duck.execute(sql).fetchall())
        _, rows = session.run(session.planner.plan(sql))
        assert sorted(tuple(r) for r in rows) == expected, sql
