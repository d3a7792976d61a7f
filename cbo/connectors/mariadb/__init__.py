"""The MariaDB connector: a JDBC source whose joins cbo orders itself (``STRAIGHT_JOIN``).

* SQL: sqlglot's ``mysql`` dialect (backtick quoting). MariaDB's LIKE escapes with a backslash
  and ``ESCAPE ''`` does not turn that off, so every backslash of a pattern is doubled.
* Capabilities: no FULL JOIN; LENGTH counts bytes; CAST's target types differ; no any_value;
  a boolean reads back as a number. MariaDB decides itself whether to merge a CTE into each
  reference, so a repeated aggregation is rendered (and charged) once per occurrence.
* Joins: MariaDB runs inner joins as nested loops in the order its optimizer picks from its
  own estimates, which take a filter it cannot estimate (``p_name LIKE '%green%'``) as keeping
  every row. cbo's estimates see it, so a pushed inner-join tree is listed in cbo's driving
  order (``cbo.exec.remote_join_order``) and pinned (``JoinOrder.PINNED``, ``pin_join_order``).
* Reads: Spark picks its dialect by URL prefix and has none for ``jdbc:mariadb:``, whose generic
  dialect would quote column names with double quotes (strings to MariaDB), so the URL reaches
  Spark as ``jdbc:mysql:`` with the MariaDB driver told to accept it. The driver streams with a
  positive fetch size.
* Statistics: the engine-independent tables ``mysql.table_stats`` / ``column_stats``
  (``cbo.connectors.mariadb.statistics``); keys and columns from ``information_schema``.
* Local server: ``cbo mariadb start`` (``cbo.connectors.mariadb.server``), text compared as
  Spark does (``utf8mb4_nopad_bin``).

Modules: ``client`` (PyMySQL connections, metadata), ``statistics``, ``loader``, ``server``. MariaDB has no
schemas inside a database: a catalog's ``schema`` is the database that holds the tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from cbo.catalog_types import ColumnInfo, Source, TableDef, TableKeys
from cbo.connectors.base import Connector, JoinOrder, RemoteCosts
from cbo.connectors.capabilities import COMMON_AGGREGATES, COMMON_FORMS, COMMON_FUNCTIONS, MOMENTS, Capabilities
from cbo.sqlgen import AddDays, LikeEscape, SqlDialect

if TYPE_CHECKING:
    from stats.model import TableStats

FETCH_SIZE = 10_000  # rows per round trip: the MariaDB driver streams with a positive fetch size
# a LIMIT above every row: keeps a query a block of its own (pin_join_order)
EVERY_ROW = "18446744073709551615"


class MariaDBConnector(Connector):
    dialect = "mysql"
    title = "MariaDB"
    subprotocols = ("mariadb", "mysql")
    sql = SqlDialect("mysql", like=LikeEscape.DOUBLE_BACKSLASH, add_days=AddDays.INTERVAL, nulls_order=False)
    capabilities = Capabilities(
        join_kinds=frozenset({"inner", "left", "right", "semi", "anti", "null_aware_anti"}),
        functions=COMMON_FUNCTIONS,
        forms=COMMON_FORMS,
        aggregates=COMMON_AGGREGATES | MOMENTS,
        boolean_output=False)
    rule_name = "PushSubplanToMariaDB"
    # MariaDB runs one query on one thread, with block nested-loop joins where PostgreSQL hashes.
    remote_costs = RemoteCosts(row=1.5e-7, agg_row=3e-7)
    join_order = JoinOrder.PINNED
    driver_class = "org.mariadb.jdbc.Driver"
    driver_jar = Path("/usr/share/java/mariadb-java-client.jar")
    parallel_reads = True
    server_command = "mariadb"

    def pin_join_order(self, query: exp.Select) -> exp.Select:
        # MariaDB merges derived tables into the query block around them and drops their
        # modifiers: only a modifier on every SELECT reaches the block the join ends up in.
        for select in query.find_all(exp.Select):
            select.set("operation_modifiers", [exp.var("STRAIGHT_JOIN")])
        # Spark's reader wraps the query (SELECT cols FROM (<query>) alias), a block without the
        # modifier that MariaDB would merge the query into (TPC-H Q9's join: 12.0 s so, 0.9 s
        # kept apart). A LIMIT above every row keeps the query a block of its own (its result
        # materialized); a partitioned read's range could then not reach its scans, so a split
        # query is never pinned (cbo.exec.remote).
        if query.args.get("limit") is None:
            query = query.limit(exp.Literal.number(EVERY_ROW))
        return query

    def spark_url(self, url: str) -> str:
        """``jdbc:mariadb:`` as ``jdbc:mysql:``, so that Spark uses its MySQL dialect, with
        ``permitMysqlScheme`` so that the MariaDB driver accepts it."""
        if not url.startswith("jdbc:mariadb:"):
            return url
        rest = url[len("jdbc:mariadb:"):]
        return f"jdbc:mysql:{rest}{'&' if '?' in rest else '?'}permitMysqlScheme"

    def spark_options(self, url: str) -> dict[str, str]:
        if not url.startswith("jdbc:mariadb:"):
            return {}   # jdbc:mysql: is MySQL's own driver's, if the user gave one
        return {**super().spark_options(url), "fetchsize": str(FETCH_SIZE)}

    def columns(self, source: Source, table: TableDef) -> tuple[ColumnInfo, ...]:
        from cbo.connectors.mariadb.client import columns_of

        return columns_of(source, table)

    def keys(self, source: Source) -> dict[str, TableKeys]:
        from cbo.connectors.mariadb import client

        address = client.address_of(source)
        found = {}
        with client.connect(address, what=f"source '{source.name}'") as conn:
            for name, table in source.tables.items():
                primary, uniques, foreign = client.read_keys(conn, source.schema or address.database,
                                                             table.remote_name or name)
                found[name] = TableKeys(primary, foreign, uniques)
        return found

    def fingerprint(self, source: Source, table: TableDef) -> str:
        from cbo.connectors.mariadb import client
        from cbo.connectors.mariadb.statistics import fingerprint

        address = client.address_of(source)
        with client.connect(address, what=f"source '{source.name}'") as conn:
            return fingerprint(conn, source.schema or address.database, table.remote_name or table.name)

    def collect(self, source: Source, table: TableDef, *, analyze: bool = False) -> TableStats:
        from cbo.connectors.mariadb import client
        from cbo.connectors.mariadb.statistics import collect

        address = client.address_of(source)
        with client.connect(address, what=f"source '{source.name}'") as conn:
            return collect(conn, source.schema or address.database, table.remote_name or table.name,
                           table.qualified_name, analyze=analyze)

    def key_bounds(self, source: Source, table: TableDef, key: str, min_rows: int) -> tuple[int, int] | None:
        from cbo.connectors.mariadb.client import key_bounds

        return key_bounds(source, table, key, min_rows)

    def local_server(self, root: Path | None = None) -> Any:
        from cbo.connectors.mariadb.server import LocalMariaDB

        return LocalMariaDB(root)


MARIADB = MariaDBConnector()
