"""The optimizer: a plan into a memo, the Cascades search over it, the cheapest plan out.

``cbo.memo.cascades`` holds the search's tasks (how alternatives are explored and costed),
``cbo.memo.bounds`` what is pruned, ``cbo.memo.dispatch`` which rules an expression meets,
``cbo.memo.context`` what rules see, ``cbo.memo.extract`` how the winner becomes a plan again.
"""

from __future__ import annotations

import gc
import random
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from cbo.cost import CostModel, CostProfile, default_profile
from cbo.cost.model import Quantities
from cbo.cost.plugin import CostFunction, FunctionCostModel
from cbo.errors import CboError
from cbo.estimate.plugin import PluggedContext
from cbo.ir.expressions import ColumnRef
from cbo.ir.operators import CteAnchor, CteConsumer, Plan, Project, Scan, walk
from cbo.memo.cascades import CascadesSearch
from cbo.memo.context import SearchContext
from cbo.memo.extract import extract
from cbo.memo.memo import Counters, Group, Memo, group_of
from cbo.memo.rules.base import Rule, RuleSet, TransformationRule, connector_rules
from cbo.memo.rules.eager_aggregation import EagerAggregation
from cbo.memo.rules.eager_pushdown import EagerPushdown
from cbo.memo.rules.eliminate_join import EliminateForeignKeyJoin
from cbo.memo.rules.existential_form import ForcedExistentialForm
from cbo.memo.rules.filter_below_window import PushFilterBelowWindow
from cbo.memo.rules.grouping_sets_partial import PartialAggregateBelowGroupingSets
from cbo.memo.rules.implement import implementation_rules
from cbo.memo.rules.inline_cte import InlineCte, note_cte_costs
from cbo.memo.rules.jdbc_pushdown import PushdownChoice, RemoteSource, note_pushdown_costs, pushdown_choices
from cbo.memo.rules.reorder_joins import ReorderJoins
from cbo.memo.rules.scalar_subquery import ScalarSubqueryJoin
from cbo.memo.rules.semijoin_distinct_above import SemiJoinToInnerDistinctAbove
from cbo.memo.rules.semijoin_distinct_below import SemiJoinToInnerDistinctBelow
from cbo.memo.rules.table_copy import CopyTableIntoAggregate
from cbo.memo.rules.table_pushdown import PushTableIntoAggregate
from cbo.memo.rules.transpose_windows import TransposeWindows
from cbo.memo.space import PlanSpace
from cbo.physical.algorithm import Algorithm
from cbo.physical.plan import PhysicalPlan
from cbo.physical.properties import ANY
from cbo.settings import OptimizerSettings

if TYPE_CHECKING:
    from cbo.estimate import Estimator
    from cbo.estimate.oracle import OracleEstimator
    from cbo.estimate.plugin import PluggedEstimator

__all__ = ["Optimized", "Optimizer", "RemoteSource", "SearchContext", "default_rules", "draw_plan",
           "in_written_order", "restore_output_order"]


def default_rules(source_types: tuple[str, ...] = (), disabled: frozenset[str] = frozenset(),
                  extra: tuple[Rule, ...] = ()) -> RuleSet:
    """cbo's rules, and ``extra`` transformation rules (a session's, ``Planner(rules=...)``) after its own."""
    for rule in extra:
        if not isinstance(rule, TransformationRule):
            raise CboError(f"an added rule must be a transformation rule (cbo.memo.rules.base.TransformationRule), "
                           f"not {type(rule).__name__}")
    rules = [InlineCte(), ReorderJoins(), PushTableIntoAggregate(), CopyTableIntoAggregate(), EagerAggregation(),
             EliminateForeignKeyJoin(), SemiJoinToInnerDistinctAbove(), SemiJoinToInnerDistinctBelow(),
             PushFilterBelowWindow(), TransposeWindows(), PartialAggregateBelowGroupingSets(), *extra,
             *implementation_rules(), ScalarSubqueryJoin(), *connector_rules(source_types)]
    return RuleSet(rules, disabled, [ForcedExistentialForm(), EagerPushdown()])


