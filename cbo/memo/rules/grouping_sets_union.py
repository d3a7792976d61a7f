"""UnionGroupingSets: grouping sets as a union of aggregations, one per set, of one input.

Pattern: any ``GroupingSets[K; sets S; a_i := f_i(e_i); g_j := GROUPING(...)](X)``.

Result: one physical operator: for each set ``s`` of ``S`` in order, ``Aggregate[keys of s;
a_i := f_i(e_i)](X)`` with the keys outside ``s`` as NULL and each ``g_j`` as the constant
GROUPING value of ``s``, all stacked by UNION ALL; the empty set's branch is a scalar
aggregation. It is rendered so to Spark (``cbo.sqlgen``'s ``grouping_sets_union``).

Equivalence: this is the definition of grouping sets (``cbo.ir.operators.GroupingSets``),
branch for branch; a scalar aggregation gives the empty set's one row even over no input. It
holds for every aggregate, DISTINCT ones included.

Why it can pay: each branch groups by its own keys only, with no copies of the input and no
set number. ``X`` is computed once only where Spark can reuse it: the operator requires ``X``
hash-partitioned on all of ``K``, so each branch reads the same exchange, which Spark computes
once (``ReuseExchange``) and each branch reads again. Over the finest set's partial aggregate
(``cbo.memo.rules.grouping_sets_partial``), ``X`` is already partitioned so and small: the
coarser sets are computed from the finest set's aggregate, an aggregation of aggregates.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from cbo.ir.operators import GroupingSets, Plan
from cbo.memo.memo import Group, PhysicalExpr
from cbo.memo.rules.base import ImplementationRule
from cbo.physical.algorithm import Algorithm
from cbo.physical.properties import ANY

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext


class UnionGroupingSets(ImplementationRule):
    """Grouping sets as a union of one aggregation per set over the input, hash-partitioned on
    every key (one exchange, reused by every set)."""

    name = "UnionGroupingSets"
    operator = GroupingSets

    def matches(self, expr: Plan, group: Group, context: object) -> bool:
        return isinstance(expr, GroupingSets)

    def implement(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[PhysicalExpr]:
        assert isinstance(expr, GroupingSets)
        # (without keys every set is the empty one: nothing to partition on)
        partitioned = context.required("hash", tuple(c.id for c in expr.keys)) if expr.keys else ANY
        yield PhysicalExpr(expr, Algorithm.UNION_AGGREGATE, (partitioned,), expr, self.name)
