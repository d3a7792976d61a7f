"""Run a join with a one-row input as a scalar subquery: the input is computed once, as a value.

An uncorrelated scalar subquery (``o_totalprice > (SELECT avg(o_totalprice) * 1.5 FROM
orders)``) is decorrelated into a join with the subquery's single row. Run as a join, its row
is broadcast and every row of the other side meets it in a nested loop; Spark's own planner
instead runs the subquery once and puts its value into the expression (``ScalarSubquery``), a
filter over the other side. This rule offers that as a physical alternative, costed with the
others.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from cbo.ir.expressions import Constant
from cbo.ir.operators import Aggregate, Join, Plan, Project
from cbo.memo.memo import Deferred, Group, PhysicalExpr, group_of
from cbo.memo.rules.base import Bounds, ImplementationRule
from cbo.memo.rules.implement import orientations
from cbo.physical.algorithm import Algorithm
from cbo.physical.properties import ANY

_ONE_ROW_OPERATORS = (Aggregate, Project)   # the operators that can make a group exactly one row


def exactly_one_row(group: Group, depth: int = 0) -> bool:
    """Whether every plan of ``group`` returns exactly one row: an aggregation without grouping
    columns (one row even over no input), or a projection of such a plan. Any one expression
    proves it for the group, since all of them return the same rows."""
    if depth > 8:
        return False
    group = group.find()
    if not group.holds_any(_ONE_ROW_OPERATORS):
        return False   # a join's group (tens of thousands are asked after a join enumeration)
    for expr in group.expressions:
        if isinstance(expr, Aggregate) and not expr.group_by:
            return True
        if isinstance(expr, Project) and exactly_one_row(group_of(expr.input), depth + 1):
            return True
    return False


def _one_row_side(join: Join) -> bool:
    """Whether a side that ``orientations`` may put on the right returns exactly one row: asked
    before the swapped join is made (an enumeration adds tens of thousands of joins, of which
    hardly any has such a side)."""
    return exactly_one_row(group_of(join.right)) or (join.kind == "inner" and exactly_one_row(group_of(join.left)))


def _one_row(group: Group, depth: int = 0) -> bool:
    """``exactly_one_row``, or a cross product of one-row inputs: read off a join group's first
    expression alone (always made; the others may be deferred joins, not to be made for this)."""
    if exactly_one_row(group):
        return True
    group = group.find()
    first = group.first if group.entries and depth <= 8 else None
    return isinstance(first, Join) and first.kind == "inner" and _is_true(first.condition) \
        and _one_row(group_of(first.left), depth + 1) and _one_row(group_of(first.right), depth + 1)


def _scalar_side(join: Join) -> bool:
    """Whether the right input is one row to read as a value, and the left is not one row too.

    Between two one-row inputs the nested loop compares one pair, and its broadcast side runs
    beside the other input. Spark prepares a scalar subquery only when it runs the stage that
    reads it, which for an aggregate's one row is the stage after that aggregate's exchange:
    the subquery would start only once the other input's work is done (TPC-DS q90's two
    counts, one after the other instead of side by side)."""
    return exactly_one_row(group_of(join.right)) and not _one_row(group_of(join.left))


def _is_true(condition: object) -> bool:
    return isinstance(condition, Constant) and condition.value is True


class ScalarSubqueryJoin(ImplementationRule):
    """A join whose (right) input returns exactly one row, run as that input computed once and
    read as a value by each row of the other side (Spark's ``ScalarSubquery``): an inner join
    becomes a filter on the condition over the other side with the value's columns added; a
    left join on TRUE adds the columns and keeps every row.

    Pattern: an inner join (either input may be the one-row side), or a left join on TRUE,
    whose one-row side is an aggregation without grouping columns, possibly under projections
    (``exactly_one_row``). Equivalence: ``L ⋈_p R`` with ``|R| = 1`` is ``σ_p(L × R)``, and
    ``L × R`` is L with R's one row appended to each row; for the left join on TRUE every row
    of L matches R's row, so no row is padded with NULLs. Holds whatever R's row contains
    (NULLs included). Requires nothing of either input; keeps L's partitioning and order.
    """

    name = "ScalarSubqueryJoin"
    operator = Join

    def matches(self, expr: Plan, group: Group, context: object) -> bool:
        return isinstance(expr, Join) and (expr.kind == "inner" or (expr.kind == "left" and _is_true(expr.condition)))

    def implement(self, expr: Plan, group: Group, context: object) -> Iterable[PhysicalExpr]:
        assert isinstance(expr, Join)
        if not _one_row_side(expr):
            return
        for join in orientations(expr):
            if _scalar_side(join):
                yield PhysicalExpr(join, Algorithm.SCALAR_SUBQUERY, (ANY, ANY), expr, self.name)

    def floor(self, expr: Plan, group: Group, context: object, bounds: Bounds) -> float:
        assert isinstance(expr, Join)
        best = math.inf
        if not _one_row_side(expr):
            return best
        for join in orientations(expr):
            if _scalar_side(join):
                left, right = group_of(join.left).find(), group_of(join.right).find()
                local = bounds.cost_model.local(join, Algorithm.SCALAR_SUBQUERY, bounds.size(group),
                                                [bounds.size(left), bounds.size(right)])
                best = min(best, local + bounds.cheapest_cost(left) + bounds.cheapest_cost(right))
        return best

    def deferred_floor(self, record: Deferred, group: Group, context: object, bounds: Bounds) -> float | None:
        # A deferred join is an inner join; hardly any has a one-row side (then it is made).
        if record.kind != "inner":
            return None
        left, right = record.inputs
        return None if exactly_one_row(right) or exactly_one_row(left) else math.inf
