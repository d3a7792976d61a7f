"""The connectors: one object per type of JDBC source (``cbo.connectors.base.Connector``).

``CONNECTORS`` lists them; a catalog's JDBC source gets its connector from the URL's
subprotocol (``jdbc:postgresql:``) or the catalog's ``dialect``, and everything else asks the
connector. A JDBC source of another dialect gets a ``GenericJdbc`` connector, which cbo only
reads tables through.
"""

from __future__ import annotations

from cbo.catalog_types import Source
from cbo.connectors.base import Connector, GenericJdbc, JoinOrder, NotSupported, RemoteCosts
from cbo.connectors.mariadb import MARIADB
from cbo.connectors.postgres import POSTGRES
from cbo.connectors.sqlite import SQLITE
from cbo.errors import CboError

CONNECTORS: tuple[Connector, ...] = (POSTGRES, MARIADB, SQLITE)

# JDBC subprotocols of databases cbo reads through Spark without a connector of their own.
GENERIC_DIALECTS = {"db2": "db2", "sqlserver": "tsql", "oracle": "oracle", "duckdb": "duckdb"}


def by_dialect(dialect: str) -> Connector:
    """The connector of a dialect (sqlglot's name, as a catalog's ``dialect`` gives it); a
    ``GenericJdbc`` one for a dialect sqlglot knows and no connector claims; ValueError else."""
    for connector in CONNECTORS:
        if connector.dialect == dialect:
            return connector
    from sqlglot.dialects.dialect import Dialect

    try:
        Dialect.get_or_raise(dialect)
    except ValueError:
        raise ValueError(f"unknown SQL dialect {dialect!r}") from None
    return GenericJdbc(dialect, tuple(s for s, d in GENERIC_DIALECTS.items() if d == dialect))


def by_subprotocol(subprotocol: str) -> Connector | None:
    """The connector serving ``jdbc:<subprotocol>:`` URLs, or None when none is known."""
    for connector in CONNECTORS:
        if subprotocol in connector.subprotocols:
            return connector
    dialect = GENERIC_DIALECTS.get(subprotocol)
    return by_dialect(dialect) if dialect is not None else None


def by_server_command(command: str) -> Connector:
    """The connector whose local server ``cbo <command>`` manages."""
    for connector in with_servers():
        if connector.server_command == command:
            return connector
    raise CboError(f"no local server named {command!r} (expected one of: "
                   f"{', '.join(c.server_command or '' for c in with_servers())})")


def with_servers() -> tuple[Connector, ...]:
    """The connectors that run a local server (``cbo <server_command> start``)."""
    return tuple(c for c in CONNECTORS if c.server_command is not None)


def connector_of(source: Source) -> Connector:
    """The connector of a JDBC source (a CboError naming the source for a Spark one)."""
    if not isinstance(source.connector, Connector):
        raise CboError(f"source '{source.name}' is a {source.type} source, not a JDBC one")
    return source.connector


__all__ = ["CONNECTORS", "MARIADB", "POSTGRES", "SQLITE", "Connector", "GenericJdbc", "JoinOrder", "NotSupported",
           "RemoteCosts", "by_dialect", "by_server_command", "by_subprotocol", "connector_of", "with_servers"]
