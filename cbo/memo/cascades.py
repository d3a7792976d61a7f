"""The Cascades-style search: explore groups with rules, cost alternatives on demand, keep winners.

The tasks of Cascades (Graefe 1995; Columbia's task names) are methods calling each other
depth-first, the plan's height bounding the recursion:

* ``optimize_group(g, required)``: the cheapest plan of ``g`` delivering ``required``, memoized
  per (group, required): the cheapest costed alternative that delivers it, or an enforcer
  (exchange, broadcast, sort) over the winner of a weaker requirement.
* ``explore_group(g)``: apply every enabled transformation rule to every logical expression of
  ``g`` once (``apply_rule``), including expressions the rules add while this runs. A deferred
  join (``cbo.memo.memo.Deferred``) is made only when a pattern could bind it (``_rules_need``);
  the search orders expressions by their input groups and reads a deferred join's keys without
  making it, so a join is made only when it is implemented (or a rule's floor reads it).
* ``optimize_expression(e)``: the implementation rules' physical alternatives of ``e``.
* ``optimize_inputs(p)``: cost a physical alternative: its own cost plus each input's winner
  under what the alternative requires of it.

An alternative's requirements of its inputs are its own, whoever asks, so its complete cost and
what it delivers are the same for every requirement of its group: each alternative is costed
at most once, into the group's table, and each requirement picks from that table. Columbia's
cost limits instead re-search a group under every caller's limit; with physical properties that
repeated the same work for every limit and requirement (a 12-relation star took 9 s).

What makes it fast is what is *not* costed (the bounds are exact: ``tests/quick/
test_search_bounds.py`` checks the pruned search against one that costs everything):

* expressions are visited in order of a lower bound, their inputs' cheapest plans, and only
  while that is under the best plan found;
* an alternative is costed only when its *floor* is under the best plan: its own cost, its
  inputs' cheapest plans, and the enforcers its inputs cannot avoid (a build side is always
  broadcast; a side none of whose expressions could be partitioned on the keys is always
  shuffled). In a star this skips nearly every shuffled join of the big side;
* an expression is not even implemented when every implementation rule's floor of what it
  would make (``ImplementationRule.floor``: the join strategies give theirs) reaches the best
  plan: a 12-relation star implements one join in five of those the enumeration adds;
* for a requirement beyond "any", only alternatives that could deliver it are costed, and
  only while their bound is under the enforced plan's cost. What a join delivers is known
  before costing it (its strategy's partitioning, or its probe side's cheapest plan's).

Rules run in a fixed order over expressions in insertion order, and ties are broken by
insertion order, so the same input always gives the same memo and the same plan.

The budget (``OptimizerSettings.max_rule_applications``, optionally a time limit) stops
exploration: the memo keeps what it holds, which always includes the written plan, and the
search returns the cheapest plan among those.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from cbo.cost import CostModel
from cbo.ir.expressions import Column
from cbo.ir.operators import Join, Plan
from cbo.memo.context import SearchContext
from cbo.memo.delivery import deliver
from cbo.memo.memo import UNPREDICTED, Counters, Deferred, Group, PhysicalExpr, Winner, current, group_of
from cbo.memo.pattern import Pattern, bindings
from cbo.memo.rules.base import RuleSet, TransformationRule
from cbo.physical.properties import ANY, BROADCAST, Delivered, Required

# A bound equal to the best cost up to rounding (the same terms summed in another order) is a
# tie, and ties go to the alternative found first: without this, a star whose join orders all
# cost the same (no filters) costs every one of them.
_TIE = 1.0 - 1e-9
# An expression's floor from its rules' bounds sums the same terms as its alternatives' floors,
# perhaps in another order: a margin of rounding before it prunes what they would not.
_ROUNDING = 1.0 - 1e-12

_UNKNOWN = object()   # a requirement not searched yet (a winner may be None: no plan delivers it)

# What a run of patterns asks of a deferred join whose test passes (see _steps_for_deferred).
_BIND, _BUDGET, _MAKE = object(), object(), object()
_Step = tuple[Callable[[Deferred], bool] | None, object, tuple[tuple[int, tuple[type, ...]], ...] | None]


# A run of adjacent patterns sharing a test (see CascadesSearch._patterns_of).
_Block = tuple[Callable[[Plan], bool] | None, list[tuple[TransformationRule, Pattern, bool]],
               tuple[tuple[int, tuple[type, ...]], ...] | None]


def _single_inputs(entries: list[tuple[TransformationRule, Pattern, bool]]
                   ) -> tuple[tuple[int, tuple[type, ...]], ...] | None:
    """For a run of patterns each patterning exactly one input: (input position, the operators
    the run's patterns ask of it, each once), positions in the order the patterns first name
    them; else None. (Two rules ask the same operators of the same inputs: asking a group
    twice whether it holds one would only repeat the answer, for each of a clique's joins.)"""
    inputs: dict[int, dict[type, None]] = {}
    for _, pattern, _ in entries:
        if len(pattern.patterned_inputs) != 1:
            return None
        index, operator = pattern.patterned_inputs[0]
        inputs.setdefault(index, {})[operator] = None
    return tuple((index, tuple(operators)) for index, operators in inputs.items())


class CostTable:
    """A group's physical alternatives costed so far, the cheapest per delivered property set (a
    dearer plan delivering the same is never chosen), and its expressions not yet costed, in
    order of their lower bound: the cost of their inputs' cheapest plans."""

    __slots__ = ("pending", "next", "by_delivered", "best_any", "index", "indexed")

    def __init__(self, pending: list[tuple[float, int, Plan | Deferred]]):
        self.pending = pending
        self.index: dict[object, float] | None = None   # see CascadesSearch._natural_floor
        self.indexed = 0                                  # how many of ``pending`` the index holds
        self.next = 0
        self.by_delivered: dict[Delivered, Winner] = {}
        self.best_any = math.inf

    def add(self, winner: Winner, counters: Counters) -> None:
        known = self.by_delivered.get(winner.delivered)
        if known is not None:
            counters.alternatives_pruned += 1
            if known.cost <= winner.cost:
                return
        self.by_delivered[winner.delivered] = winner
        self.best_any = min(self.best_any, winner.cost)

    def cheapest(self, required: Required) -> Winner | None:
        best = None
        for winner in self.by_delivered.values():
            if (best is None or winner.cost < best.cost) and winner.delivered.satisfies(required):
                best = winner
        return best


class CascadesSearch:
    def __init__(self, context: SearchContext, rules: RuleSet, cost_model: CostModel, prune: bool = True):
        self.prune = prune
        self.memo = context.memo
        self.context = context
        self.transformations = rules.transformations()
        self.implementations = rules.implementations()
        self.filters = rules.filters   # expressions no implementation rule may implement
        self.cost_model = cost_model
        self.counters = context.counters
        self._physical: dict[int, list[PhysicalExpr]] = {}
        self._tables: dict[int, CostTable] = {}   # group id -> its costed alternatives
        self._deliverable: dict[int, list[Delivered] | None] = {}   # id(expression) -> see _deliverables
        self._input_floors: dict[tuple[int, int], float] = {}   # (group id, id(required)) -> _input_floor
        self._hash_floors: dict[int, float] = {}   # group id -> hash_floor
        self._broadcast_floors: dict[int, float] = {}   # group id -> broadcast_floor
        # (id(join.equi_keys), kind) -> (the equi_keys, see _keyed_delivery)
        self._keyed: dict[tuple[int, str], tuple[object, list[tuple[int, int]], Delivered | None]] = {}
        self._keys_of: dict[int, tuple[Delivered, list[object]]] = {}   # id(delivered) -> _index_keys
        self._merges: dict[tuple[int, int], tuple[Delivered, list[tuple[int, int]], Delivered]] = {}   # _merged
        # Expressions ``_evaluate_any`` skipped unimplemented (by identity; kept, as in _explored):
        # every alternative they would have had was beaten, as if each had been floored.
        self._skipped: dict[int, Plan | Deferred] = {}
        self._by_operator: dict[type, list] = {}
        self._patterns_by_operator: dict[tuple[type, str | None], list[_Block]] = {}
        self._deferred_steps: dict[str, list[_Step]] = {}   # join kind -> see _steps_for_deferred
        # The expressions the rules have seen, by identity. The objects are kept (not only their
        # ids): a merge drops rebuilt expressions, and a freed object's id could be reused by a
        # new expression, which would then never be explored.
        self._explored: dict[int, Plan | Deferred] = {}
        self.size = context.size

    def expression_costs(self) -> dict[tuple[int, int], float | None]:
        """(group id, expression index) -> the best total cost of any of its physical alternatives,
        None when all were pruned; expressions the search never costed are absent."""
        costs: dict[tuple[int, int], float | None] = {}
        for group in self.memo:
            for index, expr in enumerate(group.expressions):
                physicals = self._physical.get(id(expr)) or []
                skipped = id(expr) in self._skipped or id(self.memo.made_from.get(id(expr))) in self._skipped
                if not skipped and all(p.local_cost is None for p in physicals):
                    continue
                found = [p.best_cost for p in physicals if p.best_cost is not None]
                costs[(group.id, index)] = min(found) if found else None
        return costs

    def physicals(self, group: Group) -> list[PhysicalExpr]:
        """The physical alternatives the search made for ``group``'s expressions (a rule that
        yields one alternative for every expression of a group, the remote query, counts once)."""
        found: dict[int, PhysicalExpr] = {}
        for expr in group.find().expressions:
            for physical in self._physical.get(id(expr), ()):
                found.setdefault(id(physical), physical)
        return list(found.values())

    def expression_bounds(self) -> dict[tuple[int, int], float]:
        """(group id, expression index) -> the lower bound the search ordered it by (its inputs'
        cheapest plans, plus the least a join costs), for the expressions of groups it costed."""
        bounds: dict[tuple[int, int], float] = {}
        for group in self.memo:
            table = self._tables.get(group.id)
            if table is None:
                continue
            for lower, index, entry in table.pending:
                expr = entry.made if isinstance(entry, Deferred) else entry   # (made by Group.expressions)
                if index < len(group.expressions) and group.expressions[index] is expr:
                    bounds[(group.id, index)] = lower
        return bounds

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
                    stack.extend([child.group for child in entry.children])   # type: ignore[attr-defined]   # (group references)

    def explore_group(self, group: Group) -> None:
        """Apply every transformation rule to every binding of its patterns at every expression
        of the group, including expressions the rules add meanwhile (each expression once)."""
        group = group.find()
        if group.explored:
            return
        group.explored = True
        explored, explore, context = self._explored, self.explore_group, self.context
        made_from = self.memo.made_from
        known_patterns = self._patterns_by_operator
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
                needed = self._rules_need(entry)
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
            # (the patterns read without a call when known: once per each of a clique's joins)
            blocks = known_patterns.get((expr_type, kind))
            if blocks is None:
                blocks = self._patterns_of(expr_type, kind)
            for test, entries, inputs in blocks:
                # a test several adjacent patterns share runs once per expression
                if test is not None and not test(expr):
                    continue
                if inputs is not None and not self._could_bind_any(expr, inputs):
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

    def _rules_need(self, record: Deferred) -> bool | None:
        """Whether some transformation rule could bind the deferred join ``record``, decided as
        for a made one without making it: by its kind, by each pattern's test as its
        ``deferred_test`` decides it (a pattern without one needs the join made), by its input
        groups for a run of single-input patterns (explored first, as ``_could_bind_any``
        does), and a rule that takes a group's written expression only (``written_only``) never
        takes a deferred one. None when the budget ran out (the search stops exploring the
        group there, as it would at a made one). Exploring in the same order as for made
        joins matters: it decides which groups exist first."""
        steps = self._deferred_steps.get(record.kind)
        if steps is None:
            steps = self._deferred_steps[record.kind] = self._steps_for_deferred(record.kind)
        for deferred_test, action, inputs in steps:
            if action is _BIND:
                # Whatever the test says, the run binds nothing when the input groups it asks
                # are explored already and hold none of its operators (the test is pure, so
                # skipping it changes nothing: a clique's joins mostly end here, without the
                # graph's walk over its classes that tells whether the join has a condition).
                # (inline, not a call: once per each of a clique's joins)
                groups = record.inputs
                for index, operators in inputs:   # type: ignore[union-attr]
                    if index >= len(groups):
                        break
                    group = groups[index]
                    if group.merged_into is not None or not group.explored or group.holds_any(operators):
                        break
                else:
                    continue
            if deferred_test is not None and not deferred_test(record):
                continue
            if action is _BIND:
                if self._could_bind_groups(record.inputs, inputs):  # type: ignore[arg-type]
                    return True
            elif action is _BUDGET:
                if self.context.out_of_budget():
                    return None
            else:
                return True
        return False

    def _steps_for_deferred(self, kind: str) -> list[_Step]:
        """``_rules_need``'s reading of the join patterns of ``kind``, once per kind: per run of
        patterns (``_patterns_of``), its test as decided for a deferred join and what follows
        when it passes: ``_BIND`` (ask the input groups), ``_BUDGET`` (only rules that take a
        group's written expression: the budget is checked, as for a made join) or ``_MAKE``."""
        steps: list[_Step] = []
        blocks = self._patterns_by_operator.get((Join, kind))
        if blocks is None:
            blocks = self._patterns_of(Join, kind)
        for test, entries, inputs in blocks:
            deferred_test = None
            if test is not None:
                deferred_test = entries[0][1].deferred_test
                if deferred_test is None or any(p.deferred_test is not deferred_test for _, p, _ in entries):
                    steps.append((None, _MAKE, None))   # (a test no deferred join can answer)
                    break
            if inputs is not None:
                steps.append((deferred_test, _BIND, inputs))
            elif all(not patterned and rule.written_only for rule, _, patterned in entries):
                steps.append((deferred_test, _BUDGET, None))
            else:
                steps.append((deferred_test, _MAKE, None))
        return steps

    def _could_bind_groups(self, groups: Sequence[Group], inputs: tuple[tuple[int, tuple[type, ...]], ...]) -> bool:
        """Whether some pattern of a run, each patterning one input, could bind an expression
        whose input groups are ``groups``: each input group in the order the patterns first
        name it, explored first (as each pattern's ``could_bind_inputs`` would explore it, in
        the same order, since a pattern that cannot bind changes nothing), holds one of the
        operators the run's patterns ask of it. (A deferred join is asked by its groups.)"""
        for index, operators in inputs:
            if index >= len(groups):
                return True   # (could_bind_inputs passes an input the expression lacks)
            group = groups[index]
            if group.merged_into is not None:
                group = group.find()
            if not group.explored:
                self.explore_group(group)
                group = group.find()
            if group.holds_any(operators):
                return True
        return False

    def _make(self, record: Deferred) -> Plan:
        """The deferred join made (``Memo.make``), with what ``_deliverables`` found of it."""
        made = self.memo.make(record)
        known = self._deliverable.get(id(record), _UNKNOWN)
        if known is not _UNKNOWN and id(made) not in self._deliverable:
            self._deliverable[id(made)] = known  # type: ignore[assignment]   # (same keys, kind, inputs)
        return made

    def _pending(self, table: CostTable, position: int) -> Plan:
        """The expression at ``position`` of the table's order, made if deferred (what reads
        the expression itself, not only its input groups, goes through here)."""
        lower, index, entry = table.pending[position]
        if isinstance(entry, Deferred):
            made = self._make(entry)
            table.pending[position] = (lower, index, made)
            return made
        return entry

    def _patterns_of(self, operator: type, kind: str | None) -> list[_Block]:
        """The patterns whose operator ``operator`` is (and, for a join, that accept its ``kind``:
        ``Pattern.kinds``), in rule order, as runs of adjacent patterns sharing one test: (the
        test, [(rule, pattern, whether its inputs are patterned)], and for a run of patterns
        each patterning one input, those inputs as ``_could_bind_any`` reads them). The join
        enumeration adds tens of thousands of inner joins: neither a Project pattern nor a
        semi-join pattern need be tried on any of them, and the four table-pushdown patterns
        test each once and ask each input group once whether it holds what they need."""
        key = (operator, kind)
        found = self._patterns_by_operator.get(key)
        if found is None:
            found = self._patterns_by_operator[key] = []
            for rule in self.transformations:
                for pattern in rule.patterns:
                    if not issubclass(operator, pattern.operator) or \
                            (kind is not None and pattern.kinds is not None and kind not in pattern.kinds):
                        continue
                    if found and found[-1][0] is pattern.test:
                        found[-1][1].append((rule, pattern, pattern.inputs_patterned))
                    else:
                        found.append((pattern.test, [(rule, pattern, pattern.inputs_patterned)], None))
            found[:] = [(test, entries, _single_inputs(entries)) for test, entries, _ in found]
        return found

    def _could_bind_any(self, expr: Plan, inputs: tuple[tuple[int, tuple[type, ...]], ...]) -> bool:
        """Whether some pattern of a run, each patterning one input, could bind ``expr``
        (``_could_bind_groups`` over its input groups)."""
        return self._could_bind_groups([child.group for child in expr.children], inputs)  # type: ignore[attr-defined]   # (group references)

    def apply_rule(self, rule, expr: Plan, group: Group) -> None:
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

    # -- optimization ------------------------------------------------------------------------------

    def optimize_group(self, group: Group, required: Required) -> Winner | None:
        """The cheapest plan of ``group`` delivering ``required``, None if there is none.

        Every physical alternative states its inputs' requirements itself, whatever its parent
        requires, so its complete cost and what it delivers are the same for every caller: each
        is costed at most once (``CostTable``), and a requirement picks the cheapest alternative
        that satisfies it, or an enforcer over the winner of a weaker requirement. (Re-searching
        a group under each caller's cost bound, as Columbia does, repeated that work for every
        bound and requirement: a 12-relation star took 9-28 s.)
        """
        winners = group.winners
        known = winners.get(required, _UNKNOWN)
        if known is _UNKNOWN:
            known = winners[required] = self._winner(group, required)
        return known  # type: ignore[return-value]

    def _winner(self, group: Group, required: Required) -> Winner | None:
        table = self._table(group)
        self._evaluate_any(table, group)
        if required is ANY:
            return table.cheapest(ANY)
        enforced = None
        if required.distribution != "clustered":
            # "clustered" is only asked for by a final-only aggregation, the alternative for
            # input that already is; where it is not, Spark aggregates partially first.
            enforced = self.enforce(group, required)
        self._evaluate_for(table, group, required, enforced.cost if enforced is not None else math.inf)
        best = table.cheapest(required)
        if enforced is not None and (best is None or enforced.cost < best.cost):
            best = enforced
        return best

    def _table(self, group: Group) -> CostTable:
        table = self._tables.get(group.id)
        if table is None:
            self.explore_group(group)
            pending: list[tuple[float, int, Plan | Deferred]] = []
            out: tuple[float, float] | None = None
            size = self.size
            # joins whose inputs have plans: (their inputs' cost, index, expression), and their
            # inputs' rows, for the least the join itself costs (``CostModel.join_floors``)
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
                    a = left.winners.get(ANY, _UNKNOWN)
                    if a is _UNKNOWN:
                        a = self.optimize_group(left, ANY)
                    b = right.winners.get(ANY, _UNKNOWN)
                    if b is _UNKNOWN:
                        b = self.optimize_group(right, ANY)
                    if a is None or b is None:
                        lower = math.inf
                    else:
                        # What any strategy of the join itself costs at least: orders and prunes
                        # the expressions before any is implemented (in a star, most of them).
                        if out is None:
                            out = size(group)
                        joins.append((a.cost + b.cost, index, expr))   # type: ignore[union-attr]   # (winners)
                        left_rows.append((left.size or size(left))[0])
                        right_rows.append((right.size or size(right))[0])
                        continue
                else:
                    lower = 0.0
                    for child in expr.children:   # type: ignore[union-attr]
                        winner = self.optimize_group(group_of(child), ANY)
                        lower = math.inf if winner is None else lower + winner.cost
                pending.append((lower, index, expr))
            if joins:
                assert out is not None
                floors = self.cost_model.join_floors(out, left_rows, right_rows)
                pending += [(inputs + floor, index, expr) for (inputs, index, expr), floor in zip(joins, floors)]
            pending.sort()   # by bound, then index: indexes differ, so expressions are never compared
            table = self._tables[group.id] = CostTable(pending)
        return table

    def _evaluate_any(self, table: CostTable, group: Group) -> None:
        """Cost every alternative that could be the group's cheapest plan, expressions in order of
        their inputs' cheapest plans' cost, while that is under the best plan found so far; an
        alternative only when its floor (``_floor``) is under it too."""
        pending = table.pending
        while table.next < len(pending):
            lower, _, entry = pending[table.next]
            if self.prune and lower >= table.best_any * _TIE:
                return
            if self.prune and table.best_any < math.inf and self._beaten(entry, group, table.best_any * _TIE):
                # No alternative of it could beat the winner: not even implemented (a deferred
                # join not even made).
                table.next += 1
                self._skipped[id(entry)] = entry
                continue
            expr = self._pending(table, table.next)
            table.next += 1
            for physical in self.optimize_expression(expr, group):
                if not physical.costed and (not self.prune or self._floor(physical, group) < table.best_any * _TIE):
                    self._cost(physical, group, table)

    def _beaten(self, expr: Plan | Deferred, group: Group, threshold: float) -> bool:
        """Whether every alternative the implementation rules would make of ``expr`` has a floor
        (``_floor``) at or above ``threshold``, from the rules' own bounds (``ImplementationRule.
        floor``) without making them. False when a rule cannot tell, or when no rule would make
        any (the expression is then implemented, as every expression was before). A deferred
        join is asked by its record (``deferred_floor``, ``excludes_deferred``), unmade."""
        context = self.context
        if isinstance(expr, Deferred):
            return self._deferred_beaten(expr, group, threshold)
        if self.filters and any(f.excludes(expr, group, context) for f in self.filters):
            return False
        best = math.inf
        rules = self._by_operator.get(type(expr))
        if rules is None:
            rules = self._implementations_of(type(expr))
        for rule in rules:
            if rule.matches(expr, group, context):
                found = rule.floor(expr, group, context, self)
                if found is None or found * _ROUNDING < threshold:
                    return False
                if found < best:
                    best = found
        return best < math.inf

    def _deferred_beaten(self, record: Deferred, group: Group, threshold: float) -> bool:
        """``_beaten`` of the join ``record`` would make, asked of the record: the same answer
        (``tests/quick/test_deferred_joins.py``), or False when a rule or filter cannot tell."""
        context = self.context
        for narrowing in self.filters:
            if narrowing.excludes_deferred(record, group, context) is not False:
                return False
        best = math.inf
        rules = self._by_operator.get(Join)
        if rules is None:
            rules = self._implementations_of(Join)
        for rule in rules:
            found = rule.deferred_floor(record, group, context, self)
            if found is None or found * _ROUNDING < threshold:
                return False
            if found < best:
                best = found
        return best < math.inf

    # -- what rules' floors read (cbo.memo.rules.base.Bounds) -----------------------------------------

    def cheapest_cost(self, group: Group) -> float:
        # (the winner read without a call when known: the floors of each of a star's joins ask)
        winner = group.winners.get(ANY)
        if winner is None and ANY not in group.winners:
            winner = self.optimize_group(group, ANY)
        return math.inf if winner is None else winner.cost

    def broadcast_floor(self, group: Group) -> float:
        # kept by group id (``_input_floor`` would build its key for each of a star's joins)
        found = self._broadcast_floors.get(group.id)
        if found is None:
            found = self._broadcast_floors[group.id] = self._input_floor(group, BROADCAST)
        return found

    def hash_floor(self, group: Group) -> float:
        """At most ``_input_floor`` under any hash partitioning (sorted or not): the cheapest plan
        if it delivers a hash partitioning; else the cheaper of it shuffled (the price of a
        shuffle does not depend on the columns) and the least lower bound of the expressions that
        might deliver some partitioning themselves, as ``_natural_floor`` indexes them."""
        found = self._hash_floors.get(group.id)
        if found is None:
            cheapest = self.optimize_group(group, ANY)
            if cheapest is None:
                found = math.inf
            elif cheapest.delivered.partitioning:
                found = cheapest.cost
            else:
                enforced = cheapest.cost + self.cost_model.price(self.cost_model.exchange(*self.size(group)))
                natural = enforced
                for lower, _, expr in self._table(group).pending:
                    if lower >= enforced:
                        break
                    deliverables = self._deliverables(expr, group)
                    if deliverables is None or any(d.partitioning for d in deliverables):
                        natural = lower
                        break
                found = max(cheapest.cost, natural)
            self._hash_floors[group.id] = found
        return found

    def _evaluate_for(self, table: CostTable, group: Group, required: Required, threshold: float) -> None:
        """Cost the alternatives that could beat ``threshold`` (the enforced plan's cost) under
        ``required``: those that can deliver it and whose floor is under the threshold. What a
        join delivers is known before it is costed (its strategy's partitioning, or its probe
        side's cheapest plan's), so a join that cannot deliver a requirement is not even
        implemented for it."""
        pending = table.pending
        for position in range(len(pending)):
            if pending[position][0] >= threshold * _TIE:
                return
            if not self._may_deliver(pending[position][2], group, required):
                continue
            expr = self._pending(table, position)
            for physical in self.optimize_expression(expr, group):
                if physical.costed:
                    continue
                predicted = physical.predicted
                if predicted is UNPREDICTED:
                    predicted = physical.predicted = self._predict(physical)
                if predicted is not None and not predicted.satisfies(required):  # type: ignore[attr-defined]
                    continue
                if self._floor(physical, group) < threshold * _TIE:
                    self._cost(physical, group, table)

    def _floor(self, physical: PhysicalExpr, group: Group) -> float:
        """A lower bound of the alternative's complete cost, without optimizing its inputs for
        what it requires of them: its own cost, each input's cheapest plan, and the enforcers an
        input must pay because none of its expressions can deliver the requirement (a build
        side is always broadcast by an enforcer; a side no join of which is partitioned on the
        keys is always shuffled). Alternatives whose floor reaches the best plan are never
        costed: in a star most hash and merge joins, whose big side would be shuffled."""
        floor = physical.floor
        if floor is None:
            floor = self._local(physical, group)
            for child, need in zip(physical.inputs, physical.required_inputs):
                floor += self._input_floor(child, need)
            physical.floor = floor
        return floor

    def _input_floor(self, group: Group, need: Required) -> float:
        key = (group.id, id(need))
        found = self._input_floors.get(key)
        if found is None:
            found = self._input_floors[key] = self._compute_input_floor(group, need)
        return found

    def _compute_input_floor(self, group: Group, need: Required) -> float:
        """The least an input can cost under ``need``: its cheapest plan if that delivers it;
        else the cheaper of an enforcer over the cheapest plan and the least lower bound of the
        expressions that might deliver it without one (``_natural_floor``)."""
        cheapest = self.optimize_group(group, ANY)
        if cheapest is None:
            return math.inf
        if need is ANY or cheapest.delivered.satisfies(need):
            return cheapest.cost
        model, size = self.cost_model, self.size(group)
        if need.distribution == "clustered":
            enforced = math.inf   # no enforcer makes it: a final-only aggregation needs it delivered
        elif need.ordering:
            weaker = self.context.required.without_ordering(need)
            enforced = model.price(model.sort(size)) + self._input_floor(group, weaker)
        else:
            enforced = cheapest.cost + model.price(model.distribute(need, size))
        return max(cheapest.cost, self._natural_floor(group, need, enforced))

    def _natural_floor(self, group: Group, need: Required, cap: float) -> float:
        """The least of ``cap`` and the least lower bound among the group's expressions that
        might deliver ``need`` without an enforcer, from an index of what each could deliver by
        its first partitioning (or ordering) column: necessary, not sufficient, so a bound,
        computed in a few lookups (clustering on P needs a first partitioning class that meets P).

        The index grows in the order of the expressions' lower bounds, only as far as ``cap``
        (the enforced plan's floor) asks: an expression whose bound reaches the cap cannot lower
        the answer, so a 10-relation clique's join groups index a few of their hundreds."""
        table = self._table(group)
        index = table.index
        if index is None:
            index = table.index = {}
        pending = table.pending
        position = table.indexed
        while position < len(pending) and pending[position][0] < cap:
            lower, _, expr = pending[position]
            position += 1
            deliverables = self._deliverables(expr, group)
            for keys in ([["opaque"]] if deliverables is None else map(self._index_keys, deliverables)):
                for key in keys:
                    # in ascending order of bounds: the first expression found for a key is its least
                    if key not in index:
                        index[key] = lower
        table.indexed = position
        candidates = [cap, index.get("opaque", math.inf)]
        if need.distribution == "single":
            candidates.append(index.get("single", math.inf))
        elif need.distribution == "hash":
            candidates.append(index.get(("hash", len(need.partitioning), need.partitioning[0]), math.inf))
        elif need.distribution == "clustered":
            candidates.append(index.get("single", math.inf))
            candidates += [index.get(("part", c), math.inf) for c in need.partitioning]
        elif need.distribution == "any" and need.ordering:
            candidates.append(index.get(("ordered", need.ordering[0]), math.inf))
        return min(candidates)

    def _index_keys(self, delivered: Delivered) -> list[object]:
        """The keys ``_natural_floor`` indexes a delivery under, kept per delivery object (a
        join enumeration's joins share theirs: ``_keyed_delivery``, ``_merged``)."""
        cached = self._keys_of.get(id(delivered))
        if cached is not None and cached[0] is delivered:
            return cached[1]
        keys: list[object] = []
        if delivered.distribution == "single":
            keys.append("single")
        if delivered.partitioning:
            first = delivered.partitioning[0]
            keys += [("hash", len(delivered.partitioning), c) for c in first]
            keys += [("part", c) for c in first]
        if delivered.ordering:
            keys += [("ordered", c) for c in delivered.ordering[0]]
        self._keys_of[id(delivered)] = (delivered, keys)   # (the delivery kept: its id stays its own)
        return keys

    def _may_deliver(self, expr: Plan | Deferred, group: Group, required: Required) -> bool:
        """Whether some physical alternative of ``expr`` could deliver ``required``."""
        found = self._deliverables(expr, group)
        return found is None or any(d.satisfies(required) for d in found)

    def _deliverables(self, expr: Plan | Deferred, group: Group) -> list[Delivered] | None:
        """What the expression's physical alternatives could deliver beyond "any", known before
        costing them (a superset of the truth, see ``cbo.memo.delivery``), or None when that
        cannot be known (an alternative whose delivery depends on an input it requires more of
        than "any", such as a final-only aggregation). A hash or sort-merge join delivers its
        keys' partitioning and order, a broadcast or nested-loop join its probe side's (the
        left input, or either for an inner join), with the join's equalities merged in; an
        operator whose inputs are required as "any" delivers what it makes of their cheapest
        plans. A deferred join's are known from its keys and input groups, without making it."""
        key = id(expr)
        known = self._deliverable.get(key, _UNKNOWN)
        if known is not _UNKNOWN:
            return known  # type: ignore[return-value]
        found: list[Delivered] | None
        if isinstance(expr, Deferred):
            found = self._join_deliverables(expr.kind, expr.keys(), expr.inputs)
        elif type(expr) is Join:
            found = self._join_deliverables(expr.kind, expr.equi_keys, (group_of(expr.left), group_of(expr.right)))
        else:
            found = self._other_deliverables(expr, group)
        self._deliverable[key] = found
        return found

    def _other_deliverables(self, expr: Plan, group: Group) -> list[Delivered] | None:
        found: list[Delivered] = []
        for physical in self.optimize_expression(expr, group):
            if any(need is not ANY for need in physical.required_inputs):
                return None
            inputs = [self.optimize_group(child, ANY) for child in physical.inputs]
            cheapest = [w for w in inputs if w is not None]
            if len(cheapest) < len(inputs):
                continue
            delivered = deliver(physical, [w.delivered for w in cheapest])
            if delivered.distribution != "any" or delivered.ordering:
                found.append(delivered)
        return found

    def _join_deliverables(self, kind: str, keys: tuple[tuple[Column, Column], ...],
                           inputs: tuple[Group, ...]) -> list[Delivered]:
        """``_deliverables`` of a join of ``kind`` on ``keys`` over the groups ``inputs``."""
        found: list[Delivered] = []
        pairs, keyed = self._keyed_delivery(keys, kind)
        if keyed is not None:
            found.append(keyed)
        probes = inputs if kind == "inner" else inputs[:1]
        for probe in probes:
            # (a winner already known read without a call: asked of most of a clique's joins)
            winner = probe.winners.get(ANY)
            if winner is None and ANY not in probe.winners:
                winner = self.optimize_group(probe, ANY)
            if winner is not None and winner.delivered.distribution != "any":
                found.append(self._merged(winner.delivered, pairs) if kind == "inner" else winner.delivered)
        return found

    def _merged(self, delivered: Delivered, pairs: list[tuple[int, int]]) -> Delivered:
        """``delivered.merged(pairs)``, kept per (delivery, pairs) object: a probe side's plan
        meets the few conditions of the joins it is a side of again and again."""
        key = (id(delivered), id(pairs))
        cached = self._merges.get(key)
        if cached is None or cached[0] is not delivered or cached[1] is not pairs:
            cached = self._merges[key] = (delivered, pairs, delivered.merged(pairs))   # (both kept: ids stay theirs)
        return cached[2]

    def _keyed_delivery(self, keys: tuple[tuple[Column, Column], ...],
                        kind: str) -> tuple[list[tuple[int, int]], Delivered | None]:
        """The join's equalities as column id pairs, and what a join partitioned on its keys
        delivers (None for a kind that cannot be): kept per equalities object and kind, which a
        join enumeration shares among the joins of one condition (45 in a 10-relation clique's
        28,501 joins)."""
        cached = self._keyed.get((id(keys), kind))
        if cached is not None and cached[0] is keys:
            return cached[1], cached[2]
        pairs = [(a.id, b.id) for a, b in keys]
        delivered = None
        if pairs and kind not in ("full", "right", "mark"):
            classes = tuple([frozenset((a, b)) for a, b in pairs] if kind == "inner" else
                            [frozenset((a,)) for a, _ in pairs])
            delivered = Delivered("hash", classes, classes)
        self._keyed[(id(keys), kind)] = (keys, pairs, delivered)   # (keys kept: ids stay theirs)
        return pairs, delivered

    def _predict(self, physical: PhysicalExpr) -> Delivered | None:
        """What a join alternative delivers, from its inputs' cheapest plans (the only inputs
        a join's delivery reads: a broadcast join's probe side, required as "any"); None for
        other operators, whose delivery must be seen after costing."""
        if not isinstance(physical.node, Join):
            return None
        inputs = []
        for child, need in zip(physical.inputs, physical.required_inputs):
            if need is ANY:
                winner = self.optimize_group(child, ANY)
                if winner is None:
                    return None
                inputs.append(winner.delivered)
            else:
                inputs.append(need.enforced)
        return deliver(physical, inputs)

    def _cost(self, physical: PhysicalExpr, group: Group, table: CostTable) -> None:
        physical.costed = True
        costed = self.optimize_inputs(physical, group)
        if costed is None:
            return
        cost, inputs = costed
        physical.best_cost = cost
        table.add(Winner(physical, cost, deliver(physical, [w.delivered for w in inputs])), self.counters)

    def enforce(self, group: Group, required: Required) -> Winner | None:
        """The group's plan under a weaker requirement with an enforcer on top: a sort when an
        ordering is required (over the plan delivering the distribution), else an exchange or
        a broadcast over the group's best plan for "any"."""
        if required.ordering:
            weaker = self.context.required.without_ordering(required)
            step = self.cost_model.price(self.cost_model.sort(self.size(group)))
        else:
            weaker = ANY
            step = self.cost_model.price(self.cost_model.distribute(required, self.size(group)))
        base = self.optimize_group(group, weaker)
        if base is None:
            return None
        if required.ordering:
            delivered = replace(base.delivered, ordering=tuple(frozenset({c}) for c in required.ordering))
        else:
            delivered = required.enforced
        return Winner(None, base.cost + step, delivered, required, base)

    def optimize_expression(self, expr: Plan, group: Group) -> list[PhysicalExpr]:
        key = id(expr)
        found = self._physical.get(key)
        if found is None:
            found = []
            excluded = any(f.excludes(expr, group, self.context) for f in self.filters)
            for rule in () if excluded else self._implementations_of(type(expr)):
                if rule.matches(expr, group, self.context):
                    made = list(rule.implement(expr, group, self.context))
                    if made:
                        found.extend(made)
                        self.counters.fired[rule.name] = self.counters.fired.get(rule.name, 0) + 1
            for narrowing in self.filters:
                found = narrowing.narrow(found, expr, group, self.context)
            self._physical[key] = found
        return found

    def _implementations_of(self, operator: type) -> list:
        found = self._by_operator.get(operator)
        if found is None:
            found = self._by_operator[operator] = [r for r in self.implementations
                                                   if issubclass(operator, r.operator)]
        return found

    def _local(self, physical: PhysicalExpr, group: Group) -> float:
        """The alternative's own cost, without its inputs' (computed once)."""
        found = physical.local_cost
        if found is None:
            found = physical.local_cost = self.cost_model.local(
                physical.node, physical.algorithm, self.size(group), [self.size(g) for g in physical.inputs])
        return found

    def optimize_inputs(self, physical: PhysicalExpr, group: Group) -> tuple[float, list[Winner]] | None:
        """The alternative's complete cost (its own, plus each input's winner under what it
        requires of that input) and those winners; None when an input has no plan."""
        total = self._local(physical, group)
        self.counters.alternatives_costed += 1
        winners = []
        for child, required in zip(physical.inputs, physical.required_inputs):
            winner = self.optimize_group(child, required)
            if winner is None:
                return None
            total += winner.cost
            winners.append(winner)
        return total, winners


