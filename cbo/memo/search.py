"""The Cascades-style search: explore groups with rules, cost alternatives top-down, keep winners.

The tasks of Cascades (Graefe 1995; Columbia's task names) are methods calling each other
depth-first, the plan's height bounding the recursion:

* ``optimize_group(g, required, limit)``: the cheapest plan of ``g`` delivering ``required``
  that costs less than ``limit``, or None. Winners are memoized per (group, required); a
  group that had no plan under a limit is not searched again under a smaller one.
* ``explore_group(g)``: apply every enabled transformation rule to every logical expression of
  ``g`` once (``apply_rule``), including expressions the rules add while this runs.
* ``optimize_expression(e)``: the implementation rules' physical alternatives of ``e``.
* ``optimize_inputs(p, limit)``: cost a physical alternative: its local cost first (pruned if
  that alone reaches the limit), then each input's winner under what is left of the limit.

The limit starts unbounded and drops to the cost of the best alternative found, so an
alternative that cannot win is abandoned as soon as its partial cost reaches the best one.
Rules run in a fixed order over expressions in insertion order, so the same input always
gives the same memo and the same plan.

The budget (``OptimizerSettings.max_rule_applications``, optionally a time limit) stops
exploration: the memo keeps what it holds, which always includes the written plan, and the
search returns the cheapest plan among those.
"""

from __future__ import annotations

import gc
import math
import random
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from cbo.cost import CostModel, CostProfile, default_profile
from cbo.cost.model import Quantities
from cbo.ir.expressions import Column, ColumnRef
from cbo.ir.operators import Plan, Project, Scan
from cbo.memo.delivery import deliver
from cbo.memo.memo import Counters, Group, Memo, PhysicalExpr, Winner
from cbo.memo.properties import ANY, Required, delivered_by
from cbo.memo.rules.base import RuleSet, connector_rules
from cbo.memo.rules.implement import implementation_rules
from cbo.memo.rules.reorder_joins import ReorderJoins
from cbo.memo.rules.table_pushdown import PushTableIntoAggregate
from cbo.settings import OptimizerSettings

if TYPE_CHECKING:
    from cbo.estimate import Estimator


def default_rules(source_types: tuple[str, ...] = (), disabled: frozenset[str] = frozenset()) -> RuleSet:
    rules = [ReorderJoins(), PushTableIntoAggregate(), *implementation_rules(), *connector_rules(source_types)]
    return RuleSet(rules, disabled)


class SearchContext:
    """What rules see: the memo, the settings, the counters and the budget."""

    def __init__(self, memo: Memo, settings: OptimizerSettings):
        self.memo = memo
        self.settings = settings
        self.counters = memo.counters
        self.region_members: set[int] = set()
        self.steps = 0
        self._deadline = None if settings.search_time_limit_ms is None else \
            time.perf_counter() + settings.search_time_limit_ms / 1000.0
        self._sizes: dict[int, tuple[float, float]] = {}
        self._column_widths: dict[int, float] = {}

    def size(self, group: Group) -> tuple[float, float]:
        """(estimated rows, bytes per row) of a group's result."""
        found = self._sizes.get(group.id)
        if found is None:
            found = self._sizes[group.id] = (group.rows, sum(self.column_width(c) for c in group.output))
        return found

    def size_bytes(self, group: Group) -> float:
        rows, width = self.size(group)
        return rows * width

    def column_width(self, column: Column) -> float:
        """A column's average width: from the statistics of the scan that reads it (a width
        never changes on the way up), else the default of 8 bytes."""
        found = self._column_widths.get(column.id)
        if found is None:
            found = 8.0
            for group in self.memo.groups:
                if isinstance(group.first, Scan) and column in group.estimate.columns:
                    found = group.estimate.columns[column].width
                    break
            self._column_widths[column.id] = found
        return found

    def spend(self, steps: int = 1) -> None:
        self.steps += steps

    def out_of_budget(self) -> bool:
        if self.steps >= self.settings.max_rule_applications:
            self.counters.budget_exhausted = "rule applications"
            return True
        if self._deadline is not None and time.perf_counter() > self._deadline:
            self.counters.budget_exhausted = "time"
            return True
        return False


@dataclass
class Optimized:
    """The search's result: the chosen plan, its strategies, and the memo for inspection."""

    plan: Plan
    join_strategies: dict[Plan, str]   # every node with a strategy (joins, aggregations, sorts)
    cost: float
    memo: Memo
    root: Group
    expression_costs: dict[tuple[int, int], float | None] = field(default_factory=dict)
    partitions: int = 0                      # shuffle partitions the plan was costed with
    quantities: Quantities = field(default_factory=dict)   # the chosen plan's, summed
    exchanges: dict[Plan, list[str]] = field(default_factory=dict)   # enforcers below each node
    # The memo group each node of the chosen plan came from: its estimate is the group's, the
    # one number EXPLAIN, the memo dump and the drawings all show (re-estimating the extracted
    # tree would give another, since estimates depend on the join order they are derived along).
    groups: dict[Plan, Group] = field(default_factory=dict)

    @property
    def counters(self) -> Counters:
        return self.memo.counters


