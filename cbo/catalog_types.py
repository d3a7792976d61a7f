"""What a catalog describes, as values: sources, their tables, keys and columns, Spark settings.

These are the catalog's nouns, shared by every layer (the connectors, the engines, the planner),
so they sit at the bottom and import nothing of cbo's above ``errors``. Reading and validating a
catalog file is ``cbo.sources.catalog``; what a source type does (its dialect, statistics, local
server) is its connector's (``cbo.connectors``), which a JDBC source holds as ``connector``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from cbo.errors import CatalogError
from cbo.ir import types as T
from cbo.jdbc_url import redact


@dataclass(frozen=True)
class ForeignKey:
    columns: tuple[str, ...]
    references: str
    referenced_columns: tuple[str, ...]


@dataclass(frozen=True)
class TableKeys:
    """The keys of one table: its primary key, unique keys and foreign keys."""

    primary_key: tuple[str, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    unique_keys: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    type: T.DataType
    nullable: bool


@dataclass(frozen=True)
class TableDef:
    """One table of a source, with the keys declared for it (or read from the database)."""

    name: str
    source: str
    path: Path | None = None          # spark sources: a file or directory
    format: str = "parquet"
    spark_table: str | None = None    # spark sources: a table of Spark's catalog
    remote_name: str | None = None    # jdbc sources: the table's name in the database
    parquet_copy: Path | None = None  # jdbc sources: an optional Parquet copy for DuckDB
    primary_key: tuple[str, ...] = ()
    unique_keys: tuple[tuple[str, ...], ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()

    @property
    def qualified_name(self) -> str:
        return f"{self.source}.{self.name}"


class ServerAddress(Protocol):
    """Where a running local server is and how to log in (``cbo.connectors.localserver``)."""

    @property
    def jdbc_url(self) -> str: ...

    @property
    def user(self) -> str | None: ...

    def password(self) -> str | None: ...


class SourceConnector(Protocol):
    """What a source needs of its connector (``cbo.connectors.base.Connector``): its dialect's
    name, what to call it, and a local server's address now."""

    dialect: str
    title: str

    def running_server(self, source: Source) -> ServerAddress: ...


@dataclass(frozen=True)
class Source:
    name: str
    type: str
    tables: dict[str, TableDef]
    url: str | None = None
    user: str | None = None
    password_env: str | None = None
    password_file: Path | None = None
    connector: SourceConnector | None = None   # jdbc sources: what the source type does
    schema: str | None = None
    where: str = ""  # "file:line" of the source's definition, for error messages
    local_server: Path | None = None  # jdbc sources: cbo's local server, by its state directory
    # jdbc sources: capabilities taken from / added to the connector's ([sources.NAME.pushdown],
    # ``cbo.connectors.capabilities``)
    pushdown_disable: tuple[str, ...] = ()
    pushdown_enable: tuple[str, ...] = ()

    @property
    def dialect(self) -> str | None:
        """The SQL dialect's name (sqlglot's; the catalog's ``dialect``), None for a Spark source."""
        return self.connector.dialect if self.connector is not None else None

    @property
    def server_kind(self) -> str:
        """What the source's database is called in messages ("PostgreSQL", "MariaDB", ...)."""
        return self.connector.title if self.connector is not None else "Spark"

    # A local server's address is looked up at each use, never kept: it changes when the
    # server restarts on another port.

    def _server(self) -> ServerAddress:
        assert self.connector is not None and self.local_server is not None
        return self.connector.running_server(self)

    def jdbc_url(self) -> str:
        """The JDBC URL to connect to now (for a local server: where it runs now)."""
        if self.local_server is not None:
            return self._server().jdbc_url
        assert self.url is not None
        return self.url

    def login_user(self) -> str | None:
        if self.local_server is not None:
            return self._server().user
        return self.user

    def location(self) -> str:
        """Where the source is, for messages (never with a password)."""
        if self.local_server is not None:
            return f"cbo's local {self.server_kind} ({self.local_server})"
        return redact(self.url) if self.url else "(no url)"

    def password(self) -> str | None:
        """The password, read now from the environment or the password file."""
        if self.local_server is not None:
            return self._server().password()
        if self.password_env:
            value = os.environ.get(self.password_env)
            if value is None:
                raise CatalogError(
                    f"{self.where}: source '{self.name}' takes its password from the environment "
                    f"variable {self.password_env}, which is not set")
            return value
        if self.password_file:
            try:
                return self.password_file.read_text().strip()
            except OSError as exc:
                raise CatalogError(
                    f"{self.where}: source '{self.name}': cannot read password_file "
                    f"{self.password_file}: {exc.strerror}") from None
        return None

    def remote_table(self, table: TableDef) -> str:
        """The table as the remote database names it, schema-qualified when a schema is set."""
        name = table.remote_name or table.name
        return f"{self.schema}.{name}" if self.schema else name


@dataclass(frozen=True)
class SparkSettings:
    master: str = "local[*]"
    driver_memory: str | None = None
    executor_memory: str | None = None
    jdbc_jars: tuple[str, ...] = ()
    jdbc_packages: tuple[str, ...] = ()
    conf: dict[str, str] = field(default_factory=dict)
    remote: str | None = None   # a Spark Connect server (sc://host:port): plans run there, not in a local driver


@dataclass(frozen=True)
class Catalog:
    sources: dict[str, Source]
    spark: SparkSettings = field(default_factory=SparkSettings)
    path: Path | None = None

    def tables(self) -> Iterable[TableDef]:
        for source in self.sources.values():
            yield from source.tables.values()

    def table(self, name: str) -> TableDef:
        """Look a table up by ``name`` or ``source.name``; ambiguous or unknown names are errors."""
        if "." in name:
            source_name, table_name = name.split(".", 1)
            source = self.sources.get(source_name)
            if source and table_name in source.tables:
                return source.tables[table_name]
        matches = [t for t in self.tables() if t.name == name]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            names = ", ".join(t.qualified_name for t in matches)
            raise CatalogError(f"table '{name}' is ambiguous: it exists as {names}")
        known = sorted(t.name for t in self.tables())
        raise CatalogError(f"unknown table '{name}'{closest(name, known)}")

    def source_of(self, table: TableDef) -> Source:
        return self.sources[table.source]

    def jdbc_sources(self) -> list[Source]:
        return [s for s in self.sources.values() if s.type == "jdbc"]


def closest(name: str, candidates: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the candidates closest to a misspelt ``name``, else ``""``."""
    import difflib

    close = difflib.get_close_matches(name, candidates, n=3)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
