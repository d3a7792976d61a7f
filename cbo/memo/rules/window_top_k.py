"""WindowTopK: a filter ``rank <= k`` over a window, run as a per-partition top-k.

Pattern: ``Filter[P](Window(R))`` where ``P`` has a conjunct ``r <= k``, ``r < k`` or ``r = k``
(or its mirror image) on a ``row_number()``, ``rank()`` or ``dense_rank()`` column ``r`` of the
window, every function of which reads only rows up to the current one and none the partition's
size (``cbo.physical.group_limit``: Spark's conditions for its WindowGroupLimit), with
0 < k <= 1000.

Alternative: the filter and the window as one operator (``window_group_limit``): each task sorts
its rows of ``R`` on the partition and order columns and keeps each partition's first k rows
(those with ``r <= k``); only those are shuffled on the partition columns, sorted, cut to k
again, and the window and the filter run over them. Equivalence: the filter keeps, in each
partition, a prefix of the window's order, and every function's value for a row in that prefix
reads only rows before it; a task's first k rows of a partition contain that partition's first
k rows among the task's, so the union over tasks contains each partition's first k, in which
the rows ``r <= k`` and their values are those of the whole partition (peers of the k-th row
included for rank and dense_rank: a rank's k is a rank, not a row count).

Spark infers this itself from cbo's SQL (the filter directly over the window); where cbo
chooses the plain window instead, its executor turns the inference off (``cbo.exec.spark_exec``).
A window without partition columns gathers one partition's top k. Where the input is already
clustered as the window reads it (an aggregation on the partition columns below), the second
alternative (``window_group_limit_sorted``) requires that of it (and a sort) and cuts each
partition to k without an exchange, as Spark's WindowGroupLimit does over such input. It never
has an exchange put below it: where Spark adds one, it cuts each task's partitions first (the
first alternative).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from cbo.ir.operators import Filter, Plan, Window
from cbo.memo.memo import Group, PhysicalExpr, group_of
from cbo.memo.rules.base import ImplementationRule
from cbo.memo.rules.window_requirement import window_requirement
from cbo.physical.algorithm import Algorithm
from cbo.physical.group_limit import group_limit
from cbo.physical.properties import ANY

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext


class WindowTopK(ImplementationRule):
    """A filter on a rank over a window as a per-partition top-k (Spark's WindowGroupLimit)."""

    name = "WindowTopK"
    operator = Filter
    reads_below = True

    def matches(self, expr: Plan, group: Group, context: SearchContext) -> bool:
        return isinstance(expr, Filter) and Window in group_of(expr.input).find().operator_types

    def implement(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[PhysicalExpr]:
        assert isinstance(expr, Filter)
        for window in group_of(expr.input).find().expressions:
            if isinstance(window, Window) and group_limit(expr.predicate, window) is not None:
                node = Filter(window, expr.predicate)
                yield PhysicalExpr(node, Algorithm.WINDOW_TOP_K, (ANY,), expr, self.name)
                in_place = window_requirement(window, context.required, delivered=True)
                yield PhysicalExpr(node, Algorithm.WINDOW_TOP_K_SORTED, (in_place,), expr, self.name)