class Optimizer:
    def __init__(self, estimator: "Estimator", settings: OptimizerSettings | None = None,
                 rules: RuleSet | None = None, profile: CostProfile | None = None,
                 remote_tables: frozenset[str] = frozenset()):
        self.estimator = estimator
        self.settings = settings or OptimizerSettings()
        self.rules = rules or default_rules(disabled=self.settings.disabled_rules)
        self.profile = profile or default_profile()
        self.remote_tables = remote_tables

    def optimize(self, plan: Plan) -> Optimized:
        # The memo creates many small objects and no garbage until it is dropped; the cyclic
        # collector would rescan the growing memo again and again (a third of the time on a
        # 10-relation clique), so it pauses during the search.
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
        root = memo.insert(plan)
        context = SearchContext(memo, self.settings)
        # Shuffles are sized from what the query reads (cbo sets Spark's partition count to it).
        scanned = sum(context.size_bytes(g) for g in memo.groups if isinstance(g.first, Scan))
        partitions = self.settings.shuffle_partitions or self.profile.partitions(scanned)
        cost_model = CostModel(self.profile, self.remote_tables, partitions)
        search = _Search(context, self.rules, cost_model)
        winner = search.optimize_group(root, ANY, math.inf)
        if winner is None:
            raise AssertionError("the search found no plan (the written plan is always one)")
        extracted = _Extraction(search)
        chosen = restore_output_order(extracted.plan(winner, root), plan)
        memo.counters.elapsed_ms = (time.perf_counter() - started) * 1000.0
        return Optimized(chosen, extracted.strategies, winner.cost, memo, root, search.expression_costs(),
                         partitions, extracted.quantities, extracted.exchanges, extracted.groups)


class _Search:
    def __init__(self, context: SearchContext, rules: RuleSet, cost_model: CostModel):
        self.memo = context.memo
        self.context = context
        self.transformations = rules.transformations()
        self.implementations = rules.implementations()
        self.cost_model = cost_model
        self.counters = context.counters
        self._physical: dict[int, list[PhysicalExpr]] = {}
        self._by_operator: dict[type, list] = {}  # type: ignore[type-arg]
        self.size = context.size

    def expression_costs(self) -> dict[tuple[int, int], float | None]:
        """(group id, expression index) -> the best total cost of any of its physical alternatives,
        None when all were pruned; expressions the search never costed are absent."""
        costs: dict[tuple[int, int], float | None] = {}
        for group in self.memo.groups:
            for index, expr in enumerate(group.expressions):
                physicals = self._physical.get(id(expr))
                if not physicals or all(p.local_cost is None for p in physicals):
                    continue
                found = [p.best_cost for p in physicals if p.best_cost is not None]
                costs[(group.id, index)] = min(found) if found else None
        return costs

    # -- exploration -------------------------------------------------------------------------------

    def explore_group(self, group: Group) -> None:
        if group.explored:
            return
        group.explored = True
        index = 0
        while index < len(group.expressions):
            expr = group.expressions[index]
            for rule in self.transformations:
                if self.context.out_of_budget():
                    return
                if rule.matches(expr, group, self.context):
                    self.apply_rule(rule, expr, group)
            index += 1

    def apply_rule(self, rule, expr: Plan, group: Group) -> None:  # type: ignore[no-untyped-def]
        self.context.spend()
        self.counters.rule_applications += 1
        self.counters.by_rule[rule.name] = self.counters.by_rule.get(rule.name, 0) + 1
        for produced in rule.apply(expr, group, self.context):
            refs = tuple(self.memo.insert(child).ref for child in produced.children)
            self.memo.add(produced.with_children(refs) if refs else produced, group)

    # -- optimization ------------------------------------------------------------------------------

    def optimize_group(self, group: Group, required: Required, limit: float) -> Winner | None:
        known = group.winners.get(required)
        if known is not None:
            return known if known.cost < limit else None
        failed = group.failed.get(required)
        if failed is not None and limit <= failed:
            return None
        self.explore_group(group)
        best: Winner | None = None
        bound = limit
        for expr in group.expressions:
            for physical in self.optimize_expression(expr, group):
                found = self.optimize_inputs(physical, group, bound)
                if found is None:
                    continue
                cost, inputs = found
                if physical.best_cost is None or cost < physical.best_cost:
                    physical.best_cost = cost
                if cost < bound:
                    delivered = deliver(physical, [w.delivered for w in inputs])
                    if delivered.satisfies(required):
                        best, bound = Winner(physical, cost, delivered), cost
        if required is not ANY and required.distribution != "clustered":
            # "clustered" is only asked for by a final-only aggregation, the alternative for
            # input that already is; where it is not, Spark aggregates partially first.
            enforced = self.enforce(group, required, bound)
            if enforced is not None:
                best = enforced
        if best is None:
            group.failed[required] = max(limit, group.failed.get(required, -math.inf))
            return None
        group.winners[required] = best
        return best

    def enforce(self, group: Group, required: Required, limit: float) -> Winner | None:
        """The group's plan under a weaker requirement with an enforcer on top: a sort when an
        ordering is required (over the plan delivering the distribution), else an exchange or
        a broadcast over the group's best plan for "any"."""
        if required.ordering:
            weaker = required.without_ordering()
            step = self.cost_model.price(self.cost_model.sort(self.size(group)))
        else:
            weaker = ANY
            step = self.cost_model.price(self.cost_model.distribute(required, self.size(group)))
        if step >= limit:
            return None
        base = self.optimize_group(group, weaker, limit - step)
        if base is None or base.cost + step >= limit:
            return None
        if required.ordering:
            delivered = replace(base.delivered, ordering=tuple(frozenset({c}) for c in required.ordering))
        else:
            delivered = delivered_by(required)
        return Winner(None, base.cost + step, delivered, required, base)

    def optimize_expression(self, expr: Plan, group: Group) -> list[PhysicalExpr]:
        key = id(expr)
        found = self._physical.get(key)
        if found is None:
            found = []
            for rule in self._implementations_of(type(expr)):
                if rule.matches(expr, group, self.context):
                    found.extend(rule.implement(expr, group, self.context))
            self._physical[key] = found
        return found

    def _implementations_of(self, operator: type) -> list:  # type: ignore[type-arg]
        found = self._by_operator.get(operator)
        if found is None:
            found = self._by_operator[operator] = [r for r in self.implementations
                                                   if issubclass(operator, r.operator)]
        return found

    def optimize_inputs(self, physical: PhysicalExpr, group: Group,
                        limit: float) -> tuple[float, list[Winner]] | None:
        total = physical.local_cost
        if total is None:
            total = physical.local_cost = self.cost_model.local(
                physical.node, physical.strategy, self.size(group), [self.size(g) for g in physical.inputs])
        self.counters.alternatives_costed += 1
        if total >= limit:
            self.counters.alternatives_pruned += 1
            return None
        winners = []
        for child, required in zip(physical.inputs, physical.required_inputs):
            winner = self.optimize_group(child, required, limit - total)
            if winner is None:
                self.counters.alternatives_pruned += 1
                return None
            total += winner.cost
            winners.append(winner)
        return total, winners


