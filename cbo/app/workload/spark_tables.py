"""The catalog's tables for Spark's own optimizer: the ``spark-default``, ``spark-cbo`` and
``spark-dsv2`` configurations cbo is measured against.

The query text is the same for all of them: the tables are visible under their plain names,
as Spark catalog tables (a catalog of Spark sources only) or as temporary views. The JDBC tables
have two sets of views, one over Spark's JDBC reader (``spark-default``) and one over
``JDBCTableCatalog`` tables (``spark-dsv2``); the views of the configuration about to run are
put in place before it runs (a few ``createOrReplaceTempView`` calls, milliseconds), so no SQL
is rewritten.
"""

from __future__ import annotations

import re
import time
from typing import Any

from cbo.app.progress import say
from cbo.errors import CboError
from cbo.sources.catalog import Catalog, Source

# Spark 4.3's JDBC table catalog and the settings that let it push joins, aggregates and
# top-N into the database (names from Spark's JDBCOptions and SQLConf).
JDBC_TABLE_CATALOG = "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog"
DSV2_JOIN_PUSHDOWN = "spark.sql.optimizer.datasourceV2JoinPushdown"
DSV2_PUSHDOWN_OPTIONS = {"pushDownPredicate": "true", "pushDownAggregate": "true", "pushDownLimit": "true",
                         "pushDownOffset": "true", "pushDownJoin": "true"}
SPARK_CBO_CONF = {"spark.sql.cbo.enabled": "true", "spark.sql.cbo.joinReorder.enabled": "true",
                  "spark.sql.statistics.histogram.enabled": "true"}


class conf:
    """Set Spark SQL settings for a block, restoring them afterwards."""

    def __init__(self, spark: Any, values: dict[str, str]):
        self.spark, self.values = spark, values
        self.saved: dict[str, str | None] = {}

    def __enter__(self) -> None:
        for key, value in self.values.items():
            self.saved[key] = self.spark.conf.get(key, None)
            self.spark.conf.set(key, value)

    def __exit__(self, *exc: object) -> None:
        for key, value in self.saved.items():
            if value is None:
                self.spark.conf.unset(key)
            else:
                self.spark.conf.set(key, value)


class SparkTables:
    """The catalog's tables for Spark's own optimizer.

    For all-spark: Spark catalog tables (external, over the same Parquet files) in two
    databases, as they are and analyzed for Spark's CBO. For placements with JDBC sources:
    temporary views named after the tables, over Spark's JDBC reader (``jdbc``) or over the
    DSv2 ``JDBCTableCatalog`` (``dsv2``); Parquet tables are read alike in both.
    """

    def __init__(self, spark: Any, catalog: Catalog):
        self.spark = spark
        self.catalog = catalog
        self.views: dict[str, dict[str, Any]] = {}   # kind -> table -> DataFrame
        self.current_views: str | None = None

    # -- all-spark: catalog tables ------------------------------------------------------------------

    def create(self, database: str) -> None:
        self.spark.sql(f"CREATE DATABASE IF NOT EXISTS {database}")
        for table in self.catalog.tables():
            path = str(table.path).replace("'", "''")
            self.spark.sql(f"DROP TABLE IF EXISTS {database}.{table.name}")
            self.spark.sql(f"CREATE TABLE {database}.{table.name} USING {table.format} LOCATION '{path}'")

    def analyze(self, database: str) -> float:
        started = time.perf_counter()
        with conf(self.spark, {"spark.sql.statistics.histogram.enabled": "true"}):
            for table in self.catalog.tables():
                say(f"ANALYZE {database}.{table.name} (all columns, histograms)")
                self.spark.sql(f"ANALYZE TABLE {database}.{table.name} COMPUTE STATISTICS FOR ALL COLUMNS")
        return time.perf_counter() - started

    def run(self, database: str, sql: str, settings: dict[str, str]) -> list[tuple]:
        self.spark.catalog.setCurrentDatabase(database)
        try:
            with conf(self.spark, settings):
                return [tuple(r) for r in self.spark.sql(sql).collect()]
        finally:
            self.spark.catalog.setCurrentDatabase("default")

    # -- JDBC placements: temporary views -----------------------------------------------------------

    def prepare_views(self, kind: str) -> None:
        """Build the DataFrames of one set of views (``jdbc`` or ``dsv2``)."""
        from cbo.engines.spark import read_table

        if kind in self.views:
            return
        frames = {}
        for table in self.catalog.tables():
            source = self.catalog.source_of(table)
            if kind == "dsv2" and source.type != "spark":
                name = dsv2_catalog(self.spark, source)
                namespace = f"`{source.schema}`." if source.schema else ""
                frames[table.name] = self.spark.table(f"{name}.{namespace}`{table.remote_name or table.name}`")
            else:
                frames[table.name] = read_table(self.spark, self.catalog, table)
        self.views[kind] = frames

    def run_views(self, kind: str, sql: str, settings: dict[str, str]) -> list[tuple]:
        if self.current_views != kind:
            for name, frame in self.views[kind].items():
                frame.createOrReplaceTempView(name)
            self.current_views = kind
        with conf(self.spark, settings):
            return [tuple(r) for r in self.spark.sql(sql).collect()]


def dsv2_catalog(spark: Any, source: Source) -> str:
    """Register Spark's ``JDBCTableCatalog`` for one JDBC source (once) and return its name.

    The password is set only until the catalog is loaded (Spark instantiates it on first use
    and keeps the instance), then removed from the session's settings, so that no later dump
    of the settings holds it; it is never printed.
    """
    from cbo.connectors import connector_of

    name = "cbo_dsv2_" + re.sub(r"\W", "_", source.name)
    prefix = f"spark.sql.catalog.{name}"
    if spark.conf.get(prefix, None) == JDBC_TABLE_CATALOG:
        return name
    url = source.jdbc_url()
    connector = connector_of(source)   # the URL and reader options Spark reads the source with
    options = {**DSV2_PUSHDOWN_OPTIONS, "url": connector.spark_url(url), **connector.spark_options(url)}
    user = source.login_user()
    if user:
        options["user"] = user
    spark.conf.set(prefix, JDBC_TABLE_CATALOG)
    for key, value in options.items():
        spark.conf.set(f"{prefix}.{key}", value)
    password = source.password()
    if password is not None:
        spark.conf.set(f"{prefix}.password", password)
    try:
        spark.sql(f"SHOW NAMESPACES IN {name}").collect()   # loads (and keeps) the catalog
    except Exception as exc:
        from cbo.engines.spark import spark_failure

        raise CboError(f"spark-dsv2: cannot open source '{source.name}' ({source.location()}) through "
                       f"JDBCTableCatalog: {spark_failure(exc) or type(exc).__name__}") from None
    finally:
        spark.conf.unset(f"{prefix}.password")
    return name
