"""The PostgreSQL connector: a JDBC source that runs whole subplans, plans its own joins, and
keeps statistics cbo reads without scanning.

* SQL: LIKE is written with ``ESCAPE ''`` (PostgreSQL's LIKE escapes with a backslash by
  default), a shared aggregation is a ``MATERIALIZED`` CTE, ``any_value`` the first element of
  ``array_agg`` (PostgreSQL has ``any_value`` only from 16).
* Joins: a pushed inner-join tree is one flat FROM list, each table before those it references
  (``JoinOrder.FLAT``): PostgreSQL estimates a join by the first matching foreign key in FROM's
  order.
* Reads: a large table is read in key ranges; a pushed query read whole (``fetchsize`` 0) runs
  with parallel workers, one read through a cursor (a fetch size) without.
* Statistics: ``pg_class`` and ``pg_stats`` (``cbo.connectors.postgres.statistics``), ANALYZE first when
  asked; keys from ``pg_constraint``; columns from ``information_schema``.
* Local server: ``cbo postgres start`` (``cbo.connectors.postgres.server``).

Modules: ``client`` (psycopg connections, metadata), ``statistics`` (the collector), ``loader``
(Parquet into a schema), ``server`` (the local server).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from cbo.catalog_types import ColumnInfo, Source, TableDef, TableKeys
from cbo.connectors.base import Connector, JoinOrder, RemoteCosts
from cbo.connectors.capabilities import (
    COMMON_AGGREGATES,
    COMMON_FORMS,
    COMMON_FUNCTIONS,
    JOIN_KINDS,
    MOMENTS,
    Capabilities,
)
from cbo.sqlgen import LikeEscape, SqlDialect

if TYPE_CHECKING:
    from cbo.ir import types as T
    from stats.model import TableStats

# A pushed query estimated to return at most this many rows is read whole (``fetchsize`` 0);
# a larger one through a cursor, this many rows per round trip.
FETCH_SIZE = 10_000


class PostgresConnector(Connector):
    dialect = "postgres"
    title = "PostgreSQL"
    subprotocols = ("postgresql",)
    sql = SqlDialect("postgres", like=LikeEscape.ESCAPE_OFF, materialized_ctes=True, any_value_as_array=True,
                     raise_error="cbo_raise_error", double_moments=True)
    capabilities = Capabilities(
        join_kinds=frozenset(JOIN_KINDS),
        functions=COMMON_FUNCTIONS | {"length", "concat"},
        forms=COMMON_FORMS | {"CAST"},
        aggregates=COMMON_AGGREGATES | MOMENTS | {"any_value"},
        boolean_output=True, shares_repeated=True,
        operators=frozenset({"join", "aggregate", "limit", "window", "grouping_sets"}))
    rule_name = "PushSubplanToPostgres"
    # Measured (Spark <- PostgreSQL, TPC-H SF 1): Q3 as one remote query in 1.09 s, its
    # operators reading about 8 million rows. The shipped profile's calibrated values replace these.
    remote_costs = RemoteCosts(row=5e-8, agg_row=1e-7)
    join_order = JoinOrder.FLAT
    driver_class = "org.postgresql.Driver"
    driver_jar = Path("/usr/share/java/postgresql.jar")
    parallel_reads = True
    server_command = "postgres"
    native_baseline = True

    def query_options(self, whole_result: bool, columns: tuple[tuple[str, T.DataType], ...]) -> dict[str, str]:
        # A fetch size makes Spark turn autocommit off and the driver read through a portal a
        # batch at a time (else it holds the whole result in memory before the first row), and
        # PostgreSQL runs such a portal without parallel workers. A small result is read at
        # once: fetch size 0 (Spark 4's default for PostgreSQL is 1000), autocommit stays on.
        return {"fetchsize": "0" if whole_result else str(FETCH_SIZE)}

    def columns(self, source: Source, table: TableDef) -> tuple[ColumnInfo, ...]:
        from cbo.connectors.postgres.client import columns_of

        return columns_of(source, table)

    def keys(self, source: Source) -> dict[str, TableKeys]:
        from cbo.connectors.postgres import client

        found = {}
        with client.connect(client.address_of(source), what=f"source '{source.name}'") as conn:
            for name, table in source.tables.items():
                primary, uniques, foreign = client.read_keys(conn, source.schema or "public", table.remote_name or name)
                found[name] = TableKeys(primary, foreign, uniques)
        return found

    def fingerprint(self, source: Source, table: TableDef) -> str:
        from cbo.connectors.postgres import client
        from cbo.connectors.postgres.statistics import fingerprint

        with client.connect(client.address_of(source), what=f"source '{source.name}'") as conn:
            return fingerprint(conn, source.schema or "public", table.remote_name or table.name)

    def collect(self, source: Source, table: TableDef, *, analyze: bool = False) -> TableStats:
        from cbo.connectors.postgres import client
        from cbo.connectors.postgres.statistics import collect

        with client.connect(client.address_of(source), what=f"source '{source.name}'") as conn:
            return collect(conn, source.schema or "public", table.remote_name or table.name, table.qualified_name,
                           analyze=analyze)

    def key_bounds(self, source: Source, table: TableDef, key: str, min_rows: int) -> tuple[int, int] | None:
        from cbo.connectors.postgres.client import key_bounds

        return key_bounds(source, table, key, min_rows)

    def local_server(self, root: Path | None = None) -> Any:
        from cbo.connectors.postgres.server import LocalPostgres

        return LocalPostgres(root)


POSTGRES = PostgresConnector()
