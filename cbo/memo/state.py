"""What one search knows of each group and each expression: the search's own state.

As CockroachDB's optimizer keeps its per-group state in a map that lives for one query
(``Optimizer.stateMap``), a ``CascadesSearch`` keeps here what it found beyond the memo:

* per group, by group id: its expressions in the order of their lower bounds and the
  alternatives costed so far (``CostTable``), and the floors the bounds computed for it;
* per expression, by identity (the state holds the expression, so its id stays its own while
  it is known, even after a merge drops the expression from its group): whether exploration
  has seen it, and (``ExprState``) its physical alternatives, what they could deliver before
  costing, and whether the search skipped it unimplemented.

A group's winner per required property set is the group's own (``Group.winners``): extraction,
EXPLAIN and the memo dump read it after the search.
"""

from __future__ import annotations

import enum
import math
from typing import TYPE_CHECKING, Final

from cbo.ir.operators import Plan
from cbo.memo.memo import Counters, Deferred, PhysicalExpr, Winner

if TYPE_CHECKING:
    from cbo.physical.properties import Delivered, Required


class Unknown(enum.Enum):
    """Not worked out yet (an answer may be None): a type of its own, so that ``is UNKNOWN``
    narrows a looked-up answer to the answer's type."""

    UNKNOWN = "unknown"


UNKNOWN: Final = Unknown.UNKNOWN


class CostTable:
    """A group's physical alternatives costed so far, the cheapest per delivered property set (a
    dearer plan delivering the same is never chosen), and its expressions not yet costed, in
    order of their lower bound: the cost of their inputs' cheapest plans."""

    __slots__ = ("pending", "next", "by_delivered", "best_any", "index", "indexed")

    def __init__(self, pending: list[tuple[float, int, Plan | Deferred]]):
        self.pending = pending
        self.index: dict[object, float] | None = None   # see SearchBounds.natural_floor
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


class ExprState:
    """What the search found for one expression (a made one, or a deferred join's record)."""

    __slots__ = ("expr", "physicals", "deliverables", "skipped")

    def __init__(self, expr: Plan | Deferred):
        self.expr = expr   # (held: its id stays its own)
        self.physicals: list[PhysicalExpr] | None = None    # its implementation rules' alternatives
        self.deliverables: list[Delivered] | None | Unknown = UNKNOWN   # SearchBounds.deliverables
        # ``_evaluate_any`` passed it unimplemented: every alternative it would have had was
        # beaten, as if each had been floored
        self.skipped = False


class SearchState:
    """What one search found, made when first asked for: per group, its cost table and floors;
    per expression, whether exploration saw it and its ``ExprState``."""

    __slots__ = ("tables", "input_floors", "hash_floors", "explored", "exprs")

    def __init__(self) -> None:
        self.tables: dict[int, CostTable] = {}                          # group id -> its cost table
        self.input_floors: dict[tuple[int, Required], float] = {}      # SearchBounds.input_floor
        self.hash_floors: dict[int, float] = {}                         # SearchBounds.hash_floor
        # The expressions the rules have seen (and deferred joins none of them could bind), the
        # objects held: a merge drops rebuilt expressions, and a freed object's id could be
        # reused by a new expression, which would then never be explored.
        self.explored: dict[int, Plan | Deferred] = {}
        self.exprs: dict[int, ExprState] = {}

    def expr(self, expr: Plan | Deferred) -> ExprState:
        found = self.exprs.get(id(expr))
        if found is None:
            found = self.exprs[id(expr)] = ExprState(expr)
        return found

    def known(self, expr: Plan | Deferred) -> ExprState | None:
        """The expression's state if the search has one, without making it."""
        return self.exprs.get(id(expr))
