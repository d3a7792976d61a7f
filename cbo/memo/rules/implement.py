"""Implementation rules: the physical alternatives of each logical operator.

Joins have real choices: which side is hashed, and a nested loop where no equality links the
sides. The other operators have one implementation each today; Spark-specific strategies
(broadcast, sort-merge, partial aggregation) and the properties they deliver come with the
Spark cost model.
"""

from __future__ import annotations

from typing import Iterable

from cbo.ir.operators import Aggregate, Filter, Join, Limit, Plan, Project, Scan, SetOp, Sort, Values
from cbo.memo.memo import Group, PhysicalExpr
from cbo.memo.properties import ANY
from cbo.memo.rules.base import ImplementationRule


_ANY_INPUTS = {arity: (ANY,) * arity for arity in range(4)}


def _physical(node: Plan, strategy: str | None, logical: Plan, rule: str) -> PhysicalExpr:
    arity = len(node.children)
    return PhysicalExpr(node, strategy, _ANY_INPUTS.get(arity) or (ANY,) * arity, logical, rule)


class ImplementOperator(ImplementationRule):
    """An operator with one way to run: itself (scan, filter, project, sort, limit, ...).

    Pattern: the operator type given at construction. Equivalence: identity.
    """

    def __init__(self, operator: type, strategy: str | None = None):
        self.operator = operator
        self.strategy = strategy
        self.name = f"Implement{operator.__name__}"  # type: ignore[misc]

    @property
    def summary(self) -> str:
        return f"Run a {self.operator.__name__} as itself (its one implementation)."

    def matches(self, expr: Plan, group: Group, context: object) -> bool:
        return isinstance(expr, self.operator)

    def implement(self, expr: Plan, group: Group, context: object) -> Iterable[PhysicalExpr]:
        yield _physical(expr, self.strategy, expr, self.name)


class HashJoin(ImplementationRule):
    """Join on equalities by hashing the right input and probing it with the left.

    Pattern: a join of any kind whose condition has at least one conjunct ``l = r`` with ``l``
    from the left input and ``r`` from the right. Other conjuncts are checked on each match;
    outer, semi, anti and mark joins keep their left side as the probe side, as Spark does.
    """

    name = "HashJoin"
    operator = Join

    def matches(self, expr: Plan, group: Group, context: object) -> bool:
        return isinstance(expr, Join) and expr.has_equi_key

    def implement(self, expr: Plan, group: Group, context: object) -> Iterable[PhysicalExpr]:
        yield _physical(expr, "shuffle_hash", expr, self.name)


class HashJoinBuildLeft(ImplementationRule):
    """An inner equi-join that hashes its left input: the join with its inputs swapped.

    Pattern: an inner join with an equality between its sides. Equivalence: R ⋈_c S = S ⋈_c R
    as bags of rows (inner joins commute; columns are found by identity, not position), so the
    alternative is the join of the swapped inputs hashed on its right, now the former left.
    """

    name = "HashJoinBuildLeft"
    operator = Join

    def matches(self, expr: Plan, group: Group, context: object) -> bool:
        return isinstance(expr, Join) and expr.kind == "inner" and expr.has_equi_key

    def implement(self, expr: Plan, group: Group, context: object) -> Iterable[PhysicalExpr]:
        assert isinstance(expr, Join)
        swapped = Join("inner", expr.right, expr.left, expr.condition)
        yield _physical(swapped, "shuffle_hash", expr, self.name)


class NestedLoopJoin(ImplementationRule):
    """A join without an equality between its sides: compare every pair of rows.

    Pattern: a join whose condition has no ``l = r`` conjunct across its inputs (cross joins,
    inequality joins). For inner joins either input may be the inner loop; the cost model
    charges both the same, so one alternative is enough.
    """

    name = "NestedLoopJoin"
    operator = Join

    def matches(self, expr: Plan, group: Group, context: object) -> bool:
        return isinstance(expr, Join) and not expr.has_equi_key

    def implement(self, expr: Plan, group: Group, context: object) -> Iterable[PhysicalExpr]:
        yield _physical(expr, "nested_loop", expr, self.name)


def implementation_rules() -> list[ImplementationRule]:
    return [ImplementOperator(Scan), ImplementOperator(Filter), ImplementOperator(Project),
            HashJoin(), HashJoinBuildLeft(), NestedLoopJoin(),
            ImplementOperator(Aggregate, "hash"), ImplementOperator(Sort), ImplementOperator(Limit),
            ImplementOperator(SetOp), ImplementOperator(Values)]
