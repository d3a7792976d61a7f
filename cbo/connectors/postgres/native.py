"""PostgreSQL as a native engine: a whole query run by PostgreSQL's own planner (a baseline).

``cbo.engines.native`` opens it for the ``postgres`` engine: a catalog whose only source is one
PostgreSQL database (the all-postgres placement), the query text run as it is.
"""

from __future__ import annotations

from typing import Any

from cbo.catalog_types import Catalog
from cbo.connectors.postgres import POSTGRES
from cbo.errors import CboError

Answer = tuple[list[str], list[tuple[Any, ...]], float]


class PostgresNative:
    name = "postgres"

    def __init__(self, catalog: Catalog, timeout_s: float | None = None):
        from cbo.connectors.postgres import client as postgres

        sources = catalog.jdbc_sources()
        if len(sources) != 1 or len(catalog.sources) != 1 or sources[0].connector is not POSTGRES:
            raise CboError("the postgres engine runs a catalog whose only source is one PostgreSQL database "
                           "(e.g. the all-postgres placement)")
        self.source = sources[0]
        self.timeout_s = timeout_s
        self.connection = postgres.connect(postgres.address_of(self.source), what=f"source '{self.source.name}'")

    def run(self, text: str) -> Answer:
        from cbo.connectors.postgres.client import run_query

        return run_query(self.connection, text, timeout_s=self.timeout_s, search_path=self.source.schema)

    def settings(self) -> dict[str, str]:
        names = ["server_version", "shared_buffers", "work_mem", "max_parallel_workers_per_gather",
                 "effective_cache_size"]
        return {n: str(self.connection.execute(f"show {n}").fetchone()[0]) for n in names}  # type: ignore[index]

    def close(self) -> None:
        self.connection.close()
