"""From SQL text to the plan that runs: parse, bind, decorrelate, normalize, search the memo.

The memo search (``cbo.memo.search``) picks the join order (every connected bushy tree of
each join region, or the greedy order for large ones) and each join's strategy by estimated
cost. Estimates come from the catalog's stored statistics when a session provides them
(``cbo analyze``); without statistics every table is assumed to have the default size and the
search still yields a valid plan.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from sqlglot import exp

from cbo.catalog_types import Catalog
from cbo.connectors import connector_of
from cbo.connectors.capabilities import with_overrides
from cbo.cost.cluster import ClusterShape
from cbo.errors import CboError
from cbo.estimate.plugin import CardinalityEstimator
from cbo.frontend.binder import Binder
from cbo.frontend.hints import resolve as resolve_hints
from cbo.frontend.parse import DEFAULT_DIALECT, parse_tokens
from cbo.ir.expressions import ColumnFactory
from cbo.ir.operators import Plan
from cbo.limits import on_deep_stack
from cbo.memo.search import Optimized, Optimizer, RemoteSource, default_rules, in_written_order
from cbo.normalize import normalize
from cbo.normalize.ctes import with_producers
from cbo.normalize.decorrelate import decorrelate
from cbo.physical.plan import PhysicalPlan
from cbo.physical.properties import ANY
from cbo.settings import CteStrategy, OptimizerSettings, parse_distortion
from cbo.sources.schema import SchemaProvider

if TYPE_CHECKING:
    from cbo.cost import CostProfile
    from cbo.cost.plugin import CostFunction
    from cbo.estimate import Estimator
    from cbo.estimate.oracle import OracleEstimator
    from cbo.estimate.plugin import Coverage, FileCardinalities, PluggedEstimator
    from cbo.estimate.relation import RelEstimate
    from cbo.memo.rules.base import Rule
    from cbo.memo.space import Choice, PlanSpace
    from cbo.perror import PError


@dataclass(frozen=True)
class PlannedQuery:
    sql: str
    bound: Plan                    # as bound, subqueries still in expressions
    plan: Plan                     # the plan that runs (logically; ``physical`` says how)
    names: tuple[str, ...]         # output column names
    optimized: Optimized | None = None   # the physical plan, the memo and its counters
    warnings: tuple[str, ...] = ()       # one line each: what the planner ignored (a malformed hint)
    profile: CostProfile | None = None   # the cost profile the search costed with
    cluster: ClusterShape | None = None  # the cluster it costed for (None: local mode)
    number: int | None = None            # a plan taken from the plan space: its number there

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

    @property
    def coverage(self) -> Coverage | None:
        """Who answered each sub-plan the search asked about, when a cardinality plug-in, a
        file or a distortion was in front of cbo's estimator (``cbo.estimate.plugin``)."""
        from cbo.estimate.plugin import PluggedContext

        estimator = self.optimized.memo.estimator if self.optimized is not None else None
        return estimator.coverage if isinstance(estimator, PluggedContext) else None

    def estimate(self, node: Plan, estimator: Estimator | OracleEstimator | None = None) -> RelEstimate:
        """The estimate of a node of the chosen plan: its memo group's, the one number per group
        that EXPLAIN, the plan files, the memo dump and the drawings all show. A node the search
        did not take from the memo (the projection restoring the output column order) is
        estimated from its inputs' group estimates; without a memo, ``estimator`` estimates."""
        operator = self.operator(node)
        if operator is not None and operator.logical is node and operator.group is not None:
            return operator.group.estimate
        if self.optimized is None:
            assert estimator is not None, "a plan without a memo needs an estimator"
            return estimator.estimate(node)
        inputs = [self.estimate(child) for child in node.children]
        return self.optimized.memo.estimator.estimate_node(node, inputs)


EstimatorSource = Callable[[], 'Estimator']
ClusterSource = Callable[[], "ClusterShape | None"]


@dataclass(frozen=True)
class RuleChanges:
    """Transformation rules added to or removed from the search, for one planner (a session):
    ``add`` holds rule objects (``cbo.memo.rules.base.TransformationRule``), applied after cbo's
    own; ``remove`` names rules (``cbo rules`` lists them). A removed rule stays off whatever
    ``disabled_rules`` says."""

    add: tuple[Rule, ...] = ()
    remove: frozenset[str] = frozenset()

    @classmethod
    def of(cls, value: RuleChanges | dict[str, object] | None) -> RuleChanges:
        if value is None:
            return cls()
        if isinstance(value, RuleChanges):
            return value
        if isinstance(value, dict):
            unknown = set(value) - {"add", "remove"}
            if unknown:
                raise CboError(f"rules= takes add and remove, not {', '.join(sorted(unknown))}")
            add = value.get("add", ())
            remove = value.get("remove", ())
            adds = tuple(add) if isinstance(add, (list, tuple)) else ()
            removes = frozenset([remove]) if isinstance(remove, str) else \
                frozenset(remove) if isinstance(remove, (list, tuple, set, frozenset)) else frozenset()
            return cls(adds, removes)
        raise CboError(f"rules= takes RuleChanges(add=..., remove=...) or a dict of them, not {type(value).__name__}")


