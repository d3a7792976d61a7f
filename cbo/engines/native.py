"""Running SQL text directly on an engine, with that engine's own planner.

This is the yardstick cbo's plans are measured against: DuckDB and PostgreSQL as they are, and
Spark with its own optimizer over the catalog's tables registered as views.
"""

from __future__ import annotations

from typing import Any, Protocol

from cbo.errors import CboError
from cbo.sources.catalog import Catalog

ENGINES = ("duckdb", "spark", "postgres")

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

    def __init__(self, catalog: Catalog):
        from cbo.engines import spark

        self.spark = spark.spark_session(catalog.spark, need_jdbc=bool(catalog.jdbc_sources()))
        spark.register_catalog(self.spark, catalog)

    def run(self, text: str) -> Answer:
        from cbo.engines.spark import run_sql

        return run_sql(self.spark, text)

    def settings(self) -> dict[str, str]:
        from cbo.engines.spark import optimizer_settings

        return {"spark": self.spark.version, **optimizer_settings(self.spark)}

    def close(self) -> None:
        pass  # the session is shared by the process; it stops at exit


class PostgresNative:
    name = "postgres"

    def __init__(self, catalog: Catalog, timeout_s: float | None = None):
        from cbo.engines import postgres

        sources = catalog.jdbc_sources()
        if len(sources) != 1 or len(catalog.sources) != 1 or sources[0].dialect != "postgres":
            raise CboError("the postgres engine runs a catalog whose only source is one PostgreSQL database "
                           "(e.g. the all-postgres placement)")
        self.source = sources[0]
        self.timeout_s = timeout_s
        self.connection = postgres.connect(postgres.address_of(self.source), what=f"source '{self.source.name}'")

    def run(self, text: str) -> Answer:
        from cbo.engines.postgres import run_query

        return run_query(self.connection, text, timeout_s=self.timeout_s, search_path=self.source.schema)

    def settings(self) -> dict[str, str]:
        names = ["server_version", "shared_buffers", "work_mem", "max_parallel_workers_per_gather",
                 "effective_cache_size"]
        return {n: str(self.connection.execute(f"show {n}").fetchone()[0]) for n in names}  # type: ignore[index]

    def close(self) -> None:
        self.connection.close()


def open_engine(engine: str, catalog: Catalog, *, timeout_s: float | None = None) -> NativeEngine:
    if engine == "duckdb":
        return DuckDBNative(catalog)
    if engine == "spark":
        return SparkNative(catalog)
    if engine == "postgres":
        return PostgresNative(catalog, timeout_s)
    raise CboError(f"unknown engine {engine!r} (expected one of: {', '.join(ENGINES)})")
