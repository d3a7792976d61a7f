"""The systems whose estimates the harness compares, each behind one small class.

Every system sees the same sub-plan, rendered by cbo's SQL generator in its dialect
(``to_sql``: a sub-plan that reads a CTE computed above it defines that CTE itself):
* ``Truth``: COUNT(*) in DuckDB over tables loaded from the Parquet files;
* ``CboSystem``: cbo's estimator over the statistics stored for the catalog (timed); as
  ``cbo_upper``, its pessimistic mode (join sets bounded from above);
* ``DuckDBSystem``: DuckDB's EXPLAIN estimate over the same tables;
* ``PostgresSystem``: PostgreSQL's EXPLAIN estimate (``Plan Rows``) on the loaded database,
  with the statistics its own ANALYZE keeps (default statistics target);
* ``SparkSystem``: Spark's optimized-plan row count with its CBO on, after ``ANALYZE TABLE ...
  COMPUTE STATISTICS FOR ALL COLUMNS`` with histograms.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import duckdb
from sqlglot import exp

from benchmarks.cardinality import duck
from cbo.connectors import POSTGRES
from cbo.estimate import Estimator
from cbo.ir.operators import Plan, Scan
from cbo.sources.catalog import Catalog
from cbo.sqlgen import name_of, to_sql


def names_of(plan: Plan) -> tuple[str, ...]:
    return tuple(name_of(c) for c in plan.output)


class Truth:
    """True counts; ``known`` maps a sub-plan's digest (``digest``) to a count taken earlier
    (``--true-counts-from``), so a run that only re-times the estimates counts nothing again."""

    name = "true"

    def __init__(self, catalog: Catalog, time_limit: float, known: dict[str, int] | None = None):
        self.connection = duckdb.connect()
        duck.load_tables(self.connection, {t.name: t.path for t in catalog.tables() if t.path is not None})
        self.time_limit = time_limit
        self.known = dict(known or {})

    def sql(self, plan: Plan) -> str:
        return to_sql(plan, names_of(plan), "duckdb")

    def digest(self, plan: Plan) -> str:
        """Identifies a sub-plan across runs: a hash of its DuckDB SQL."""
        return hashlib.sha256(self.sql(plan).encode()).hexdigest()[:16]

    def count(self, plan: Plan) -> int:
        found = self.known.get(self.digest(plan))
        if found is not None:
            return found
        return duck.count(self.connection, self.sql(plan), self.time_limit)


class DuckDBSystem:
    name = "duckdb"

    def __init__(self, truth: Truth):
        self.truth = truth

    def estimate(self, plan: Plan) -> float | None:
        return duck.estimate(self.truth.connection, self.truth.sql(plan))


class CboSystem:
    """cbo's estimator; with ``upper``, its pessimistic mode (``cardinalities=upper``), named
    ``cbo_upper``."""

    def __init__(self, stats: dict[str, Any], upper: bool = False):
        self.name = "cbo_upper" if upper else "cbo"
        self.estimator = Estimator(stats, upper=upper)
        self.last_ms = 0.0
        self.last_cpu_ms = 0.0
        self.last_cold_ms = 0.0
        self.last_notes: list[str] = []

    def estimate(self, plan: Plan) -> float:
        """Estimated twice, each time in an estimation of its own (``Estimator.estimate``):
        ``last_cold_ms`` includes loading the samples and building the sample join indexes the
        first time a table or column pair is met; ``last_ms`` is the estimate with statistics
        loaded, and ``last_cpu_ms`` the same estimate's CPU time. On a shared 2-core machine the
        wall-clock figure also counts time the process waited for a core; the CPU time is the
        estimator's own work."""
        started = time.perf_counter()
        self.estimator.estimate(plan)
        self.last_cold_ms = (time.perf_counter() - started) * 1000
        started, started_cpu = time.perf_counter(), time.process_time()
        result = self.estimator.estimate(plan)
        self.last_cpu_ms = (time.process_time() - started_cpu) * 1000
        self.last_ms = (time.perf_counter() - started) * 1000
        self.last_notes = sorted(result.notes)
        return result.rows


class PostgresSystem:
    name = "postgres"

    def __init__(self, catalog: Catalog):
        from cbo.connectors.postgres import client as postgres

        source = catalog.jdbc_sources()[0]
        self.schema = source.schema
        self.tables = {t.name: t.remote_name or t.name for t in catalog.tables()}
        self.connection = postgres.connect(postgres.address_of(source), what=f"source '{source.name}'")

    def _table(self, scan: Scan) -> exp.Expression:
        local = scan.table.split(".", 1)[-1]
        return exp.Table(this=exp.to_identifier(self.tables.get(local, local), quoted=True),
                         db=exp.to_identifier(self.schema, quoted=True) if self.schema else None)

    def estimate(self, plan: Plan) -> float:
        sql = to_sql(plan, names_of(plan), POSTGRES.sql, self._table)
        (document,) = self.connection.execute("explain (format json) " + sql).fetchone()  # type: ignore[misc]
        if isinstance(document, str):
            document = json.loads(document)
        return float(document[0]["Plan"]["Plan Rows"])


class SparkSystem:
    name = "spark"

    def __init__(self, catalog: Catalog, progress=lambda _: None):  # type: ignore[no-untyped-def]
        from cbo.engines.spark import spark_session

        self.spark = spark_session(catalog.spark)
        self.spark.conf.set("spark.sql.cbo.enabled", "true")
        self.spark.conf.set("spark.sql.cbo.joinReorder.enabled", "true")
        self.spark.conf.set("spark.sql.statistics.histogram.enabled", "true")
        self.spark.sql("create database if not exists cbo_cardinality")
        for table in catalog.tables():
            if table.path is None:
                continue
            progress(f"Spark: ANALYZE TABLE {table.name} with histograms")
            target = exp.Table(this=exp.to_identifier(table.name, quoted=True),
                               db=exp.to_identifier("cbo_cardinality", quoted=True)).sql(dialect="spark")
            location = exp.Literal.string(str(table.path)).sql(dialect="spark")
            self.spark.sql(f"create table if not exists {target} using parquet location {location}")
            self.spark.sql(f"analyze table {target} compute statistics for all columns")
        self.spark.sql("use cbo_cardinality")

    def estimate(self, plan: Plan) -> float | None:
        sql = to_sql(plan, names_of(plan), "spark")
        stats = self.spark.sql(sql)._jdf.queryExecution().optimizedPlan().stats()
        count = stats.rowCount()
        return float(count.get().toString()) if count.isDefined() else None
