"""What an inner-join set reads of a plan node that depends on the node alone, kept per node.

A node taken whole as a join set's leaf gives the set its output columns, unique keys and
declared foreign keys; an inner join gives its condition's conjuncts. Plans are immutable, so
these are computed once per node: the memo estimates a group's joins over the same inputs
many times, and a tree of joins reads each node as it builds the set above (the frozensets of a
wide table's columns and keys would be rebuilt each time).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from cbo.ir.expressions import Column, Expr, conjuncts
from cbo.ir.operators import ForeignKeyRef, Join, Plan

T = TypeVar("T")
LeafFacts = tuple[frozenset[Column], frozenset[frozenset[Column]], frozenset[ForeignKeyRef]]


def leaf_facts(plan: Plan) -> LeafFacts:
    """(output columns, unique keys, foreign keys) of ``plan`` as a leaf."""
    return frozenset(plan.output), frozenset(plan.unique_keys), frozenset(plan.foreign_keys)


class PlanFacts:
    """``leaf_facts`` and join conjuncts per node object, for one estimation context.

    Kept by identity, each node held so that its id stays its own: equal nodes need not have
    equal facts (a memo's group references are equal by group number)."""

    def __init__(self) -> None:
        self._leaves: dict[int, tuple[Plan, LeafFacts]] = {}
        self._conjuncts: dict[int, tuple[Plan, frozenset[Expr]]] = {}

    def leaf(self, plan: Plan) -> LeafFacts:
        return self._kept(self._leaves, plan, leaf_facts)

    def conjuncts(self, join: Join) -> frozenset[Expr]:
        return self._kept(self._conjuncts, join, _own_conjuncts)

    def _kept(self, table: dict[int, tuple[Plan, T]], node: Plan, compute: Callable[[Any], T]) -> T:
        found = table.get(id(node))
        if found is not None:
            return found[1]
        value = compute(node)
        table[id(node)] = (node, value)   # (the node held: its id stays its own)
        return value


def _own_conjuncts(join: Join) -> frozenset[Expr]:
    return frozenset(conjuncts(join.condition))
