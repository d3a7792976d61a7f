"""ExpandGroupingSets: grouping sets as Spark's Expand followed by one aggregation.

Pattern: any ``GroupingSets[K; sets S; a_i := f_i(e_i); g_j := GROUPING(...)](X)``.

Result: one physical operator that copies each row of ``X`` once per set ``s`` of ``S`` (the
keys outside ``s`` set to NULL, and the set's number beside them), and aggregates the copies
grouped by the keys and the set's number: a partial aggregation per partition, an exchange on
those columns, the final aggregation. It is rendered to Spark as ``GROUP BY GROUPING SETS``,
which Spark plans exactly so (``Expand``, ``HashAggregate``, ``Exchange``, ``HashAggregate``).

Equivalence: the copies of set ``s`` are the rows of ``X`` with the keys outside ``s`` NULL and
the number of ``s``; grouping them by every key and that number groups them by ``s``'s keys
alone (the others are NULL in all of them), and no group mixes two sets (their numbers differ;
a set listed twice has a number per listing, so its rows come out twice). Each group's
aggregates are those of the group of ``s`` in ``X``, since copying changes neither the rows nor
their aggregated values. It holds for every aggregate, DISTINCT ones included: Spark expands
again for those. The one difference is the empty set over no input, which SQL gives one row
and an aggregation grouped by the set's number none: the rendering adds one marked row
(``cbo.sqlgen``'s ``_spark_grouping_sets``). Requires nothing of its input.
"""

from __future__ import annotations

from collections.abc import Iterable

from cbo.ir.operators import GroupingSets, Plan
from cbo.memo.memo import Group, PhysicalExpr
from cbo.memo.rules.base import ImplementationRule
from cbo.physical.algorithm import Algorithm
from cbo.physical.properties import ANY


class ExpandGroupingSets(ImplementationRule):
    """Grouping sets as one aggregation over each input row copied once per set (Spark's Expand)."""

    name = "ExpandGroupingSets"
    operator = GroupingSets

    def matches(self, expr: Plan, group: Group, context: object) -> bool:
        return isinstance(expr, GroupingSets)

    def implement(self, expr: Plan, group: Group, context: object) -> Iterable[PhysicalExpr]:
        yield PhysicalExpr(expr, Algorithm.EXPAND_AGGREGATE, (ANY,), expr, self.name)
