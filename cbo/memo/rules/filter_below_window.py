"""PushFilterBelowWindow: a filter on a window's partition columns filters its input instead.

Pattern: ``Filter[P](Window[partition by K](R))``, where some conjuncts of ``P`` read only
columns of ``K`` (or no column at all).

Result: ``Filter[rest of P](Window[K](R'))``, where ``R'`` is ``R`` filtered by those conjuncts,
pushed on down as normalization pushes filters (``cbo.normalize.pushdown``: into joins, below
aggregations on their grouping columns, to the scans); without the filter above when nothing
of ``P`` is left.

Equivalence: a conjunct over partition columns has one value on all the rows of a partition
(the partition's values; NULLs are one partition and compare as NULL in it), so it keeps or
drops whole partitions. A window function's value for a row is computed from the rows of its
partition alone, so over the partitions kept it gives every kept row the value it had, and
``σ_p(W(R)) = W(σ_p(R))``. A conjunct reading a window's output, or an input column that is
not a partition column (``rank <= 3``, ``x > 0``), changes within a partition and stays above:
filtering the input by it would change the other rows' ranks and sums. Expressions that may
raise (a scalar subquery's row check) stay where they are.

With an empty ``K`` (one partition) only conjuncts that read no column move, which keep all
rows or none. The input is rebuilt from the written plan of its group (its first expression,
and theirs below), since normalization's pushdown needs plans, not groups: the filtered input
is a new subtree of the memo, explored like the rest (its joins are reordered again).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from cbo.ir.expressions import Expr, can_raise, columns_of, conjunction, conjuncts
from cbo.ir.operators import Filter, Plan, Window
from cbo.memo.memo import Group, GroupRef, group_of
from cbo.memo.pattern import Pattern
from cbo.memo.rules.base import TransformationRule
from cbo.normalize.pushdown import push_filters

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext


class PushFilterBelowWindow(TransformationRule):
    """A filter's conjuncts on a window's partition columns move below the window."""

    name = "PushFilterBelowWindow"
    patterns = (Pattern(Filter, (Pattern(Window),)),)

    def apply(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[Plan]:
        assert isinstance(expr, Filter) and isinstance(expr.input, Window)
        window = expr.input
        partition = frozenset(window.partition_by)
        below: list[Expr] = []
        above: list[Expr] = []
        for conjunct in conjuncts(expr.predicate):
            movable = columns_of(conjunct) <= partition and not can_raise(conjunct)
            (below if movable else above).append(conjunct)
        if not below:
            return
        source = push_filters(Filter(written_plan(group_of(window.input)), conjunction(below)))
        moved: Plan = Window(source, window.partition_by, window.order_by, window.functions)
        yield Filter(moved, conjunction(above)) if above else moved


def written_plan(group: Group) -> Plan:
    """The plan the group was made from: its first expression, with each input group's own
    written plan in place of its reference."""
    first = group.find().first
    children = first.children
    if not children:
        return first
    return first.with_children(tuple(written_plan(child.group) if isinstance(child, GroupRef) else child
                                     for child in children))
