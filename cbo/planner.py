"""From SQL text to the plan that runs: parse, bind, decorrelate, normalize, search the memo.

The memo search (``cbo.memo.search``) picks the join order (every connected bushy tree of
each join region, or the greedy order for large ones) and each join's strategy by estimated
cost. Estimates come from the catalog's stored statistics when a session provides them
(``cbo analyze``); without statistics every table is assumed to have the default size and the
search still yields a valid plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

from sqlglot import exp

from cbo.sources.catalog import Catalog
from cbo.frontend.binder import Binder
from cbo.frontend.hints import resolve as resolve_hints
from cbo.normalize.decorrelate import decorrelate
from cbo.frontend.parse import DEFAULT_DIALECT, parse
from cbo.ir.expressions import ColumnFactory
from cbo.ir.operators import Plan
from cbo.memo.search import Optimized, Optimizer, RemoteSource, default_rules
from cbo.normalize import normalize
from cbo.physical.plan import PhysicalPlan
from cbo.sources.schema import SchemaProvider
from cbo.settings import OptimizerSettings


@dataclass(frozen=True)
class PlannedQuery:
    sql: str
    bound: Plan                    # as bound, subqueries still in expressions
    plan: Plan                     # the plan that runs (logically; ``physical`` says how)
    names: tuple[str, ...]         # output column names
    optimized: Optimized | None = None   # the physical plan, the memo and its counters
    warnings: tuple[str, ...] = ()       # one line each: what the planner ignored (a malformed hint)

    @property
    def physical(self) -> PhysicalPlan | None:
        """The tree of physical operators that runs ``plan`` (None for a plan made without the
        search, e.g. a drawn alternative)."""
        return self.optimized.physical if self.optimized else None

    @cached_property
    def _operators(self) -> dict[int, PhysicalPlan]:
        return self.physical.by_logical() if self.physical is not None else {}

    @property
    def operators(self) -> dict[int, PhysicalPlan]:
        """Each node of ``plan`` (by identity) -> the physical operator running it."""
        return self._operators

    def operator(self, node: Plan) -> PhysicalPlan | None:
        """The physical operator running ``node`` (a node of ``plan``, by identity)."""
        return self._operators.get(id(node))

    @property
    def partitions(self) -> int | None:
        """The shuffle partition count the plan was costed with (Spark runs with it)."""
        return self.optimized.partitions if self.optimized else None

    def estimate(self, node: Plan, estimator: object | None = None):  # type: ignore[no-untyped-def]
        """The estimate of a node of the chosen plan: its memo group's, the one number per group
        that EXPLAIN, the plan files, the memo dump and the drawings all show. A node the search
        did not take from the memo (the projection restoring the output column order) is
        estimated from its inputs' group estimates; without a memo, ``estimator`` estimates."""
        operator = self.operator(node)
        if operator is not None and operator.logical is node and operator.group is not None:
            return operator.group.estimate
        if self.optimized is None:
            assert estimator is not None, "a plan without a memo needs an estimator"
            return estimator.estimate(node)  # type: ignore[attr-defined]
        inputs = [self.estimate(child) for child in node.children]
        return self.optimized.memo.estimator.estimate_node(node, inputs)


EstimatorSource = Callable[[], object]


