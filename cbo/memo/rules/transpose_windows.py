"""TransposeWindows: two stacked windows computed in the other order, so that one exchange (and
perhaps one sort) serves both.

Pattern: ``Window[partition by P1, order by O1](Window[partition by P2, order by O2](R))`` where
the upper window reads no column the lower one adds, and ``P1`` is a subset of ``P2`` (as sets).

Result: ``Window[P2, O2](Window[P1, O1](R))``.

Equivalence: a window passes its input's rows through unchanged and adds columns computed from
them; the upper window reads none of the lower one's columns, so either order computes each
function over the same rows, partitions and order, and gives the same rows with the same
columns (a memo expression's columns are found by identity, not position).

Why: a window needs its input clustered on its partition columns and sorted on them and its
order within each partition (``cbo.memo.rules.implement``). Rows hash-partitioned on ``P1`` are
clustered on every superset of it, so with the window on the fewer columns below, the upper one
reads its input without a second exchange; with equal partition columns and the lower one's
order a prefix of the upper one's, one sort serves both. The search weighs both orders with
their exchanges and sorts. Spark's ``TransposeWindow`` moves windows by the same condition;
cbo turns that rule off while its plan runs (``cbo.exec.spark_exec``), so Spark keeps the order
cbo chose.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from cbo.ir.expressions import columns_of
from cbo.ir.operators import Plan, Window
from cbo.memo.memo import Group
from cbo.memo.pattern import Pattern
from cbo.memo.rules.base import TransformationRule

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext


class TransposeWindows(TransformationRule):
    """Two stacked windows, the upper one on a subset of the lower one's partition columns,
    computed the other way round."""

    name = "TransposeWindows"
    patterns = (Pattern(Window, (Pattern(Window),)),)

    def apply(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[Plan]:
        assert isinstance(expr, Window) and isinstance(expr.input, Window)
        upper, lower = expr, expr.input
        added = {c for c, _ in lower.functions}
        read = set().union(*(columns_of(e) for e in upper.expressions()))
        if read & added or not set(upper.partition_by) <= set(lower.partition_by):
            return
        yield Window(Window(lower.input, upper.partition_by, upper.order_by, upper.functions),
                     lower.partition_by, lower.order_by, lower.functions)
