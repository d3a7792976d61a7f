"""MariaDB as a JDBC source seen from Python: addresses, connections, keys from metadata.

Spark reaches MariaDB through its JDBC source (``cbo.engines.spark``); cbo itself talks to it
with PyMySQL to load data, read keys and collect statistics. Both start from the catalog's URL,
``jdbc:mariadb://host:port/database`` (``jdbc:mysql://`` is read the same way). MariaDB has no
schemas inside a database: a catalog's ``schema`` is the MariaDB database that holds the tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from cbo.engines.jdbc_url import redact as redact  # re-exported: callers name it here
from cbo.engines.jdbc_url import url_parts
from cbo.errors import SourceUnreachable
from cbo.sources.catalog import ForeignKey, Source

if TYPE_CHECKING:
    import pymysql

DRIVER_CLASS = "org.mariadb.jdbc.Driver"
DEFAULT_PORT = 3306


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


def connect(address: MariaAddress, *, database: str | None = None,
            what: str = "MariaDB") -> pymysql.Connection:
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


def read_keys(conn: pymysql.Connection, database: str, table: str) -> tuple[
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