@dataclass
class Optimized:
    """The search's result: the chosen physical plan, and the memo for inspection."""

    physical: PhysicalPlan
    cost: float
    memo: Memo
    root: Group
    partitions: int = 0                      # shuffle partitions the plan was costed with
    # The chosen plan's groups that had a remote-query alternative, with both costs (EXPLAIN's
    # "not pushed ... cost" notes, and ``Session.pushdown``).
    pushdown: tuple[PushdownChoice, ...] = ()
    # The finished search, read when the memo is shown (``expression_costs``); most plans never are.
    search: CascadesSearch | None = field(default=None, repr=False)

    @cached_property
    def expression_costs(self) -> dict[tuple[int, int], float | None]:
        """(group id, expression index) -> its best cost, None when every alternative was pruned
        (``CascadesSearch.expression_costs``)."""
        return self.search.expression_costs() if self.search is not None else {}

    @cached_property
    def expression_bounds(self) -> dict[tuple[int, int], float]:
        """Lower bounds of the expressions never costed (they could not beat the winner): see render."""
        return self.search.expression_bounds() if self.search is not None else {}

    @cached_property
    def space(self) -> PlanSpace:
        """Every plan the memo holds: counted, numbered, drawn uniformly, cheapest first
        (``cbo.memo.space``)."""
        if self.search is None:
            raise ValueError("this result keeps no search: its plan space cannot be read")
        return PlanSpace(self.search, self.root)

    @property
    def plan(self) -> Plan:
        """The logical plan the physical plan runs."""
        return self.physical.logical

    @property
    def quantities(self) -> Quantities:
        """The chosen plan's cost quantities, summed (for calibration)."""
        return self.physical.total_quantities()

    @property
    def counters(self) -> Counters:
        return self.memo.counters


class Optimizer:
    def __init__(self, estimator: Estimator | OracleEstimator | PluggedEstimator,
                 settings: OptimizerSettings | None = None,
                 rules: RuleSet | None = None, profile: CostProfile | None = None,
                 remote_tables: frozenset[str] = frozenset(), prune: bool = True,
                 remote_sources: dict[str, RemoteSource] | None = None, cost_function: CostFunction | None = None):
        self.estimator = estimator
        # A cost function (``cbo.cost.plugin``) prices every alternative instead of the profile.
        # The search's bounds are lower bounds of the profile's costs, not of the function's,
        # so with one the search costs every alternative (``prune`` off).
        self.cost_function = cost_function
        if cost_function is not None:
            prune = False
        # prune=False costs every physical alternative of every expression: slower, and the
        # yardstick a test holds the pruned search to (the same cost, always).
        self.prune = prune
        self.settings = settings or OptimizerSettings()
        self.rules = rules or default_rules(disabled=self.settings.rules_off)
        self.profile = profile or default_profile()
        self.remote_tables = remote_tables
        self.remote_sources = remote_sources or {}   # table -> its JDBC source (connector rules)

    def optimize(self, plan: Plan) -> Optimized:
        # The memo creates many small objects and no garbage until it is dropped; the cyclic
        # collector would rescan the growing memo again and again, so it pauses during the
        # search.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._optimize(plan)
        finally:
            if collecting:
                gc.enable()

    def _optimize(self, plan: Plan) -> Optimized:
        started = time.perf_counter()
        memo = Memo(self.estimator)
        if isinstance(memo.estimator, PluggedContext):
            memo.estimator.seed(plan)   # tables' aliases from the query, before anything is estimated
        root = memo.insert(plan)
        context = SearchContext(memo, self.settings, self.remote_sources)
        # Shuffles are sized from what the query reads (cbo sets Spark's partition count to it).
        scanned = _scanned_bytes(plan, memo, context)
        partitions = self.settings.shuffle_partitions or self.profile.partitions(scanned)
        dialects = {table: source.dialect for table, source in self.remote_sources.items()}
        cost_model = CostModel(self.profile, self.remote_tables, partitions, context.column_width, dialects) \
            if self.cost_function is None else \
            FunctionCostModel(self.cost_function, self.profile, self.remote_tables, partitions, context.column_width,
                              dialects)
        context.remote_price = cost_model.remote_price   # which form of a subplan to push
        search = CascadesSearch(context, self.rules, cost_model, self.prune)
        search.explore_all(root)
        root = root.find()
        winner = search.optimize_group(root, ANY)
        if winner is None:
            if self.rules.disabled:   # (a required implementation rule cannot be disabled)
                raise CboError("the search found no plan with the rules disabled ("
                               f"{', '.join(sorted(self.rules.disabled))}): enable them")
            raise AssertionError("the search found no plan (the written plan is always one)")
        chosen = in_written_order(extract(search, winner, root), plan, cost_model)
        note_pushdown_costs(context, chosen)
        note_cte_costs(context, search, chosen)
        pushdown = pushdown_choices(context, chosen, search.physicals)
        memo.counters.elapsed_ms = (time.perf_counter() - started) * 1000.0
        return Optimized(chosen, winner.cost, memo, root, partitions, pushdown, search)


    def implement(self, plan: Plan) -> Optimized:
        """The cheapest physical plan of ``plan`` as written: no transformation runs, each
        operator gets its cheapest algorithm and the exchanges it needs. For a plan drawn from a
        memo (``draw_plan``): a complete physical plan with a cost comparable to the winner's."""
        rules = self.rules
        self.rules = rules.implementation_only()
        try:
            return self.optimize(plan)
        finally:
            self.rules = rules