class Planner:
    """``cluster`` says what the plans will run on (``cbo.cost.cluster``): a shape, or a callable
    giving it when first needed (the session starts Spark for it), or None for local mode.

    The research plug-ins (``docs/guide/research.md``): ``estimator`` may be a cardinality
    plug-in (``cbo.estimate.plugin.CardinalityEstimator``) instead of cbo's estimator;
    ``cost_model`` a cost function (``cbo.cost.plugin.CostFunction``); ``rules`` transformation
    rules to add or remove (``RuleChanges``). With a plug-in, ``statistics`` is cbo's own
    estimator (or a callable giving it), which answers what the plug-in leaves."""

    def __init__(self, catalog: Catalog, dialect: str = DEFAULT_DIALECT, schemas: SchemaProvider | None = None,
                 estimator: Estimator | EstimatorSource | CardinalityEstimator | None = None,
                 settings: OptimizerSettings | None = None,
                 cluster: ClusterShape | ClusterSource | None = None, cost_model: CostFunction | None = None,
                 rules: RuleChanges | dict[str, object] | None = None,
                 statistics: Estimator | EstimatorSource | None = None):
        from cbo.estimate.plugin import CardinalityEstimator as Plugin

        self.catalog = catalog
        self.dialect = dialect
        self.schemas = schemas or SchemaProvider(catalog)
        self.plugin: CardinalityEstimator | None = None
        if estimator is not None and isinstance(estimator, Plugin):
            self.plugin, estimator = estimator, None
        self._estimator = estimator if estimator is not None else statistics
        self.cost_function = cost_model
        if cost_model is not None and not callable(cost_model):
            raise CboError(f"cost_model= takes a cost function (cbo.cost.plugin.CostFunction), "
                           f"not {type(cost_model).__name__}")
        self.rule_changes = RuleChanges.of(rules)
        self._files: dict[tuple[str, float], FileCardinalities] = {}
        self.settings = settings or OptimizerSettings()
        self._oracle: OracleEstimator | None = None
        self._upper: Estimator | None = None
        self._profiles: dict[str, CostProfile] = {}
        self._cluster = cluster
        # A profile given in memory (calibration plans with the defaults): used as a profile the
        # settings name would be, before them.
        self.base_profile: CostProfile | None = None

    @property
    def estimator(self) -> Estimator:
        from cbo.estimate import Estimator

        found = self._estimator
        if found is None:
            found = Estimator({})
        elif not isinstance(found, Estimator) and callable(found):
            found = found()   # a source: the session reads its statistics only when first needed
        self._estimator = found
        return found

    @on_deep_stack
    def logical(self, sql: str) -> tuple[Plan, Plan, tuple[str, ...]]:
        """The bound plan, the normalized plan the search starts from, and the output names."""
        bound, normalized, names, _ = self._logical(sql)
        return bound, normalized, names

    def _logical(self, sql: str) -> tuple[Plan, Plan, tuple[str, ...], tuple[str, ...]]:
        columns = ColumnFactory()
        parsed = parse_tokens(sql, self.dialect)
        statement = parsed.statement
        hints = resolve_hints(statement, parsed.comments(), self.catalog, self.schemas)
        assumed: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for table, keys in hints.keys.items():
            assumed.setdefault(table, []).extend((key, "hint") for key in keys)
        for table, names in self._counted_unique(statement).items():
            assumed.setdefault(table, []).extend(((name,), "statistics") for name in names)
        bound = Binder(self.catalog, self.schemas, columns, assumed, self.dialect,
                       share_ctes=self.settings.cte_strategy is not CteStrategy.INLINE).bind(statement)
        normalized = with_producers(normalize(decorrelate(bound.plan, columns)))
        return bound.plan, normalized, bound.names, tuple(hints.warnings)

    def _counted_unique(self, statement: exp.Expr) -> dict[str, list[str]]:
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

    @property
    def cluster(self) -> ClusterShape | None:
        """The shape the plans are costed for (read once: a callable is called at first use)."""
        if callable(self._cluster):
            self._cluster = self._cluster()
        return self._cluster

    def profile(self) -> CostProfile:
        """The cost profile for the cluster (``cbo.cost.cluster.profile_for``): the one the
        settings name (``cost_profile``, else ``$CBO_COST_PROFILE``), scaled to the cluster;
        by default the shipped profile, or the one fitted on the cluster's shape when there is one."""
        import os
        from pathlib import Path

        from cbo.cost import CostProfile, default_profile
        from cbo.cost.cluster import profile_for, scaled

        shape = self.cluster
        path = self.settings.cost_profile
        key = f"{id(self.base_profile) if self.base_profile else path}@{shape.key if shape else 'local'}"
        profile = self._profiles.get(key)
        if profile is None:
            explicit = bool(self.base_profile or path or os.environ.get("CBO_COST_PROFILE"))
            base = self.base_profile or (CostProfile.load(Path(path)) if path else default_profile())
            if shape is None:
                profile = base
            else:   # a profile the user names is theirs: scaled, never swapped for another
                profile = scaled(base, shape) if explicit else profile_for(base, shape)
            self._profiles[key] = profile
        return profile

    def optimizer(self) -> Optimizer:
        source_types = tuple(sorted({s.type for s in self.catalog.sources.values()}))
        rules = default_rules(source_types, self.settings.rules_off, self.rule_changes.add)
        for name in sorted(self.rule_changes.remove):
            rules.disable(name)
        profile = self.profile()
        settings = self.settings
        shape = self.cluster
        if shape is not None and shape.broadcast_threshold < 0 and settings.broadcast_limit_bytes:
            # the cluster has broadcasts off (a driver too small to collect a build side, say)
            settings = settings.with_values({"broadcast_limit_bytes": "0"})
        # Scans name their table qualified ("pg.lineitem"); both spellings, as the catalog resolves them.
        remote = frozenset(name for t in self.catalog.tables() if self.catalog.source_of(t).type != "spark"
                           for name in (t.name, t.qualified_name))
        sources: dict[str, RemoteSource] = {}
        by_source: dict[str, RemoteSource] = {}
        for source in self.catalog.jdbc_sources():
            connector = connector_of(source)
            caps = connector.capabilities
            if caps is not None and (source.pushdown_disable or source.pushdown_enable):
                caps = with_overrides(caps, source.pushdown_disable, source.pushdown_enable)
            by_source[source.name] = RemoteSource(source.name, connector.dialect, caps)
        for table in self.catalog.tables():
            found = by_source.get(table.source)
            if found is not None:
                sources[table.name] = sources[table.qualified_name] = found
        return Optimizer(self.search_estimator(), settings, rules, profile, remote, remote_sources=sources,
                         cost_function=self.cost_function)

    def search_estimator(self, record: bool = False) -> Estimator | OracleEstimator | PluggedEstimator:
        """What the search estimates with: cbo's estimator, the oracle or the pessimistic mode
        (``cardinalities``), with the plug-in, the file (``cardinalities=file:PATH``) and the
        distortion (``cardinality_distortion``) in front when there are any. ``record``: in front
        anyway, to keep which sub-plans were asked (``Planner.subplans``)."""
        from cbo.estimate.plugin import Distortion, PluggedEstimator

        mode = self.settings.cardinalities
        base: Estimator | OracleEstimator = self.oracle() if mode == "oracle" else \
            self.upper_estimator() if mode == "upper" else self.estimator
        plugin = self.plugin
        path = self.settings.cardinality_file
        if path is not None:
            if plugin is not None:
                raise CboError(f"cardinalities=file:{path} and a cardinality plug-in ({plugin.name}): give one of them")
            plugin = self.cardinality_file(path)
        text = self.settings.cardinality_distortion
        distortion = Distortion(text, *parse_distortion(text)) if text else None
        if plugin is None and distortion is None and not record:
            return base
        return PluggedEstimator(base, plugin, distortion)

    def cardinality_file(self, path: str) -> FileCardinalities:
        """The file's rows per key, read again when the file changes."""
        from pathlib import Path

        from cbo.estimate.plugin import FileCardinalities

        try:
            stamp = Path(path).expanduser().stat().st_mtime
        except OSError:
            stamp = -1.0
        found = self._files.get((path, stamp))
        if found is None:
            found = self._files[(path, stamp)] = FileCardinalities.load(path)
        return found

    def upper_estimator(self) -> Estimator:
        """The pessimistic estimator (``cardinalities=upper``): the same statistics, inner-join
        sets bounded from above."""
        if self._upper is None:
            from cbo.estimate import Estimator

            self._upper = Estimator(self.estimator.stats, upper=True)
        return self._upper

    def oracle(self) -> OracleEstimator:
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

    def with_true_cardinalities(self) -> Planner:
        """A planner like this one (catalog, statistics, profile, cluster, cost function, rules)
        that plans with true cardinalities (``cardinalities=oracle``, sharing this planner's
        counts) and no plug-in, file or distortion: the denominator of P-error."""
        other = Planner(self.catalog, self.dialect, self.schemas, estimator=lambda: self.estimator,
                        settings=self.settings.with_values({"cardinalities": "oracle", "cardinality_distortion": None}),
                        cluster=lambda: self.cluster, cost_model=self.cost_function, rules=self.rule_changes)
        other.use_oracle(self.oracle())
        other.base_profile = self.base_profile
        return other

    def use_oracle(self, oracle: OracleEstimator) -> None:
        """Count true rows with ``oracle`` (another planner's, over the same catalog): each
        sub-plan is then counted once for both."""
        self._oracle = oracle

    def p_error(self, sql: str) -> PError:
        """``sql``'s P-error (``cbo.perror``): its plan with this planner's estimates against
        its plan with true cardinalities, both costed with true rows."""
        from cbo.perror import p_error

        chosen = self.plan(sql)
        optimal = self.with_true_cardinalities().plan(sql)
        return p_error(chosen, optimal, self.oracle().true_rows)

    @on_deep_stack
    def subplans(self, sql: str) -> tuple[PlannedQuery, Coverage]:
        """``sql`` planned with its sub-plans recorded: every sub-plan the search asked an
        estimate of, in the order first asked, with cbo's (or the plug-in's) answer."""
        bound, normalized, names, warnings = self._logical(sql)
        optimizer = self.optimizer()
        optimizer.estimator = self.search_estimator(record=True)
        optimized = optimizer.optimize(normalized)
        planned = PlannedQuery(sql, bound, optimized.plan, names, optimized, warnings, optimizer.profile, self.cluster)
        coverage = planned.coverage
        assert coverage is not None
        return planned, coverage

    @on_deep_stack
    def plan(self, sql: str) -> PlannedQuery:
        bound, normalized, names, warnings = self._logical(sql)
        optimizer = self.optimizer()
        optimized = optimizer.optimize(normalized)
        return PlannedQuery(sql, bound, optimized.plan, names, optimized, warnings, optimizer.profile, self.cluster)

    @on_deep_stack
    def draw(self, planned: PlannedQuery, rng: random.Random) -> PlannedQuery:
        """A plan drawn uniformly from ``planned``'s plan space (``cbo.memo.space``: every
        complete physical plan its memo holds equally likely), costed by the same model as the
        chosen plan (``optimized.cost``), runnable like it, its number in ``number``."""
        number, _ = self._space(planned).sample(rng)
        return self.plan_number(planned, number)

    def plan_count(self, planned: PlannedQuery) -> int:
        """How many complete physical plans ``planned``'s memo holds."""
        return self._space(planned).count()

    def plan_number(self, planned: PlannedQuery, number: int) -> PlannedQuery:
        """The plan numbered ``number`` in ``planned``'s plan space (0 to ``plan_count - 1``):
        the same number names the same plan whenever the same query is planned alike."""
        space = self._space(planned)
        count = space.count()
        if not 0 <= number < count:
            raise CboError(f"no plan {number}: the memo holds {count:,} plans, numbered 0 to {count - 1:,}")
        return self._taken(planned, number, space.unrank(number))

    def cheapest_plans(self, planned: PlannedQuery, k: int) -> list[PlannedQuery]:
        """The ``k`` cheapest plans of ``planned``'s plan space, cheapest first (the first is
        as cheap as the chosen plan), each with its number."""
        if k < 1:
            raise CboError(f"k must be at least 1, got {k}")
        return [self._taken(planned, number, choice) for number, choice in self._space(planned).cheapest(k)]

    def plan_rank(self, planned: PlannedQuery) -> int:
        """The number of ``planned``'s chosen plan in its own plan space."""
        optimized = planned.optimized
        assert optimized is not None
        space = self._space(planned)
        return space.rank(space.choice_of(optimized.root.winner(ANY), optimized.root, ANY))

    def _space(self, planned: PlannedQuery) -> PlanSpace:
        if planned.optimized is None or planned.optimized.search is None:
            raise CboError("this plan was made without the memo search: there is no plan space to read")
        return planned.optimized.space

    def _taken(self, planned: PlannedQuery, number: int, choice: Choice) -> PlannedQuery:
        """A plan of the space as a planned query, its output columns in the query's order."""
        assert planned.optimized is not None and planned.optimized.search is not None
        optimized = planned.optimized
        space = optimized.space
        physical = in_written_order(space.physical(choice), planned.plan, space.search.cost_model)
        taken = Optimized(physical, choice.cost, optimized.memo, optimized.root, optimized.partitions, (),
                          optimized.search)
        return PlannedQuery(planned.sql, planned.bound, taken.plan, planned.names, taken, planned.warnings,
                            planned.profile, planned.cluster, number)
