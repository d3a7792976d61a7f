"""Outer joins made inner where something above rejects their padding.

A left join R ⟕_c S pads the R rows without a match with NULLs in S's columns. When every row
with a NULL in one of S's columns is discarded further up, the padded rows never reach the
output, and R ⟕_c S = R ⋈_c S (Galindo-Legaria and Rosenthal's outer-join simplification;
CockroachDB's ``SimplifyLeftJoin``, Spark's ``EliminateOuterJoin``). Right joins mirror this.

``pushdown`` already does so for a filter directly above. This pass carries the columns whose
NULLs are rejected from further up, through the operators that keep each row's values:

* a filter rejects what its predicate rejects (``null_rejected_columns``);
* an inner join rejects what its condition rejects, on both sides: ``(part ⟕ partsupp) ⋈
  supplier ON ps_suppkey = s_suppkey`` drops the parts without a partsupp;
* a semi join passes its left side what its condition rejects there (a left row with a NULL
  key has no match); an anti, null-aware anti or mark join passes its left side only what is
  rejected above. A semi or anti join's right side gets what the condition rejects there (a
  right row with a NULL key matches nothing); a null-aware anti or mark join's right side gets
  nothing (a NULL there decides NOT IN, and the mark's third value);
* a left join passes what is rejected to its preserved side (a NULL there is dropped above
  whether the row matched or not); the padded side gets nothing: its columns are NULL in the
  padded rows whatever its own inputs hold;
* a projection passes the columns it outputs unchanged, an aggregate its grouping columns,
  a sort everything; any other operator starts afresh below it.

The rewrite never changes the rows: it only removes padding nobody above can see. A full
join keeps its kind.
"""

from __future__ import annotations

from collections.abc import Sequence

from cbo.ir.expressions import Column, Expr, conjuncts
from cbo.ir.operators import Aggregate, Filter, Join, Plan, Project, Sort, null_rejected_columns


def simplify_outer_joins(plan: Plan) -> Plan:
    return _simplify(plan, frozenset())


def _rejected_by(predicate_parts: Sequence[Expr], within: set[Column] | None = None) -> frozenset[Column]:
    found: set[Column] = set()
    for part in predicate_parts:
        found |= null_rejected_columns(part)
    return frozenset(found if within is None else found & within)


def _simplify(plan: Plan, rejected: frozenset[Column]) -> Plan:
    if isinstance(plan, Filter):
        below = rejected | _rejected_by(conjuncts(plan.predicate))
        return plan.with_children((_simplify(plan.input, below),))
    if isinstance(plan, Join):
        return _join(plan, rejected)
    if isinstance(plan, Project):
        renames = plan._renames()
        passed = frozenset(source for source, out in renames.items() if out in rejected)
        return plan.with_children((_simplify(plan.input, passed),))
    if isinstance(plan, Aggregate):
        passed = frozenset(c for c in plan.group_by if c in rejected)
        return plan.with_children((_simplify(plan.input, passed),))
    if isinstance(plan, Sort):
        return plan.with_children((_simplify(plan.input, rejected),))
    children = plan.children
    if not children:
        return plan
    return plan.with_children(tuple(_simplify(child, frozenset()) for child in children))


def _join(join: Join, rejected: frozenset[Column]) -> Plan:
    kind = join.kind
    left_cols, right_cols = set(join.left.output), set(join.right.output)
    if kind == "left" and rejected & right_cols or kind == "right" and rejected & left_cols:
        kind = "inner"
    if kind == "inner":
        below = rejected | _rejected_by(conjuncts(join.condition))
        left, right = _simplify(join.left, below & left_cols), _simplify(join.right, below & right_cols)
    elif kind == "left":
        left, right = _simplify(join.left, rejected & left_cols), _simplify(join.right, frozenset())
    elif kind == "right":
        left, right = _simplify(join.left, frozenset()), _simplify(join.right, rejected & right_cols)
    elif kind == "semi":
        below = (rejected | _rejected_by(conjuncts(join.condition))) & left_cols
        left = _simplify(join.left, below)
        right = _simplify(join.right, _rejected_by(conjuncts(join.condition), right_cols))
    elif kind == "anti":
        # (a right row with a NULL key matches no left row: without it the same rows are left)
        left = _simplify(join.left, rejected & left_cols)
        right = _simplify(join.right, _rejected_by(conjuncts(join.condition), right_cols))
    elif kind in ("null_aware_anti", "mark"):
        # (a NULL on the right decides NOT IN and the mark's third value: the right keeps all)
        left, right = _simplify(join.left, rejected & left_cols), _simplify(join.right, frozenset())
    else:   # full
        left, right = _simplify(join.left, frozenset()), _simplify(join.right, frozenset())
    if kind == join.kind and left is join.left and right is join.right:
        return join
    return Join(kind, left, right, join.condition, join.mark, join.mark_predicate)
