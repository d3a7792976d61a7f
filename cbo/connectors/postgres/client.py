"""PostgreSQL seen from Python: addresses, connections, queries, and columns and keys from metadata.

Spark reaches PostgreSQL through its JDBC source; cbo itself talks to it with psycopg to read
metadata (columns, keys, statistics), to load data and to run native baselines. Both start
from the catalog's JDBC URL.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from cbo.catalog_types import ColumnInfo, ForeignKey, Source, TableDef
from cbo.errors import CboError, QueryTimeout, SourceUnreachable
from cbo.ir import types as T
from cbo.jdbc_url import redact as redact  # re-exported: callers name it here
from cbo.jdbc_url import url_parts


@dataclass(frozen=True)
class PgAddress:
    host: str
    port: int
    database: str
    user: str | None = None
    password: str | None = None

    def describe(self) -> str:
        return f"{self.host}:{self.port}/{self.database}"

    def jdbc_url(self) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"

    def url(self) -> str:
        """The libpq URL without the password, safe to print."""
        user = f"{self.user}@" if self.user else ""
        return f"postgresql://{user}{self.host}:{self.port}/{self.database}"


def parse_url(url: str, user: str | None = None, password: str | None = None) -> PgAddress:
    """Parse ``jdbc:postgresql://h:p/db?user=..`` or ``postgresql://user:pw@h:p/db``."""
    parts = url_parts(url, ("postgresql", "postgres"), "PostgreSQL", 5432, user, password)
    return PgAddress(parts.host, parts.port, parts.database or "postgres", parts.user, parts.password)


def address_of(source: Source) -> PgAddress:
    """Where to connect for ``source`` now (a local server's current port), with its password."""
    return parse_url(source.jdbc_url(), source.login_user(), source.password())


def connect(address: PgAddress, *, autocommit: bool = True, what: str = "PostgreSQL") -> psycopg.Connection:
    """Connect, or raise :class:`SourceUnreachable` with one line naming the server."""
    try:
        return psycopg.connect(host=address.host, port=address.port, dbname=address.database,
                               user=address.user, password=address.password,
                               autocommit=autocommit, connect_timeout=10)
    except psycopg.OperationalError as exc:
        reason = _reason(exc)
        raise SourceUnreachable(f"cannot connect to {what} at {address.describe()}: {reason}") from None