class Planner:
    def __init__(self, catalog: Catalog, dialect: str = DEFAULT_DIALECT, schemas: SchemaProvider | None = None,
                 estimator: object | EstimatorSource | None = None, settings: OptimizerSettings | None = None):
        self.catalog = catalog
        self.dialect = dialect
        self.schemas = schemas or SchemaProvider(catalog)
        self._estimator = estimator
        self.settings = settings or OptimizerSettings()
        self._oracle = None
        self._profiles: dict[str | None, object] = {}

    @property
    def estimator(self):  # type: ignore[no-untyped-def]
        from cbo.estimate import Estimator

        if self._estimator is None:
            self._estimator = Estimator({})
        elif not isinstance(self._estimator, Estimator) and callable(self._estimator):
            self._estimator = self._estimator()
        return self._estimator

    def logical(self, sql: str) -> tuple[Plan, Plan, tuple[str, ...]]:
        """The bound plan, the normalized plan the search starts from, and the output names."""
        bound, normalized, names, _ = self._logical(sql)
        return bound, normalized, names

    def _logical(self, sql: str) -> tuple[Plan, Plan, tuple[str, ...], tuple[str, ...]]:
        columns = ColumnFactory()
        statement = parse(sql, self.dialect)
        hints = resolve_hints(statement, sql, self.dialect, self.catalog, self.schemas)
        assumed: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for table, keys in hints.keys.items():
            assumed.setdefault(table, []).extend((key, "hint") for key in keys)
        for table, names in self._counted_unique(statement).items():
            assumed.setdefault(table, []).extend(((name,), "statistics") for name in names)
        bound = Binder(self.catalog, self.schemas, columns, assumed).bind(statement)
        return bound.plan, normalize(decorrelate(bound.plan, columns)), bound.names, tuple(hints.warnings)

    def _counted_unique(self, statement: exp.Expression) -> dict[str, list[str]]:
        """Columns of the query's tables that exact statistics prove unique
        (``TableStats.unique_columns``). A wrong key gives wrong answers, not only slow ones,
        so only statistics of the data as it is now count: a Spark table's files must still
        have the fingerprint the statistics were collected from (the only collector that
        counts exactly is Spark's; statistics given in memory, without a fingerprint of files,
        are taken as they are)."""
        from cbo.errors import CatalogError
        from cbo.sources.statistics import fingerprint

        stats = getattr(self.estimator, "stats", None)
        if not stats:
            return {}
        found: dict[str, list[str]] = {}
        for node in statement.find_all(exp.Table):
            try:
                table = self.catalog.table(f"{node.db}.{node.name}" if node.db else node.name)
            except CatalogError:
                continue   # a CTE, or an unknown table the binder reports
            table_stats = stats.get(table.qualified_name)
            if table_stats is None or table.qualified_name in found:
                continue
            unique = table_stats.unique_columns()
            if unique and table_stats.fingerprint.startswith("files:") \
                    and self.catalog.source_of(table).type == "spark" \
                    and fingerprint(self.catalog, table) != table_stats.fingerprint:
                unique = []
            found[table.qualified_name] = unique
        return found

    def optimizer(self) -> Optimizer:
        from cbo.cost import CostProfile, default_profile

        source_types = tuple(sorted({s.type for s in self.catalog.sources.values()}))
        rules = default_rules(source_types, self.settings.rules_off)
        path = self.settings.cost_profile
        profile = self._profiles.get(path)
        if profile is None:
            from pathlib import Path

            profile = self._profiles[path] = CostProfile.load(Path(path)) if path else default_profile()
        # Scans name their table qualified ("pg.lineitem"); both spellings, as the catalog resolves them.
        remote = frozenset(name for t in self.catalog.tables() if self.catalog.source_of(t).type != "spark"
                           for name in (t.name, t.qualified_name))
        sources: dict[str, RemoteSource] = {}
        for table in self.catalog.tables():
            source = self.catalog.source_of(table)
            if source.type == "jdbc":
                found = RemoteSource(source.name, source.dialect or "postgres")
                sources[table.name] = sources[table.qualified_name] = found
        estimator = self.oracle() if self.settings.cardinalities == "oracle" else self.estimator
        return Optimizer(estimator, self.settings, rules, profile, remote,  # type: ignore[arg-type]
                         remote_sources=sources)

    def oracle(self):  # type: ignore[no-untyped-def]
        """The oracle estimator (true row counts from DuckDB over the catalog's Parquet copies)."""
        if self._oracle is None:
            from cbo.engines.duckdb_engine import DuckDBEngine
            from cbo.estimate.oracle import OracleEstimator

            engine = DuckDBEngine(self.catalog)

            def count(text: str) -> int:
                _, rows, _ = engine.run(text)
                return int(rows[0][0])

            self._oracle = OracleEstimator(self.estimator, count)
        return self._oracle

    def plan(self, sql: str) -> PlannedQuery:
        bound, normalized, names, warnings = self._logical(sql)
        optimized = self.optimizer().optimize(normalized)
        return PlannedQuery(sql, bound, optimized.plan, names, optimized, warnings)
