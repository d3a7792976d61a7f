"""MariaDB seen from Python: addresses, connections, columns and keys from metadata.

Spark reaches MariaDB through its JDBC source (``cbo.engines.spark``); cbo itself talks to it
with PyMySQL to load data, read columns and keys, and collect statistics. Both start from the catalog's URL,
``jdbc:mariadb://host:port/database`` (``jdbc:mysql://`` is read the same way). MariaDB has no
schemas inside a database: a catalog's ``schema`` is the MariaDB database that holds the tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from cbo.catalog_types import ColumnInfo, ForeignKey, Source, TableDef
from cbo.errors import CboError, SourceUnreachable
from cbo.ir import types as T
from cbo.jdbc_url import redact as redact  # re-exported: callers name it here
from cbo.jdbc_url import url_parts

DEFAULT_PORT = 3306
# A PyMySQL connection (PyMySQL ships no type information).
Connection = Any


@dataclass(frozen=True)
class MariaAddress:
    host: str
    port: int
    database: str
    user: str | None = None
    password: str | None = None

    def describe(self) -> str:
        return f"{self.host}:{self.port}/{self.database}"


def parse_url(url: str, user: str | None = None, password: str | None = None) -> MariaAddress:
    """Parse ``jdbc:mariadb://h:p/db?user=..`` (or ``mysql``, with or without ``jdbc:``)."""
    parts = url_parts(url, ("mariadb", "mysql"), "MariaDB", DEFAULT_PORT, user, password)
    return MariaAddress(parts.host, parts.port, parts.database, parts.user, parts.password)


def address_of(source: Source) -> MariaAddress:
    """Where to connect for ``source`` now (a local server's current port), with its password."""
    return parse_url(source.jdbc_url(), source.login_user(), source.password())


def connect(address: MariaAddress, *, database: str | None = None, what: str = "MariaDB") -> Connection:
    """A PyMySQL connection (autocommit), or :class:`SourceUnreachable` in one line naming the server."""
    import pymysql

    try:
        return pymysql.connect(host=address.host, port=address.port, user=address.user or "",
                               password=address.password or "", database=database or address.database or None,
                               autocommit=True, connect_timeout=10, charset="utf8mb4")
    except pymysql.err.MySQLError as exc:
        raise SourceUnreachable(f"cannot connect to {what} at {address.describe()}: {reason(exc)}") from None


def reason(exc: BaseException) -> str:
    """The server's message of a PyMySQL error, without its numeric code."""
    args: tuple[object, ...] = tuple(getattr(exc, "args", ()))
    if len(args) >= 2 and isinstance(args[1], str):
        return args[1].splitlines()[0]
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def sql_string(value: str) -> str:
    """A string literal in MariaDB's syntax (quotes and backslashes escaped by sqlglot)."""
    return exp.Literal.string(value).sql(dialect="mysql")


def identifier(*parts: str) -> str:
    """A (qualified) identifier quoted with backticks by sqlglot."""
    return ".".join(exp.to_identifier(p, quoted=True).sql(dialect="mysql") for p in parts)


def read_keys(conn: Connection, database: str, table: str) -> tuple[
        tuple[str, ...], tuple[tuple[str, ...], ...], tuple[ForeignKey, ...]]:
    """Primary key, unique keys and foreign keys of ``database.table`` from information_schema."""
    with conn.cursor() as cur:
        cur.execute(
            "select tc.constraint_type, tc.constraint_name, k.column_name, k.referenced_table_name, "
            "k.referenced_column_name from information_schema.table_constraints tc "
            "join information_schema.key_column_usage k on k.constraint_schema = tc.constraint_schema "
            "and k.table_name = tc.table_name and k.constraint_name = tc.constraint_name "
            "where tc.table_schema = %s and tc.table_name = %s "
            "and tc.constraint_type in ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY') "
            "order by tc.constraint_name, k.ordinal_position", (database, table))
        rows = cur.fetchall()
    grouped: dict[tuple[str, str], list[tuple[str, str | None, str | None]]] = {}
    for kind, name, column, ref_table, ref_column in rows:
        grouped.setdefault((kind, name), []).append((column, ref_table, ref_column))
    primary: tuple[str, ...] = ()
    uniques: list[tuple[str, ...]] = []
    foreign: list[ForeignKey] = []
    for (kind, _), columns in grouped.items():
        names = tuple(c for c, _, _ in columns)
        if kind == "PRIMARY KEY":
            primary = names
        elif kind == "UNIQUE":
            uniques.append(names)
        else:
            foreign.append(ForeignKey(names, str(columns[0][1]), tuple(str(r) for _, _, r in columns)))
    return primary, tuple(uniques), tuple(foreign)


# MariaDB's information_schema.columns.data_type; tinyint(1) is MariaDB's boolean.
TYPES = {"bigint": T.BIGINT, "int": T.INTEGER, "mediumint": T.INTEGER, "smallint": T.INTEGER,
         "tinyint": T.INTEGER, "double": T.DOUBLE, "float": T.DOUBLE, "varchar": T.VARCHAR,
         "char": T.VARCHAR, "text": T.VARCHAR, "mediumtext": T.VARCHAR, "longtext": T.VARCHAR,
         "tinytext": T.VARCHAR, "date": T.DATE, "datetime": T.TIMESTAMP, "timestamp": T.TIMESTAMP}


def columns_of(source: Source, table: TableDef) -> tuple[ColumnInfo, ...]:
    """The columns of a catalog table of a MariaDB source, from information_schema."""
    address = address_of(source)
    database = source.schema or address.database
    with connect(address, what=f"source '{source.name}'") as conn, conn.cursor() as cur:
        cur.execute(
            "select column_name, data_type, column_type, numeric_precision, numeric_scale, is_nullable "
            "from information_schema.columns where table_schema = %s and table_name = %s order by ordinal_position",
            (database, table.remote_name or table.name))
        rows = cur.fetchall()
    if not rows:
        raise CboError(f"table '{table.qualified_name}' does not exist in source '{source.name}' "
                       f"(looked for {source.remote_table(table)})")
    columns = []
    for name, data_type, column_type, precision, scale, nullable in rows:
        if data_type == "decimal":
            type_ = T.decimal(precision or 38, scale or 0)
        elif column_type == "tinyint(1)":
            type_ = T.BOOLEAN
        elif data_type in TYPES:
            type_ = TYPES[data_type]
        else:
            raise CboError(f"table '{table.qualified_name}': column {name} has unsupported type {column_type}")
        columns.append(ColumnInfo(name, type_, nullable == "YES"))
    return tuple(columns)


def key_bounds(source: Source, table: TableDef, key: str, min_rows: int) -> tuple[int, int] | None:
    """The bounds of a numeric key, when InnoDB estimates at least ``min_rows`` rows."""
    address = address_of(source)
    database, name = source.schema or address.database, table.remote_name or table.name
    with connect(address, what=f"source '{source.name}'") as conn, conn.cursor() as cur:
        # InnoDB's row estimate (information_schema.tables.table_rows) is free; counting is not.
        cur.execute("select table_rows from information_schema.tables where table_schema = %s and table_name = %s",
                    (database, name))
        estimate = cur.fetchone()
        if not estimate or estimate[0] is None or estimate[0] < min_rows:
            return None
        column = exp.column(key, quoted=True)
        cur.execute(exp.select(exp.func("min", column), exp.func("max", column))
                    .from_(exp.table_(name, db=database, quoted=True)).sql(dialect="mysql"))
        row = cur.fetchone()
    return (int(row[0]), int(row[1])) if row and row[0] is not None else None