def _reason(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    # libpq prefixes with 'connection to server at "h" (ip), port p failed:'; keep the cause.
    for line in lines:
        if "failed:" in line:
            return line.rsplit("failed:", 1)[1].strip()
    return lines[0] if lines else type(exc).__name__


def run_query(conn: psycopg.Connection, text: str, *, timeout_s: float | None = None,
              search_path: str | None = None) -> tuple[list[str], list[tuple[Any, ...]], float]:
    """Run one query; return column names, rows and elapsed seconds."""
    with conn.cursor() as cur:
        if timeout_s:
            cur.execute(sql.SQL("set statement_timeout = {}").format(sql.Literal(int(timeout_s * 1000))))
        if search_path:
            cur.execute(sql.SQL("set search_path = {}").format(sql.Identifier(search_path)))
        started = time.perf_counter()
        try:
            cur.execute(text)
        except psycopg.errors.QueryCanceled:
            raise QueryTimeout(f"query cancelled after {timeout_s:g} s (statement_timeout)") from None
        rows = cur.fetchall()
        elapsed = time.perf_counter() - started
        names = [d.name for d in cur.description or []]
    return names, rows, elapsed


def read_keys(conn: psycopg.Connection, schema: str, table: str) -> tuple[
        tuple[str, ...], tuple[tuple[str, ...], ...], tuple[ForeignKey, ...]]:
    """Primary key, unique keys and foreign keys of ``schema.table`` from ``pg_constraint``."""
    rows = conn.execute(
        """
        select c.contype,
               array(select a.attname from unnest(c.conkey) with ordinality k(attnum, ord)
                     join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum
                     order by k.ord) as columns,
               rt.relname as referenced_table,
               array(select a.attname from unnest(c.confkey) with ordinality k(attnum, ord)
                     join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.attnum
                     order by k.ord) as referenced_columns
        from pg_constraint c
        join pg_class t on t.oid = c.conrelid
        join pg_namespace n on n.oid = t.relnamespace
        left join pg_class rt on rt.oid = c.confrelid
        where n.nspname = %s and t.relname = %s and c.contype in ('p', 'u', 'f')
        order by c.conname
        """, (schema, table)).fetchall()
    primary: tuple[str, ...] = ()
    uniques: list[tuple[str, ...]] = []
    foreign: list[ForeignKey] = []
    for kind, columns, ref_table, ref_columns in rows:
        if kind == "p":
            primary = tuple(columns)
        elif kind == "u":
            uniques.append(tuple(columns))
        else:
            foreign.append(ForeignKey(tuple(columns), ref_table, tuple(ref_columns)))
    return primary, tuple(uniques), tuple(foreign)


# information_schema.columns.data_type -> cbo's type (numeric carries its precision and scale)
TYPES = {"bigint": T.BIGINT, "integer": T.INTEGER, "smallint": T.INTEGER, "double precision": T.DOUBLE,
         "real": T.DOUBLE, "character varying": T.VARCHAR, "character": T.VARCHAR, "text": T.VARCHAR,
         "boolean": T.BOOLEAN, "date": T.DATE, "timestamp without time zone": T.TIMESTAMP,
         "timestamp with time zone": T.TIMESTAMP}


def read_columns(conn: psycopg.Connection, schema: str, table: str) -> list[tuple[str, T.DataType, bool]] | None:
    """Name, cbo type and nullability of each column of ``schema.table`` (None: no such table);
    a column of a type cbo does not read is a CboError naming it."""
    rows = conn.execute(
        "select column_name, data_type, numeric_precision, numeric_scale, is_nullable "
        "from information_schema.columns where table_schema = %s and table_name = %s order by ordinal_position",
        (schema, table)).fetchall()
    if not rows:
        return None
    columns = []
    for name, data_type, precision, scale, nullable in rows:
        if data_type == "numeric":
            type_ = T.decimal(precision or 38, scale or 0)
        elif data_type in TYPES:
            type_ = TYPES[data_type]
        else:
            raise CboError(f"column {name} has unsupported type {data_type}")
        columns.append((name, type_, nullable == "YES"))
    return columns


def columns_of(source: Source, table: TableDef) -> tuple[ColumnInfo, ...]:
    """The columns of a catalog table of a PostgreSQL source."""
    with connect(address_of(source), what=f"source '{source.name}'") as conn:
        try:
            found = read_columns(conn, source.schema or "public", table.remote_name or table.name)
        except CboError as exc:
            raise CboError(f"table '{table.qualified_name}': {exc}") from None
    if found is None:
        raise CboError(f"table '{table.qualified_name}' does not exist in source '{source.name}' "
                       f"(looked for {source.remote_table(table)})")
    return tuple(ColumnInfo(*column) for column in found)


def key_bounds(source: Source, table: TableDef, key: str, min_rows: int) -> tuple[int, int] | None:
    """The bounds of a numeric key, when PostgreSQL estimates at least ``min_rows`` rows."""
    schema, name = source.schema or "public", table.remote_name or table.name
    with connect(address_of(source), what=f"source '{source.name}'") as conn:
        estimate = conn.execute("select c.reltuples from pg_class c join pg_namespace n on n.oid = c.relnamespace "
                                "where n.nspname = %s and c.relname = %s", (schema, name)).fetchone()
        if not estimate or estimate[0] < min_rows:
            return None
        row = conn.execute(sql.SQL("select min({k}), max({k}) from {t}").format(
            k=sql.Identifier(key), t=sql.Identifier(schema, name))).fetchone()
    return (int(row[0]), int(row[1])) if row and row[0] is not None else None
