"""PostgreSQL's own estimates, shipped as a cardinality plug-in (``cbo.estimate.plugin``).

Each sub-plan whose tables all live in one PostgreSQL source of a JDBC catalog is rendered in
PostgreSQL's dialect over the source's own table names (from the AST, as every remote query
is) and sent as ``EXPLAIN (FORMAT JSON)``; the answer is the top node's ``Plan Rows``, the
estimate PostgreSQL's planner makes from its own statistics (``pg_stats``, its ANALYZE). So
cbo plans with PostgreSQL's estimates and its own cost model, as PostBOUND and PilotScope do
the other way round. Tables are matched by their name without the source (``lineitem``), so a
Spark catalog over the same data can be planned with the estimates of a PostgreSQL copy.

A sub-plan PostgreSQL cannot plan (a function it lacks) is left to cbo and counted in
``failures``. The connection and the answers, by SQL text, are kept on the plug-in.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sqlglot import exp

from cbo.connectors import POSTGRES
from cbo.errors import CboError
from cbo.estimate.subplan import ALL_CLASSES, OperatorClass, SubPlan
from cbo.ir.operators import Scan, walk
from cbo.sources.catalog import Catalog, load_catalog


class PostgresEstimates:
    """PostgreSQL's estimates of sub-plans (see the module). ``catalog``: a catalog (or its
    file) with a PostgreSQL source; ``source``: its name, when the catalog has several JDBC
    sources."""

    def __init__(self, catalog: Catalog | str | os.PathLike[str], source: str | None = None,
                 answers: frozenset[OperatorClass] = ALL_CLASSES, name: str = "postgres"):
        loaded = catalog if isinstance(catalog, Catalog) else load_catalog(Path(catalog).expanduser())
        # The source is taken as the user names it: its server must be PostgreSQL (a connection
        # to another fails with the source's name); which connector a source has is not asked here.
        sources = [s for s in loaded.jdbc_sources() if source is None or s.name == source]
        if not sources:
            raise CboError(f"no JDBC source{' named ' + repr(source) if source else ''} in the catalog "
                           "(PostgresEstimates asks a PostgreSQL source with EXPLAIN)")
        if len(sources) > 1:
            raise CboError(f"the catalog has {len(sources)} JDBC sources "
                           f"({', '.join(s.name for s in sources)}): name the PostgreSQL one with source=")
        self.source = sources[0]
        self.name = name
        self.answers = frozenset(answers)
        self.tables = {t.name.split(".", 1)[-1]: t.remote_name or t.name.split(".", 1)[-1]
                       for t in loaded.tables() if t.source == self.source.name}
        self._connection: Any = None
        self._rows: dict[str, float] = {}   # by SQL text
        self.failures: list[str] = []       # one line per sub-plan PostgreSQL could not plan

    def rows(self, subplan: SubPlan) -> float | None:
        from cbo.sqlgen import SqlRenderer

        for node in walk(subplan.plan):
            if isinstance(node, Scan) and node.table.split(".", 1)[-1] not in self.tables:
                return None
        text = SqlRenderer(POSTGRES.sql, self._table).statement(
            subplan.plan, tuple(f"c{i}" for i in range(len(subplan.plan.output))))
        found = self._rows.get(text)
        if found is None:
            import psycopg

            try:
                (document,) = self._connect().execute("EXPLAIN (FORMAT JSON) " + text).fetchone()
            except psycopg.Error as exc:
                self.failures.append(f"{subplan.key}: {str(exc).strip().splitlines()[0][:200]}")
                return None
            if isinstance(document, str):
                document = json.loads(document)
            found = self._rows[text] = float(document[0]["Plan"]["Plan Rows"])
        return found

    def _table(self, scan: Scan) -> exp.Expression:
        name = self.tables[scan.table.split(".", 1)[-1]]
        schema = self.source.schema
        return exp.Table(this=exp.to_identifier(name, quoted=True),
                         db=exp.to_identifier(schema, quoted=True) if schema else None)

    def _connect(self):  # the driver's connection
        if self._connection is None:
            from cbo.connectors.postgres import client as postgres

            self._connection = postgres.connect(postgres.address_of(self.source), what=f"source '{self.source.name}'")
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


__all__ = ["PostgresEstimates"]
