"""INTERSECT and EXCEPT (DISTINCT) as existential joins with a DISTINCT above them.

    A INTERSECT B  =  Project[columns := A's](Aggregate[group by A's columns](SemiJoin[k](A, B)))
    A EXCEPT B     =  Project[columns := A's](Aggregate[group by A's columns](AntiJoin[k](A, B)))

where ``k`` equates each column of ``A`` with the same position of ``B``: ``a = b`` when neither
can be NULL, else ``a IS NOT DISTINCT FROM b`` (set operations compare rows as DISTINCT does:
NULL equals NULL). More inputs chain: ``A INTERSECT B INTERSECT C`` keeps the rows of ``A``
with a match in ``B`` and one in ``C``; ``A EXCEPT B EXCEPT C`` (left-associative) the rows of
``A`` with a match in neither.

Equivalence: a row of the result is a distinct row of ``A`` that some row of ``B`` equals
(INTERSECT) or none does (EXCEPT), column by column with NULLs equal: the semi (anti) join keeps
exactly those rows of ``A``, each as often as ``A`` has it, and the DISTINCT (grouping, which
puts NULLs in one group) keeps one of each. Once joins, the memo's semi-join alternatives (a
DISTINCT above or below an inner join, or the semi join, with the byte-reduction threshold) and
join reordering apply to them, and the keys
let the joins run hashed.

Not rewritten: INTERSECT ALL and EXCEPT ALL (they count duplicates: min(m, n) and max(m - n, 0)
copies, which no semi or anti join gives), UNION, and inputs that share a column with ``A``
(the keys would not say which side a column is on).
"""

from __future__ import annotations

from cbo.ir import types as T
from cbo.ir.expressions import Call, Column, ColumnRef, Expr, compare, conjunction
from cbo.ir.kinds import JoinKind
from cbo.ir.operators import Aggregate, Join, Plan, Project, SetOp


def set_ops_as_joins(plan: Plan) -> Plan:
    """Rewrite every INTERSECT / EXCEPT (DISTINCT) of ``plan``, bottom-up."""
    children = tuple(set_ops_as_joins(child) for child in plan.children)
    if children != plan.children:
        plan = plan.with_children(children)
    if isinstance(plan, SetOp) and plan.distinct and plan.kind in ("intersect", "except"):
        return _as_joins(plan)
    return plan


def _as_joins(node: SetOp) -> Plan:
    first, *others = node.inputs
    first_columns, *others_columns = node.inputs_columns
    kind: JoinKind = "semi" if node.kind == "intersect" else "anti"
    if any(set(first.output) & set(other.output) for other in others):
        return node
    plan: Plan = first
    for other, columns in zip(others, others_columns):
        keys: list[Expr] = []
        for a, b in zip(first_columns, columns):
            if a in first.not_null and b in other.not_null:
                keys.append(compare("eq", ColumnRef(a), ColumnRef(b)))
            else:
                keys.append(Call("is_not_distinct_from", (ColumnRef(a), ColumnRef(b)), T.BOOLEAN))
        plan = Join(kind, plan, other, conjunction(keys))
    if not _distinct_rows(first, set(first_columns)):
        plan = Aggregate(plan, tuple(dict.fromkeys(first_columns)))
    return Project(plan, tuple((c, ColumnRef(a)) for c, a in zip(node.columns, first_columns)))


def _distinct_rows(plan: Plan, columns: set[Column]) -> bool:
    """Whether ``plan`` is already a DISTINCT over ``columns`` (an inner INTERSECT / EXCEPT, a
    SELECT DISTINCT), renamed or not: then the joins keep its rows distinct and no second
    DISTINCT is needed. Declared keys are not used (they are the search's, under
    ``exploit_constraints``)."""
    while isinstance(plan, Project) and all(isinstance(e, ColumnRef) for _, e in plan.assignments):
        renamed = {c: e.column for c, e in plan.assignments if isinstance(e, ColumnRef)}
        if not columns <= set(renamed):
            return False
        columns = {renamed[c] for c in columns}
        plan = plan.input
    return isinstance(plan, Aggregate) and not plan.aggregates and set(plan.group_by) <= columns
