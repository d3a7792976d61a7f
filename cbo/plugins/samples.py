"""A sampling estimator, shipped as a cardinality plug-in (``cbo.estimate.plugin``).

Each sub-plan of base tables, filters and inner joins is run on the tables' stored row samples
(``stats.sample``: up to 10,000 rows drawn uniformly per table, kept with the statistics) in an
in-memory DuckDB, and its count scaled by each table's population over its sample size: the
classic estimator of a join over independent samples (Haas et al.). It sees every correlation
within and across tables that the sampled rows hold, and nothing they miss: a selective join of
independent samples often meets no row at all, and then it answers nothing and cbo's estimate
stands (EXPLAIN's note says so). Aggregations, outer, semi and anti joins are left to cbo:
their rows do not scale with the samples.

What it computes is kept on the plug-in (its DuckDB connection, the tables loaded, counts by
SQL), for as long as it lives.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cbo.estimate.subplan import OperatorClass, SubPlan
from cbo.ir.operators import Scan, walk
from stats.model import TableStats

ANSWERS = frozenset({OperatorClass.SCAN, OperatorClass.FILTER, OperatorClass.JOIN})


class SampleEstimates:
    """Rows of a sub-plan from the stored row samples (see the module). ``stats``: table name
    -> statistics, as ``Session.estimator.stats`` holds them."""

    name = "samples"

    def __init__(self, stats: Mapping[str, TableStats], answers: frozenset[OperatorClass] = ANSWERS):
        self.stats = dict(stats)
        self.answers = frozenset(answers) & ANSWERS
        self._connection: Any = None
        self._loaded: dict[str, str] = {}      # table -> the DuckDB table holding its sample
        self._counts: dict[str, int] = {}      # by SQL text
        self.empty = 0                          # sub-plans no sampled row satisfied (left to cbo)

    def rows(self, subplan: SubPlan) -> float | None:
        from cbo.sqlgen import SqlRenderer

        scans = [node for node in walk(subplan.plan) if isinstance(node, Scan)]
        scale = 1.0
        for scan in scans:
            stats = self.stats.get(scan.table)
            if stats is None or stats.sample is None or stats.sample.size == 0:
                return None
            scale *= stats.row_count / stats.sample.size
        renderer = SqlRenderer("duckdb", self._table)
        body = renderer.statement(subplan.plan, tuple(f"c{i}" for i in range(len(subplan.plan.output))))
        text = f"SELECT count(*) FROM ({body}) AS subplan"
        found = self._counts.get(text)
        if found is None:
            found = self._counts[text] = int(self._duckdb().execute(text).fetchall()[0][0])
        if found == 0:
            self.empty += 1
            return None
        return found * scale

    def _duckdb(self) -> Any:
        if self._connection is None:
            import duckdb

            self._connection = duckdb.connect()
            try:   # no progress bar on stdout (Jupyter refuses the setting and draws none)
                self._connection.execute("set enable_progress_bar = false")
            except duckdb.Error:
                pass
        return self._connection

    def _table(self, scan: Scan) -> Any:
        from sqlglot import exp

        name = self._loaded.get(scan.table)
        if name is None:
            name = f"sample_{len(self._loaded)}"
            stats = self.stats[scan.table]
            assert stats.sample is not None
            connection = self._duckdb()
            connection.register(f"{name}_arrow", stats.sample.to_arrow())
            connection.execute(f'CREATE TABLE "{name}" AS SELECT * FROM "{name}_arrow"').fetchall()
            connection.unregister(f"{name}_arrow")
            self._loaded[scan.table] = name
        return exp.Table(this=exp.to_identifier(name, quoted=True))

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


__all__ = ["SampleEstimates"]
