"""The search's lower bounds: what an alternative, an expression or a group costs at least, known
before costing it, and what an alternative could deliver.

What makes the search fast is what it does not cost, and the bounds are exact (``tests/quick/
test_search_bounds.py`` checks the pruned search against one that costs everything):

* an alternative's *floor* (``floor``): its own cost, its inputs' cheapest plans, and the
  enforcers its inputs cannot avoid (a build side is always broadcast; a side none of whose
  expressions could be partitioned on the keys is always shuffled: ``input_floor``);
* an expression is *beaten* (``beaten``) when every implementation rule's floor of what it
  would make (``ImplementationRule.floor``, read from a deferred join's record without making
  it: ``deferred_floor``) reaches the best plan found;
* what an expression's alternatives could deliver beyond "any" (``deliverables``) is known
  before costing them: a hash or sort-merge join its keys' partitioning and order, a broadcast
  or nested-loop join its probe side's cheapest plan's, an operator whose inputs are required
  as "any" what it makes of their cheapest plans.

Ties: a bound equal to the best cost up to rounding (the same terms summed in another order)
is a tie, and ties go to the alternative found first (``TIE``); an expression's floor from its
rules' bounds sums the same terms as its alternatives' floors, perhaps in another order, and
keeps a margin of rounding before it prunes what they would not (``ROUNDING``).

``SearchBounds`` is also what implementation rules read for their floors (``cbo.memo.rules.
base.Bounds``): the cost model, sizes, a group's cheapest plan and its broadcast and hash floors.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol

from cbo.cost import CostModel
from cbo.ir.expressions import Column
from cbo.ir.operators import Join, Plan
from cbo.memo.context import SearchContext
from cbo.memo.delivery import deliver
from cbo.memo.memo import Deferred, Group, PhysicalExpr, group_of
from cbo.memo.state import UNKNOWN, SearchState
from cbo.physical.properties import ANY, BROADCAST, Delivered, Required

if TYPE_CHECKING:
    from cbo.memo.dispatch import PatternDispatch
    from cbo.memo.memo import Winner
    from cbo.memo.rules.base import ImplementationFilter
    from cbo.memo.state import CostTable


class SearchTasks(Protocol):
    """What the bounds ask of the search they serve (``CascadesSearch``): its tasks call the bounds,
    and the bounds call back for inputs' cheapest plans and expressions' alternatives. Named as a
    protocol so that the two modules do not import each other."""

    filters: list[ImplementationFilter]
    dispatch: PatternDispatch

    def optimize_group(self, group: Group, required: Required) -> Winner | None: ...

    def table(self, group: Group) -> CostTable: ...

    def optimize_expression(self, expr: Plan, group: Group) -> list[PhysicalExpr]: ...

    def local_cost(self, physical: PhysicalExpr, group: Group) -> float: ...

TIE = 1.0 - 1e-9
ROUNDING = 1.0 - 1e-12


class SearchBounds:
    """The bounds of one search (``search``: its tasks, which the bounds ask for inputs' cheapest
    plans and expressions' alternatives)."""

    def __init__(self, search: SearchTasks, cost_model: CostModel, context: SearchContext, state: SearchState):
        self.search = search
        self.cost_model = cost_model
        self.context = context
        self.state = state
        self.size = context.size
        # what ``deliverables`` reads of join keys and deliveries, kept per object (held: their
        # ids stay theirs): a join enumeration's joins share them
        self._keyed: dict[tuple[int, str], tuple[object, list[tuple[int, int]], Delivered | None]] = {}
        self._keys_of: dict[int, tuple[Delivered, list[object]]] = {}
        self._merges: dict[tuple[int, int], tuple[Delivered, list[tuple[int, int]], Delivered]] = {}

    # -- what rules' floors read (cbo.memo.rules.base.Bounds) ---------------------------------------

    def cheapest_cost(self, group: Group) -> float:
        # (the winner read without a call when known: the floors of each of a star's joins ask)
        winner = group.winners.get(ANY)
        if winner is None and ANY not in group.winners:
            winner = self.search.optimize_group(group, ANY)
        return math.inf if winner is None else winner.cost

    def broadcast_floor(self, group: Group) -> float:
        return self.input_floor(group, BROADCAST)

    def hash_floor(self, group: Group) -> float:
        """At most ``input_floor`` under any hash partitioning (sorted or not): the cheapest plan
        if it delivers a hash partitioning; else the cheaper of it shuffled (the price of a
        shuffle does not depend on the columns) and the least lower bound of the expressions that
        might deliver some partitioning themselves, as ``natural_floor`` indexes them."""
        found = self.state.hash_floors.get(group.id)
        if found is None:
            cheapest = self.search.optimize_group(group, ANY)
            if cheapest is None:
                found = math.inf
            elif cheapest.delivered.partitioning:
                found = cheapest.cost
            else:
                enforced = cheapest.cost + self.cost_model.price(self.cost_model.exchange(*self.size(group)))
                natural = enforced
                for lower, _, expr in self.search.table(group).pending:
                    if lower >= enforced:
                        break
                    deliverables = self.deliverables(expr, group)
                    if deliverables is None or any(d.partitioning for d in deliverables):
                        natural = lower
                        break
                found = max(cheapest.cost, natural)
            self.state.hash_floors[group.id] = found
        return found

    # -- alternatives and expressions -----------------------------------------------------------------

    def floor(self, physical: PhysicalExpr, group: Group) -> float:
        """A lower bound of the alternative's complete cost, without optimizing its inputs for
        what it requires of them: its own cost, each input's cheapest plan, and the enforcers an
        input must pay because none of its expressions can deliver the requirement. Alternatives
        whose floor reaches the best plan are never costed: in a star most hash and merge joins,
        whose big side would be shuffled."""
        floor = physical.floor
        if floor is None:
            floor = self.search.local_cost(physical, group)
            for child, need in zip(physical.inputs, physical.required_inputs):
                floor += self.input_floor(child, need)
            physical.floor = floor
        return floor

    def beaten(self, expr: Plan | Deferred, group: Group, threshold: float) -> bool:
        """Whether every alternative the implementation rules would make of ``expr`` has a floor
        at or above ``threshold``, from the rules' own bounds (``ImplementationRule.floor``)
        without making them. False when a rule cannot tell, or when no rule would make any (the
        expression is then implemented, as every expression was before). A deferred join is
        asked by its record (``deferred_floor``, ``excludes_deferred``), unmade."""
        context = self.context
        if isinstance(expr, Deferred):
            return self._deferred_beaten(expr, group, threshold)
        filters = self.search.filters
        if filters and any(f.excludes(expr, group, context) for f in filters):
            return False
        best = math.inf
        dispatch = self.search.dispatch
        rules = dispatch.implementing.get(type(expr))
        if rules is None:
            rules = dispatch.implementations(type(expr))
        for rule in rules:
            if rule.matches(expr, group, context):
                found = rule.floor(expr, group, context, self)
                if found is None or found * ROUNDING < threshold:
                    return False
                if found < best:
                    best = found
        return best < math.inf

    def _deferred_beaten(self, record: Deferred, group: Group, threshold: float) -> bool:
        """``beaten`` of the join ``record`` would make, asked of the record: the same answer
        (``tests/quick/test_deferred_joins.py``), or False when a rule or filter cannot tell."""
        context = self.context
        for narrowing in self.search.filters:
            if narrowing.excludes_deferred(record, group, context) is not False:
                return False
        best = math.inf
        dispatch = self.search.dispatch
        rules = dispatch.implementing.get(Join)
        if rules is None:
            rules = dispatch.implementations(Join)
        for rule in rules:
            found = rule.deferred_floor(record, group, context, self)
            if found is None or found * ROUNDING < threshold:
                return False
            if found < best:
                best = found
        return best < math.inf

    # -- inputs -----------------------------------------------------------------------------------------

    def input_floor(self, group: Group, need: Required) -> float:
        """The least an input can cost under ``need``: its cheapest plan if that delivers it;
        else the cheaper of an enforcer over the cheapest plan and the least lower bound of the
        expressions that might deliver it without one (``natural_floor``)."""
        floors = self.state.input_floors
        key = (group.id, need)
        found = floors.get(key)
        if found is None:
            found = floors[key] = self._input_floor(group, need)
        return found

    def _input_floor(self, group: Group, need: Required) -> float:
        cheapest = self.search.optimize_group(group, ANY)
        if cheapest is None:
            return math.inf
        if need is ANY or cheapest.delivered.satisfies(need):
            return cheapest.cost
        model, size = self.cost_model, self.size(group)
        if need.ordering:
            weaker = self.context.required.without_ordering(need)
            enforced = model.price(model.sort(size)) + self.input_floor(group, weaker)
        elif need.distribution == "clustered":
            enforced = math.inf   # no enforcer makes it: a final-only aggregation needs it delivered
        else:
            enforced = cheapest.cost + model.price(model.distribute(need, size))
        return max(cheapest.cost, self.natural_floor(group, need, enforced))

    def natural_floor(self, group: Group, need: Required, cap: float) -> float:
        """The least of ``cap`` and the least lower bound among the group's expressions that
        might deliver ``need`` without an enforcer, from an index of what each could deliver by
        its first partitioning (or ordering) column: necessary, not sufficient, so a bound,
        computed in a few lookups (clustering on P needs a first partitioning class that meets P).

        The index grows in the order of the expressions' lower bounds, only as far as ``cap``
        (the enforced plan's floor) asks: an expression whose bound reaches the cap cannot lower
        the answer, so a 10-relation clique's join groups index a few of their hundreds."""
        table = self.search.table(group)
        index = table.index
        if index is None:
            index = table.index = {}
        pending = table.pending
        position = table.indexed
        while position < len(pending) and pending[position][0] < cap:
            lower, _, expr = pending[position]
            position += 1
            deliverables = self.deliverables(expr, group)
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
        elif need.distribution in ("clustered", "partitioned"):
            candidates.append(index.get("single", math.inf))
            candidates += [index.get(("part", c), math.inf) for c in need.partitioning]
        elif need.distribution == "any" and need.ordering:
            candidates.append(index.get(("ordered", need.ordering[0]), math.inf))
        return min(candidates)

    def _index_keys(self, delivered: Delivered) -> list[object]:
        """The keys ``natural_floor`` indexes a delivery under, kept per delivery object (a join
        enumeration's joins share theirs: ``_keyed_delivery``, ``_merged``)."""
        cached = self._keys_of.get(id(delivered))
        if cached is not None:
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
        self._keys_of[id(delivered)] = (delivered, keys)   # (the delivery held: its id stays its own)
        return keys

    # -- what alternatives could deliver ---------------------------------------------------------------

    def may_deliver(self, expr: Plan | Deferred, group: Group, required: Required) -> bool:
        """Whether some physical alternative of ``expr`` could deliver ``required``."""
        found = self.deliverables(expr, group)
        return found is None or any(d.satisfies(required) for d in found)

    def deliverables(self, expr: Plan | Deferred, group: Group) -> list[Delivered] | None:
        """What the expression's physical alternatives could deliver beyond "any", known before
        costing them (a superset of the truth, see ``cbo.memo.delivery``), or None when that
        cannot be known (an alternative whose delivery depends on an input it requires more of
        than "any", such as a final-only aggregation). A hash or sort-merge join delivers its
        keys' partitioning and order, a broadcast or nested-loop join its probe side's (the
        left input, or either for an inner join), with the join's equalities merged in; an
        operator whose inputs are required as "any" delivers what it makes of their cheapest
        plans. A deferred join's are known from its keys and input groups, without making it."""
        state = self.state.expr(expr)
        known = state.deliverables
        if known is not UNKNOWN:
            return known
        found: list[Delivered] | None
        if isinstance(expr, Deferred):
            found = self._join_deliverables(expr.kind, expr.keys(), expr.inputs)
        elif type(expr) is Join:
            found = self._join_deliverables(expr.kind, expr.equi_keys, (group_of(expr.left), group_of(expr.right)))
        else:
            found = self._other_deliverables(expr, group)
        state.deliverables = found
        return found

    def _other_deliverables(self, expr: Plan, group: Group) -> list[Delivered] | None:
        found: list[Delivered] = []
        for physical in self.search.optimize_expression(expr, group):
            if any(need is not ANY for need in physical.required_inputs):
                return None
            inputs = [self.search.optimize_group(child, ANY) for child in physical.inputs]
            cheapest = [w for w in inputs if w is not None]
            if len(cheapest) < len(inputs):
                continue
            delivered = deliver(physical, [w.delivered for w in cheapest])
            if delivered.distribution != "any" or delivered.ordering:
                found.append(delivered)
        return found

    def _join_deliverables(self, kind: str, keys: tuple[tuple[Column, Column], ...],
                           inputs: tuple[Group, ...]) -> list[Delivered]:
        """``deliverables`` of a join of ``kind`` on ``keys`` over the groups ``inputs``."""
        found: list[Delivered] = []
        pairs, keyed = self._keyed_delivery(keys, kind)
        if keyed is not None:
            found.append(keyed)
        probes = inputs if kind == "inner" else inputs[:1]
        for probe in probes:
            # (a winner already known read without a call: asked of most of a clique's joins)
            winner = probe.winners.get(ANY)
            if winner is None and ANY not in probe.winners:
                winner = self.search.optimize_group(probe, ANY)
            if winner is not None and winner.delivered.distribution != "any":
                found.append(self._merged(winner.delivered, pairs) if kind == "inner" else winner.delivered)
        return found

    def _merged(self, delivered: Delivered, pairs: list[tuple[int, int]]) -> Delivered:
        """``delivered.merged(pairs)``, kept per (delivery, pairs) object: a probe side's plan
        meets the few conditions of the joins it is a side of again and again."""
        key = (id(delivered), id(pairs))
        cached = self._merges.get(key)
        if cached is None:
            cached = self._merges[key] = (delivered, pairs, delivered.merged(pairs))   # (both held: ids stay theirs)
        return cached[2]

    def _keyed_delivery(self, keys: tuple[tuple[Column, Column], ...],
                        kind: str) -> tuple[list[tuple[int, int]], Delivered | None]:
        """The join's equalities as column id pairs, and what a join partitioned on its keys
        delivers (None for a kind that cannot be): kept per equalities object and kind, which a
        join enumeration shares among the joins of one condition (45 in a 10-relation clique's
        28,501 joins)."""
        cached = self._keyed.get((id(keys), kind))
        if cached is not None:
            return cached[1], cached[2]
        pairs = [(a.id, b.id) for a, b in keys]
        delivered = None
        if pairs and kind not in ("full", "right", "mark"):
            classes = tuple([frozenset((a, b)) for a, b in pairs] if kind == "inner" else
                            [frozenset((a,)) for a, _ in pairs])
            delivered = Delivered("hash", classes, classes)
        self._keyed[(id(keys), kind)] = (keys, pairs, delivered)   # (keys held: ids stay theirs)
        return pairs, delivered

    def predict(self, physical: PhysicalExpr) -> Delivered | None:
        """What a join alternative delivers, from its inputs' cheapest plans (the only inputs
        a join's delivery reads: a broadcast join's probe side, required as "any"); None for
        other operators, whose delivery must be seen after costing."""
        if not isinstance(physical.node, Join):
            return None
        inputs = []
        for child, need in zip(physical.inputs, physical.required_inputs):
            if need is ANY:
                winner = self.search.optimize_group(child, ANY)
                if winner is None:
                    return None
                inputs.append(winner.delivered)
            else:
                inputs.append(need.enforced)
        return deliver(physical, inputs)