class _Extraction:
    """The chosen plan as an ordinary plan, with each join's strategy, the enforcers Spark will
    add below each operator, and the quantities of the whole plan (for calibration)."""

    def __init__(self, search: _Search):
        self.search = search
        self.strategies: dict[Plan, str] = {}
        self.exchanges: dict[Plan, list[str]] = {}
        self.quantities: Quantities = {}
        self.groups: dict[Plan, Group] = {}   # each extracted node -> the group it came from

    def plan(self, winner: Winner, group: Group) -> Plan:
        node, _ = self._extract(winner, group)
        return node

    def _count(self, found: Quantities) -> None:
        for name, value in found.items():
            self.quantities[name] = self.quantities.get(name, 0.0) + value

    def _extract(self, winner: Winner, group: Group) -> tuple[Plan, list[str]]:
        """(plan, enforcers on top of it, innermost first)."""
        model = self.search.cost_model
        if winner.physical is None:
            assert winner.base is not None and winner.enforcer is not None
            node, enforcers = self._extract(winner.base, group)
            size = self.search.size(group)
            names = {c.id: str(c) for c in group.output}
            if winner.enforcer.ordering:
                self._count(model.sort(size))
                enforcers.append("sort(" + ", ".join(names.get(c, f"c{c}") for c in winner.enforcer.ordering) + ")")
            else:
                self._count(model.distribute(winner.enforcer, size))
                enforcers.append(_exchange_name(winner.enforcer, names))
            return node, enforcers
        physical = winner.physical
        sizes = [self.search.size(g) for g in physical.inputs]
        self._count(model.quantities(physical.node, physical.strategy, self.search.size(group), sizes))
        children = []
        below: list[str] = []
        for child, need in zip(physical.inputs, physical.required_inputs):
            plan, enforcers = self._extract(child.winners[need], child)
            children.append(plan)
            below.append(" + ".join(enforcers))
        node = physical.node.with_children(tuple(children)) if children else physical.node
        self.groups[node] = group
        if physical.strategy:
            self.strategies[node] = physical.strategy
        if any(below):
            self.exchanges[node] = below
        return node, []


def _exchange_name(need: Required, names: dict[int, str]) -> str:
    if need.distribution == "broadcast":
        return "broadcast"
    if need.distribution == "single":
        return "gather"
    return "shuffle(" + ", ".join(names.get(c, f"c{c}") for c in need.partitioning) + ")"


def draw_plan(group: Group, rng: random.Random) -> Plan:
    """Any plan the memo holds for ``group``: a random logical expression per group, recursively
    (for equivalence tests: every alternative must give the same answer, not only the winner)."""
    expr = rng.choice(group.expressions)
    children = tuple(draw_plan(child.group, rng) for child in expr.children)  # type: ignore[attr-defined]
    return expr.with_children(children) if children else expr


def restore_output_order(chosen: Plan, written: Plan) -> Plan:
    """Reordered joins emit their columns in another order; the query's answer keeps its own."""
    if chosen.output == written.output:
        return chosen
    return Project(chosen, tuple((c, ColumnRef(c)) for c in written.output))
