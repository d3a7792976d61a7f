"""What an inner-join set reads of a plan node that depends on the node alone, kept per node.

A node taken whole as a join set's leaf gives the set its output columns, unique keys and
declared foreign keys; an inner join gives its condition's conjuncts. Plans are immutable, so
these are computed once per node: the memo estimates a group's joins over the same inputs
many times, and a tree of joins reads each node as it builds the set above (frozensets of
a wide table's columns and keys, rebuilt each time, were a tenth of a two-join estimate).
"""

from __future__ import annotations

from cbo.ir.expressions import Column, Expr, conjuncts
from cbo.ir.operators import ForeignKeyRef, Join, Plan

LeafFacts = tuple[frozenset[Column], frozenset[frozenset[Column]], frozenset[ForeignKeyRef]]


def leaf_facts(plan: Plan) -> LeafFacts:
    """(output columns, unique keys, foreign keys) of ``plan`` as a leaf."""
    return frozenset(plan.output), frozenset(plan.unique_keys), frozenset(plan.foreign_keys)


class PlanFacts:
    """``leaf_facts`` and join conjuncts per node object, for one estimator.

    Kept by identity, each node held so that its id stays its own: equal nodes need not have
    equal facts (a memo's group references are equal by group number, and a planner's
    estimator sees the memos of many queries). Bounded: emptied when it holds ``limit`` nodes
    (a long session plans many queries through one estimator)."""

    def __init__(self, limit: int = 50_000):
        self._leaves: dict[int, tuple[Plan, LeafFacts]] = {}
        self._conjuncts: dict[int, tuple[Join, frozenset[Expr]]] = {}
        self._limit = limit

    def leaf(self, plan: Plan) -> LeafFacts:
        found = self._leaves.get(id(plan))
        if found is not None and found[0] is plan:
            return found[1]
        if len(self._leaves) >= self._limit:
            self._leaves.clear()
        facts = leaf_facts(plan)
        self._leaves[id(plan)] = (plan, facts)
        return facts

    def conjuncts(self, join: Join) -> frozenset[Expr]:
        found = self._conjuncts.get(id(join))
        if found is not None and found[0] is join:
            return found[1]
        if len(self._conjuncts) >= self._limit:
            self._conjuncts.clear()
        own = frozenset(conjuncts(join.condition))
        self._conjuncts[id(join)] = (join, own)
        return own
