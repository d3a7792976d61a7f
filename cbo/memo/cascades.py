"""The Cascades-style search: explore groups with rules, cost alternatives on demand, keep winners.

The tasks of Cascades (Graefe 1995; Columbia's task names; Calcite's ``TopDownRuleDriver``) are
methods calling each other depth-first, the plan's height bounding the recursion. They read top
to bottom:

* ``explore_group(g)``: apply every enabled transformation rule to every logical expression of
  ``g`` once (``apply_rule``), including expressions the rules add while this runs. Which
  rules an expression meets is ``cbo.memo.dispatch``'s: by operator and join kind, and for a
  deferred join (``cbo.memo.memo.Deferred``) without making it, so a join is made only when a
  pattern could bind it, when it is implemented, or when a rule's floor reads it.
* ``optimize_group(g, required)``: the cheapest plan of ``g`` delivering ``required``, memoized
  per (group, required): the cheapest costed alternative that delivers it, or an enforcer
  (exchange, broadcast, sort) over the winner of a weaker requirement (``enforce``).
* ``optimize_expression(e)``: the implementation rules' physical alternatives of ``e``.
* ``optimize_inputs(p)``: cost a physical alternative: its own cost plus each input's winner
  under what the alternative requires of it.

An alternative's requirements of its inputs are its own, whoever asks, so its complete cost and
what it delivers are the same for every requirement of its group: each alternative is costed
at most once, into the group's table, and each requirement picks from that table. Columbia's
cost limits instead re-search a group under every caller's limit; with physical properties that
repeated the same work for every limit and requirement.

What makes it fast is what is *not* costed, by bounds known before costing
(``cbo.memo.bounds``):

* expressions are visited in order of a lower bound, their inputs' cheapest plans and the least
  a join costs, and only while that is under the best plan found;
* an expression is not even implemented when every implementation rule's floor of what it
  would make reaches the best plan (``SearchBounds.beaten``);
* an alternative is costed only when its floor is under the best plan (``SearchBounds.floor``);
* for a requirement beyond "any", only alternatives that could deliver it are costed, and
  only while their bound is under the enforced plan's cost.

What the search found of each group and expression is its own state (``cbo.memo.state``), and
goes with it.

Rules run in a fixed order over expressions in insertion order, and ties are broken by
insertion order, so the same input always gives the same memo and the same plan.

The budget (``OptimizerSettings.max_rule_applications``, optionally a time limit) stops
exploration: the memo keeps what it holds, which always includes the written plan, and the
search returns the cheapest plan among those.
"""

from __future__ import annotations

import math
from dataclasses import replace

from cbo.cost import CostModel
from cbo.ir.operators import Join, Plan
from cbo.memo.bounds import TIE, SearchBounds
from cbo.memo.context import SearchContext
from cbo.memo.delivery import deliver
from cbo.memo.dispatch import PatternDispatch
from cbo.memo.memo import UNPREDICTED, Deferred, Group, PhysicalExpr, Winner, current, group_of, inputs_of
from cbo.memo.pattern import bindings
from cbo.memo.rules.base import RuleSet, TransformationRule
from cbo.memo.state import UNKNOWN, CostTable, SearchState
from cbo.physical.algorithm import Algorithm
from cbo.physical.properties import ANY, Required, exchange_algorithm


