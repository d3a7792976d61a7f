"""A connector: everything cbo knows about one type of JDBC source, in one object.

The shape follows Calcite's ``SqlDialect`` with its ``JdbcRules``, Trino's ``JdbcClient`` and
DataFusion's ``TableProvider``: the rest of cbo asks a source's connector (``Source.connector``)
and never branches on a dialect's name. A connector says

* **how to write SQL for it** (``sql``, a ``cbo.sqlgen.SqlDialect``) and **what it evaluates as
  Spark does** (``capabilities``; None: nothing is pushed into it beyond a table read). Its
  connector rule (``cbo.memo.rules.jdbc_pushdown``, named ``rule_name``) is registered for it;
* **what its work costs** (``remote_costs``: the defaults of the cost profile's
  ``remote_row_<dialect>`` and ``remote_agg_row_<dialect>``, which calibration refits);
* **how a pushed join keeps a good order** (``join_order``; ``pin_join_order`` for a source
  whose own optimizer misjudges what cbo can estimate, MariaDB's ``STRAIGHT_JOIN``);
* **how Spark reads it** (driver, URL, reader options; ``parallel_reads``: whether reads are
  split into key ranges);
* **what it knows of its tables**: columns, keys, statistics (collected from the database's
  own catalog or by scanning), and a fingerprint that changes when the data does;
* **its local server** (``server_command``: ``cbo <command> start|stop|status|destroy``), the
  throwaway database cbo runs for demos and tests under the cache directory.

A hook a source type has no answer for raises ``NotSupported`` with a one-line reason; callers
turn that into the user's error. ``cbo.connectors`` lists the connectors; adding one is one
module and one line there (``docs/contributing-connector.md``).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from cbo.catalog_types import ColumnInfo, ServerAddress, Source, TableDef, TableKeys
from cbo.connectors.capabilities import Capabilities
from cbo.errors import CboError, SourceUnreachable
from cbo.paths import cache_dir
from cbo.sqlgen import SqlDialect

if TYPE_CHECKING:
    from cbo.ir import types as T
    from stats.model import TableStats


class NotSupported(CboError):
    """A source type has no answer for a hook (no statistics, no local server, ...)."""


class JoinOrder(Enum):
    """How a pushed tree of inner joins is written so that the source joins in a good order."""

    # each join its own SELECT over derived tables; the source orders them itself
    NESTED = "nested"
    # one flat FROM list, each table before the tables it references: the source plans the
    # order with its foreign-key estimates (PostgreSQL takes the first matching key in FROM order)
    FLAT = "flat"
    # the flat list in cbo's driving order (``cbo.exec.remote_join_order``), pinned by
    # ``pin_join_order``: the source's optimizer misjudges filters cbo can estimate
    PINNED = "pinned"


@dataclass(frozen=True)
class RemoteCosts:
    """Default seconds a source works per row its pushed operators read (``row``), and per row
    fed to its aggregations (``agg_row``): the cost profile's ``remote_row_<dialect>`` and
    ``remote_agg_row_<dialect>`` unless a calibrated profile gives its own."""

    row: float
    agg_row: float


class Connector:
    """One source type. Subclasses set the attributes and override the hooks they have; the
    defaults describe a plain JDBC source that cbo only reads tables from."""

    dialect: str = ""                 # sqlglot's name; the catalog's ``dialect``; a stable key
    title: str = "JDBC"               # what messages call it ("PostgreSQL")
    subprotocols: tuple[str, ...] = ()   # the JDBC URL schemes it serves (``jdbc:<subprotocol>:``)
    sql: SqlDialect = SqlDialect("")
    capabilities: Capabilities | None = None
    rule_name: str | None = None      # its connector rule's name (None: no pushdown rule)
    remote_costs: RemoteCosts | None = None
    join_order: JoinOrder = JoinOrder.NESTED
    driver_class: str | None = None   # the JDBC driver's class for Spark (None: Spark finds it)
    driver_jar: Path | None = None    # where Debian installs the driver
    parallel_reads: bool = False      # reads may be split into key ranges read at once
    server_command: str | None = None   # ``cbo <command> start``: its local server, if it has one
    # the database and user cbo's local server creates (the servers' modules name them too)
    local_database: str = "cbo"
    local_user: str = "cbo"
    # the query text can run on the server itself, as the workload runner's baseline of that name
    native_baseline: bool = False
    schemas: bool = True              # a source given by URL may name a schema (``schema``)

    def __repr__(self) -> str:
        return f"<connector {self.dialect}>"

    # -- the cost profile's quantities -----------------------------------------------------------

    @property
    def row_quantity(self) -> str:
        return f"remote_row_{self.dialect}"

    @property
    def agg_row_quantity(self) -> str:
        return f"remote_agg_row_{self.dialect}"

    def cost_defaults(self) -> dict[str, float]:
        """The connector's quantities of the cost profile with their default constants."""
        if self.remote_costs is None:
            return {}
        return {self.row_quantity: self.remote_costs.row, self.agg_row_quantity: self.remote_costs.agg_row}

    # -- rendering -------------------------------------------------------------------------------

    def remote_table(self, source: Source, table: TableDef) -> exp.Table:
        """The table as the source names it, quoted (built from identifiers: a remote name may
        hold any character)."""
        return exp.Table(this=exp.to_identifier(table.remote_name or table.name, quoted=True),
                         db=exp.to_identifier(source.schema, quoted=True) if source.schema else None)

    def render(self, query: exp.Expr) -> str:
        return query.sql(dialect=self.sql.name)

    def pin_join_order(self, query: exp.Select) -> exp.Select:
        """``query`` (a flat join listed in cbo's order) made to join in that order
        (``JoinOrder.PINNED``)."""
        raise NotSupported(f"{self.title} sources have no way to pin a join order")

    # -- Spark's JDBC reader ---------------------------------------------------------------------

    def spark_url(self, url: str) -> str:
        """The URL as Spark's reader should get it (Spark picks its dialect by the URL's prefix)."""
        return url

    def spark_options(self, url: str) -> dict[str, str]:
        """Reader options for every read of the source at ``url`` (the driver, the fetch size)."""
        return {"driver": self.driver_class} if self.driver_class else {}

    def query_options(self, whole_result: bool, columns: tuple[tuple[str, T.DataType], ...]) -> dict[str, str]:
        """Reader options for a pushed query: ``whole_result`` when its result is small enough to
        read in one fetch; ``columns`` its result's names and cbo types."""
        return {}

    def table_options(self, source: Source, table: TableDef) -> dict[str, str]:
        """Reader options for reading a table whole."""
        return {}

    # -- what the source knows of its tables -----------------------------------------------------

    def columns(self, source: Source, table: TableDef) -> tuple[ColumnInfo, ...]:
        """Names, cbo types and nullability of the table's columns, read from the database."""
        raise NotSupported(f"cannot read the columns of a {self.dialect or 'JDBC'} table yet (give it a parquet_copy)")

    def keys(self, source: Source) -> dict[str, TableKeys]:
        """The primary, unique and foreign keys the database declares for the source's tables,
        by catalog name (foreign keys name remote tables); empty where it declares none."""
        return {}

    def fingerprint(self, source: Source, table: TableDef) -> str:
        """A text that changes when the table's data does (stored statistics are fresh while
        it is the same)."""
        raise NotSupported(f"statistics for {self.dialect or 'JDBC'} sources are not supported yet")

    def collect(self, source: Source, table: TableDef, *, analyze: bool = False) -> TableStats:
        """The table's statistics (``stats.model``), named ``table.qualified_name``; with
        ``analyze`` the database refreshes its own first where it keeps any."""
        raise NotSupported(f"statistics for {self.dialect or 'JDBC'} sources are not supported yet")

    def key_bounds(self, source: Source, table: TableDef, key: str, min_rows: int) -> tuple[int, int] | None:
        """The smallest and largest value of a numeric key when the table has at least
        ``min_rows`` rows (a read split into key ranges), else None."""
        return None

    # -- the local server ------------------------------------------------------------------------

    def local_server(self, root: Path | None = None) -> Any:
        """cbo's local server of this type whose state is in ``root`` (default: the cache's
        ``<server_command>`` directory): ``start``, ``stop``, ``status``, ``state``, ``destroy``."""
        raise NotSupported(f"cbo runs no local {self.title} server")

    def default_server_root(self) -> Path:
        assert self.server_command is not None
        return cache_dir() / self.server_command

    def running_server(self, source: Source) -> ServerAddress:
        """The running local server of ``source``, or SourceUnreachable saying how to start it."""
        assert source.local_server is not None and self.server_command is not None
        info = self.local_server(source.local_server).state()
        if info is None or not self.server_answers(info):
            command = f"cbo {self.server_command} start"
            if source.local_server.resolve() != self.default_server_root().resolve():
                command = f"CBO_CACHE_DIR={source.local_server.parent} {command}"
            state = "is not running" if info is not None else "has not been created"
            raise SourceUnreachable(f"source '{source.name}' is cbo's local {self.title} ({source.local_server}), "
                                    f"which {state}: start it with `{command}`")
        return info

    def server_answers(self, info: Any) -> bool:
        """Whether the local server of ``info`` accepts connections now."""
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(2)
            return sock.connect_ex((info.host, info.port)) == 0

    def probe(self, source: Source) -> str | None:
        """Why ``source`` no longer answers (a failed query names it), or None."""
        from urllib.parse import urlsplit

        try:
            url = source.jdbc_url()  # a local server that stopped says so, and how to start it
        except CboError as exc:
            return str(exc)
        parts = urlsplit(url[len("jdbc:"):])
        if parts.port is None:
            return None
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(3)
            if sock.connect_ex((parts.hostname or "localhost", parts.port)) != 0:
                return f"{source.location()} does not answer"
        return None


class GenericJdbc(Connector):
    """A JDBC source of a dialect cbo has no connector for (DB2, SQL Server, Oracle, DuckDB):
    its tables are read whole through Spark, and their columns come from a Parquet copy."""

    def __init__(self, dialect: str, subprotocols: tuple[str, ...] = ()):
        self.dialect = dialect
        self.title = dialect
        self.subprotocols = subprotocols
        self.sql = SqlDialect(dialect)