def _scanned_bytes(plan: Plan, memo: Memo, context: SearchContext) -> float:
    """The bytes of the tables ``plan`` reads (each distinct scan once), a CTE's read as often as
    it is named: the partition count is the same whether the search computes the CTE once or
    inlines it, as it was when every reference was the CTE's own copy."""
    producers: dict[int, Plan] = {}
    node = plan
    while isinstance(node, CteAnchor):
        producers[node.cte] = node.producer
        node = node.body

    def read(subplan: Plan) -> float:
        seen: set[int] = set()
        total = 0.0
        for found in walk(subplan):
            if isinstance(found, Scan):
                group = memo.insert(found)
                if group.id not in seen:
                    seen.add(group.id)
                    total += context.size_bytes(group)
            elif isinstance(found, CteConsumer) and found.cte in producers:
                total += read(producers[found.cte])
        return total

    return read(node)


def draw_plan(group: Group, rng: random.Random) -> Plan:
    """Any plan the memo holds for ``group``: a random logical expression per group, recursively
    (for equivalence tests: every alternative must give the same answer, not only the winner)."""
    expr = rng.choice(group.expressions)
    children = tuple(draw_plan(group_of(child), rng) for child in expr.children)
    return expr.with_children(children) if children else expr


def restore_output_order(chosen: Plan, written: Plan) -> Plan:
    """Reordered joins emit their columns in another order; the query's answer keeps its own."""
    if chosen.output == written.output:
        return chosen
    return Project(chosen, tuple((c, ColumnRef(c)) for c in written.output))


def in_written_order(chosen: PhysicalPlan, written: Plan, model: CostModel) -> PhysicalPlan:
    """``restore_output_order`` on the physical plan: the projection is an operator of its own
    (``written``: any plan with the query's output columns in their order)."""
    project = restore_output_order(chosen.logical, written)
    if project is chosen.logical:
        return chosen
    size = (chosen.rows, chosen.width)
    quantities = model.quantities(project, Algorithm.PROJECT, size, [size])
    cost = model.operator_price(project, Algorithm.PROJECT, quantities, size, [size])
    return PhysicalPlan(Algorithm.PROJECT, project, (chosen,), chosen.rows, chosen.width, cost, chosen.total + cost,
                        (ANY,), chosen.delivered, quantities, None, None)