class CascadesSearch:
    def __init__(self, context: SearchContext, rules: RuleSet, cost_model: CostModel, prune: bool = True):
        self.prune = prune
        self.memo = context.memo
        self.context = context
        self.filters = rules.filters   # expressions no implementation rule may implement
        self.cost_model = cost_model
        self.counters = context.counters
        self.size = context.size
        self.state = SearchState()
        self.dispatch = PatternDispatch(rules.transformations(), rules.implementations(), context, self.explore_group)
        self.bounds = SearchBounds(self, cost_model, context, self.state)

    # -- exploration -------------------------------------------------------------------------------

    def explore_all(self, root: Group) -> None:
        """Explore every group reachable from ``root`` before anything is costed, so groups
        merge (``Memo.merge``) only while no winner exists."""
        seen: set[int] = set()
        stack = [root]
        while stack:
            group = stack.pop().find()
            if group.id in seen:
                continue
            seen.add(group.id)
            self.explore_group(group)
            group = group.find()
            for entry in group.entries:   # (deferred joins named by their input groups, left unmade)
                if isinstance(entry, Deferred):
                    # (a group seen now would be skipped when popped: not pushed, the order of
                    # the rest unchanged; a clique's joins name the same sets thousands of times)
                    for child in entry.inputs:
                        if child.id not in seen:
                            stack.append(child)
                else:
                    stack.extend([child.group for child in inputs_of(entry)])

    def explore_group(self, group: Group) -> None:
        """Apply every transformation rule to every binding of its patterns at every expression
        of the group, including expressions the rules add meanwhile (each expression once)."""
        group = group.find()
        if group.explored:
            return
        group.explored = True
        explored, dispatch, explore, context = self.state.explored, self.dispatch, self.explore_group, self.context
        made_from = self.memo.made_from
        known_runs = dispatch.known
        index = 0
        while index < len(group.entries):
            entry = group.entries[index]
            index += 1
            key = id(entry)
            if key in explored:
                continue
            if made_from:
                # a join the rules saw deferred (made since, e.g. by a binding's listing)
                record = made_from.get(key)
                if record is not None and id(record) in explored:
                    explored[key] = entry
                    continue
            if isinstance(entry, Deferred):
                # Made only when some pattern could bind it; ``None``: out of budget.
                needed = dispatch.rules_need(entry)
                if needed is None:
                    return
                if not needed:
                    explored[key] = entry
                    continue
                expr = self._make(entry)
            else:
                expr = entry
            explored[id(expr)] = expr
            expr_type = type(expr)
            kind = expr.kind if expr_type is Join else None   # type: ignore[attr-defined]
            # (the runs read without a call when known: once per each of a clique's joins)
            runs = known_runs.get((expr_type, kind))
            if runs is None:
                runs = dispatch.runs(expr_type, kind)
            for test, entries, inputs in runs:
                # a test several adjacent patterns share runs once per expression
                if test is not None and not test(expr):
                    continue
                if inputs is not None and not dispatch.could_bind_any(expr, inputs):
                    continue
                for rule, pattern, patterned in entries:
                    if not patterned:
                        # The binding is the expression itself: no generator (the join
                        # enumeration adds tens of thousands of joins that ReorderJoins'
                        # pattern matches).
                        if context.out_of_budget():
                            return
                        expr = current(expr)   # an earlier rule may have merged an input group
                        if rule.matches(expr, group, context):
                            self.apply_rule(rule, expr, group)
                        continue
                    if not pattern.could_bind_inputs(expr, explore):   # most do not: skip the generator
                        continue
                    for binding in bindings(pattern, expr, explore):
                        if context.out_of_budget():
                            return
                        if rule.matches(binding, group, context):
                            self.apply_rule(rule, binding, group)
            if group.merged_into is not None:   # a rule found it equal to another group
                group = group.find()
                group.explored = True
                index = 0

    def apply_rule(self, rule: TransformationRule, expr: Plan, group: Group) -> None:
        self.context.spend()
        self.counters.rule_applications += 1
        self.counters.by_rule[rule.name] = self.counters.by_rule.get(rule.name, 0) + 1
        before = (self.memo.additions, self.counters.merges)
        for produced in rule.apply(expr, group, self.context):
            refs = tuple(self.memo.insert(child).ref for child in produced.children)
            if any(ref.group is group.find() for ref in refs):
                # An expression over its own group (an identity projection of a plan the group
                # already holds, found when a rewrite rebuilds an expression of the group): a
                # cycle that adds no plan.
                continue
            self.memo.add(produced.with_children(refs) if refs else produced, group.find(), rule.name)
        if (self.memo.additions, self.counters.merges) != before:
            self.counters.fired[rule.name] = self.counters.fired.get(rule.name, 0) + 1

    def _make(self, record: Deferred) -> Plan:
        """The deferred join made (``Memo.make``), with what the bounds found of its deliveries."""
        made = self.memo.make(record)
        recorded = self.state.known(record)
        if recorded is not None and recorded.deliverables is not UNKNOWN:
            state = self.state.expr(made)
            if state.deliverables is UNKNOWN:
                state.deliverables = recorded.deliverables   # (same keys, kind, inputs)
        return made

    # -- optimization ------------------------------------------------------------------------------

    def optimize_group(self, group: Group, required: Required) -> Winner | None:
        """The cheapest plan of ``group`` delivering ``required``, None if there is none.

        Every physical alternative states its inputs' requirements itself, whatever its parent
        requires, so its complete cost and what it delivers are the same for every caller: each
        is costed at most once (``CostTable``), and a requirement picks the cheapest alternative
        that satisfies it, or an enforcer over the winner of a weaker requirement.
        """
        winners = group.winners
        known = winners.get(required, UNKNOWN)
        if known is UNKNOWN:
            known = winners[required] = self._winner(group, required)
        return known

    def _winner(self, group: Group, required: Required) -> Winner | None:
        table = self.table(group)
        self._evaluate_any(table, group)
        if required is ANY:
            return table.cheapest(ANY)
        enforced = None
        if required.distribution != "clustered" or required.ordering:
            # "clustered" is only asked for where the input already is (a final-only
            # aggregation; where it is not, Spark aggregates partially first): no exchange
            # makes it, but a sort may order what already is clustered.
            enforced = self.enforce(group, required)
        self._evaluate_for(table, group, required, enforced.cost if enforced is not None else math.inf)
        best = table.cheapest(required)
        if enforced is not None and (best is None or enforced.cost < best.cost):
            best = enforced
        return best

    def table(self, group: Group) -> CostTable:
        """The group's cost table: its expressions (explored first) in the order of their lower
        bound, the cost of their inputs' cheapest plans, plus for a join the least its strategy
        costs (``CostModel.join_floors``)."""
        tables = self.state.tables
        table = tables.get(group.id)
        if table is None:
            self.explore_group(group)
            pending: list[tuple[float, int, Plan | Deferred]] = []
            out: tuple[float, float] | None = None
            size = self.size
            # joins whose inputs have plans: (their inputs' cost, index, expression), and their
            # inputs' rows, for the least the join itself costs
            joins: list[tuple[float, int, Plan | Deferred]] = []
            left_rows: list[float] = []
            right_rows: list[float] = []
            for index, expr in enumerate(group.entries):
                expr_type = type(expr)
                if expr_type is Join or expr_type is Deferred:
                    # (the common case, tens of thousands after a join enumeration, without
                    # the general loop; a winner already known is read without a call; a
                    # deferred join is ordered by its input groups, left unmade)
                    if expr_type is Deferred:
                        left, right = expr.inputs   # type: ignore[union-attr]
                    else:
                        left, right = expr.left.group, expr.right.group   # type: ignore[union-attr]
                    a = left.winners.get(ANY, UNKNOWN)
                    if a is UNKNOWN:
                        a = self.optimize_group(left, ANY)
                    b = right.winners.get(ANY, UNKNOWN)
                    if b is UNKNOWN:
                        b = self.optimize_group(right, ANY)
                    if a is None or b is None:
                        lower = math.inf
                    else:
                        # What any strategy of the join itself costs at least: orders and prunes
                        # the expressions before any is implemented (in a star, most of them).
                        if out is None:
                            out = size(group)
                        joins.append((a.cost + b.cost, index, expr))
                        left_rows.append((left.size or size(left))[0])
                        right_rows.append((right.size or size(right))[0])
                        continue
                else:
                    lower = 0.0
                    for child in expr.children:   # type: ignore[union-attr]
                        winner = self.optimize_group(group_of(child), ANY)
                        lower = math.inf if winner is None else lower + winner.cost
                    if lower > 0.0 and self._reads_below(expr, group):
                        lower = 0.0   # (its inputs' plans bound none of its alternatives)
                pending.append((lower, index, expr))
            if joins:
                assert out is not None
                floors = self.cost_model.join_floors(out, left_rows, right_rows)
                pending += [(inputs + floor, index, expr) for (inputs, index, expr), floor in zip(joins, floors)]
            pending.sort()   # by bound, then index: indexes differ, so expressions are never compared
            table = tables[group.id] = CostTable(pending)
        return table

    def _reads_below(self, expr: Plan | Deferred, group: Group) -> bool:
        """Whether an implementation rule whose alternatives read below the expression's inputs
        (``ImplementationRule.reads_below``: a top-N over a sort) matches it."""
        if isinstance(expr, Deferred):
            return False
        return any(rule.reads_below and rule.matches(expr, group, self.context)
                   for rule in self.dispatch.implementations(type(expr)))

    def _evaluate_any(self, table: CostTable, group: Group) -> None:
        """Cost every alternative that could be the group's cheapest plan, expressions in order of
        their lower bound, while that is under the best plan found so far; an alternative only
        when its floor is under it too."""
        pending, bounds = table.pending, self.bounds
        while table.next < len(pending):
            lower, _, entry = pending[table.next]
            if self.prune and lower >= table.best_any * TIE:
                return
            if self.prune and table.best_any < math.inf and bounds.beaten(entry, group, table.best_any * TIE):
                # No alternative of it could beat the winner: not even implemented (a deferred
                # join not even made).
                table.next += 1
                self.state.expr(entry).skipped = True
                continue
            expr = self._pending(table, table.next)
            table.next += 1
            for physical in self.optimize_expression(expr, group):
                if not physical.costed and (not self.prune or bounds.floor(physical, group) < table.best_any * TIE):
                    self._cost(physical, group, table)

    def _evaluate_for(self, table: CostTable, group: Group, required: Required, threshold: float) -> None:
        """Cost the alternatives that could beat ``threshold`` (the enforced plan's cost) under
        ``required``: those that can deliver it and whose floor is under the threshold. What a
        join delivers is known before it is costed (its strategy's partitioning, or its probe
        side's cheapest plan's), so a join that cannot deliver a requirement is not even
        implemented for it."""
        pending, bounds = table.pending, self.bounds
        for position in range(len(pending)):
            if self.prune and pending[position][0] >= threshold * TIE:
                return
            if not bounds.may_deliver(pending[position][2], group, required):
                continue
            expr = self._pending(table, position)
            for physical in self.optimize_expression(expr, group):
                if physical.costed:
                    continue
                predicted = physical.predicted
                if predicted is UNPREDICTED:
                    predicted = physical.predicted = bounds.predict(physical)
                if predicted is not None and not predicted.satisfies(required):  # type: ignore[attr-defined]
                    continue
                if not self.prune or bounds.floor(physical, group) < threshold * TIE:
                    self._cost(physical, group, table)

    def _pending(self, table: CostTable, position: int) -> Plan:
        """The expression at ``position`` of the table's order, made if deferred (what reads
        the expression itself, not only its input groups, goes through here)."""
        lower, index, entry = table.pending[position]
        if isinstance(entry, Deferred):
            made = self._make(entry)
            table.pending[position] = (lower, index, made)
            return made
        return entry

    def optimize_expression(self, expr: Plan, group: Group) -> list[PhysicalExpr]:
        """The expression's physical alternatives: what its implementation rules make of it,
        as the rule set's filters narrow them (made once)."""
        state = self.state.expr(expr)
        found = state.physicals
        if found is None:
            found = []
            excluded = any(f.excludes(expr, group, self.context) for f in self.filters)
            for rule in () if excluded else self.dispatch.implementations(type(expr)):
                if rule.matches(expr, group, self.context):
                    made = list(rule.implement(expr, group, self.context))
                    if made:
                        found.extend(made)
                        self.counters.fired[rule.name] = self.counters.fired.get(rule.name, 0) + 1
            for narrowing in self.filters:
                found = narrowing.narrow(found, expr, group, self.context)
            state.physicals = found
        return found

    def _cost(self, physical: PhysicalExpr, group: Group, table: CostTable) -> None:
        physical.costed = True
        costed = self.optimize_inputs(physical, group)
        if costed is None:
            return
        cost, inputs = costed
        physical.best_cost = cost
        table.add(Winner(physical, cost, deliver(physical, [w.delivered for w in inputs])), self.counters)

    def optimize_inputs(self, physical: PhysicalExpr, group: Group) -> tuple[float, list[Winner]] | None:
        """The alternative's complete cost (its own, plus each input's winner under what it
        requires of that input) and those winners; None when an input has no plan."""
        total = self.local_cost(physical, group)
        self.counters.alternatives_costed += 1
        winners = []
        for child, required in zip(physical.inputs, physical.required_inputs):
            winner = self.optimize_group(child, required)
            if winner is None:
                return None
            total += winner.cost
            winners.append(winner)
        return total, winners

    def local_cost(self, physical: PhysicalExpr, group: Group) -> float:
        """The alternative's own cost, without its inputs' (computed once)."""
        found = physical.local_cost
        if found is None:
            found = physical.local_cost = self.cost_model.local(
                physical.node, physical.algorithm, self.size(group), [self.size(g) for g in physical.inputs])
        return found

    def enforce(self, group: Group, required: Required) -> Winner | None:
        """The group's plan under a weaker requirement with an enforcer on top: a sort when an
        ordering is required (over the plan delivering the distribution), else an exchange or
        a broadcast over the group's best plan for "any"."""
        if required.ordering:
            weaker = self.context.required.without_ordering(required)
            step = self.cost_model.enforcer_price(Algorithm.LOCAL_SORT, self.cost_model.sort(self.size(group)),
                                                  self.size(group))
        else:
            weaker = ANY
            step = self.cost_model.enforcer_price(exchange_algorithm(required),
                                                  self.cost_model.distribute(required, self.size(group)),
                                                  self.size(group))
        base = self.optimize_group(group, weaker)
        if base is None:
            return None
        if required.ordering:
            delivered = replace(base.delivered, ordering=tuple(frozenset({c}) for c in required.ordering),
                                directions=required.directions)
        else:
            delivered = required.enforced
        return Winner(None, base.cost + step, delivered, required, base)

    # -- reading the finished search ---------------------------------------------------------------

    def expression_costs(self) -> dict[tuple[int, int], float | None]:
        """(group id, expression index) -> the best total cost of any of its physical alternatives,
        None when all were pruned; expressions the search never costed are absent."""
        costs: dict[tuple[int, int], float | None] = {}
        for group in self.memo:
            for index, expr in enumerate(group.expressions):
                state = self.state.known(expr)
                physicals = (state.physicals if state is not None else None) or []
                record = self.memo.made_from.get(id(expr))
                recorded = self.state.known(record) if record is not None else None
                skipped = (state is not None and state.skipped) or (recorded is not None and recorded.skipped)
                if not skipped and all(p.local_cost is None for p in physicals):
                    continue
                found = [p.best_cost for p in physicals if p.best_cost is not None]
                costs[(group.id, index)] = min(found) if found else None
        return costs

    def physicals(self, group: Group) -> list[PhysicalExpr]:
        """The physical alternatives the search made for ``group``'s expressions (a rule that
        yields one alternative for every expression of a group, the remote query, counts once)."""
        found: dict[PhysicalExpr, None] = {}
        for expr in group.find().expressions:
            state = self.state.known(expr)
            for physical in (state.physicals if state is not None else None) or ():
                found.setdefault(physical, None)
        return list(found)

    def expression_bounds(self) -> dict[tuple[int, int], float]:
        """(group id, expression index) -> the lower bound the search ordered it by (its inputs'
        cheapest plans, plus the least a join costs), for the expressions of groups it costed."""
        bounds: dict[tuple[int, int], float] = {}
        for group in self.memo:
            table = self.state.tables.get(group.id)
            if table is None:
                continue
            for lower, index, entry in table.pending:
                expr = entry.made if isinstance(entry, Deferred) else entry   # (made by Group.expressions)
                if index < len(group.expressions) and group.expressions[index] is expr:
                    bounds[(group.id, index)] = lower
        return bounds
