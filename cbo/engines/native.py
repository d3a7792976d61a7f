"""Running SQL text directly on an engine, with that engine's own planner.

This is the yardstick cbo's plans are measured against: DuckDB and PostgreSQL as they are, and
Spark with its own optimizer over the catalog's tables registered as views. (PostgreSQL's is its
connector's: ``cbo.connectors.postgres.native``.)
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, Protocol

from cbo.catalog_types import Catalog
from cbo.connectors.postgres.native import PostgresNative
from cbo.errors import CboError

if TYPE_CHECKING:
    from cbo.engines.spark import Step

Answer = tuple[list[str], list[tuple[Any, ...]], float]


class NativeEngine(Protocol):
    name: str

    def run(self, text: str) -> Answer: ...

    def settings(self) -> dict[str, str]: ...

    def close(self) -> None: ...


class DuckDBNative:
    name = "duckdb"

    def __init__(self, catalog: Catalog):
        from cbo.engines.duckdb_engine import DuckDBEngine

        self.engine = DuckDBEngine(catalog)

    def run(self, text: str) -> Answer:
        return self.engine.run(text)

    def settings(self) -> dict[str, str]:
        import duckdb

        threads = self.engine.connection.execute("select current_setting('threads')").fetchone()
        return {"duckdb": duckdb.__version__, "threads": str(threads[0] if threads else "")}

    def close(self) -> None:
        self.engine.close()


class SparkNative:
    name = "spark"

    def __init__(self, catalog: Catalog, step: Step = nullcontext):
        from cbo.engines import spark

        self.spark = spark.spark_session(catalog.spark, need_jdbc=bool(catalog.jdbc_sources()), step=step)
        spark.register_catalog(self.spark, catalog)

    def run(self, text: str) -> Answer:
        from cbo.engines.spark import run_sql

        return run_sql(self.spark, text)

    def settings(self) -> dict[str, str]:
        from cbo.engines.spark import optimizer_settings

        return {"spark": self.spark.version, **optimizer_settings(self.spark)}

    def close(self) -> None:
        pass  # the session is shared by the process; it stops at exit


ENGINES = (DuckDBNative.name, SparkNative.name, PostgresNative.name)


def open_engine(engine: str, catalog: Catalog, *, timeout_s: float | None = None) -> NativeEngine:
    if engine == DuckDBNative.name:
        return DuckDBNative(catalog)
    if engine == SparkNative.name:
        return SparkNative(catalog)
    if engine == PostgresNative.name:
        return PostgresNative(catalog, timeout_s)
    raise CboError(f"unknown engine {engine!r} (expected one of: {', '.join(ENGINES)})")
