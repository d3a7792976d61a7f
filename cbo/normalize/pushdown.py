"""Predicate pushdown: move every filter conjunct as close to the data as its columns allow.

The pass carries the conjuncts collected above a node down into it. Each case below is an
equivalence on bags of rows; where one does not hold the conjunct stays put as a Filter.

* Filter: σ_p(σ_q(R)) = σ_{p∧q}(R); conjuncts common to all branches of a disjunction are
  factored out first (``factor_or``), so they can become join keys.
* Project: σ_p(π_A(R)) = π_A(σ_{p[A]}(R)), where p[A] inlines the projected expressions;
  not for conjuncts reading an expression that can raise an error (a scalar subquery's
  "more than one row" check): moved into a filter it would be evaluated for other rows, or
  skipped by short-circuiting, so such conjuncts stay above the projection.
* Inner join: σ_p(R ⋈_c S) = R' ⋈_{c'} S' where conjuncts of p∧c that read only R go into R,
  only S into S, and the rest into the join condition. This is what turns comma joins into
  equi-joins.
* Left join R ⟕_c S: conjuncts from above that read only R go into R. Conjuncts of c that
  read only S go into S (they only decide which S rows can match). A conjunct from above
  that rejects NULLs of S's columns discards every row the outer join padded, so the join
  is an inner join (the classic outer-join simplification) and is handled as one.
  Right joins mirror this; full joins keep everything in place.
* Semi/anti/mark join: conjuncts from above read only the left side (the output) and go
  there, except those on a mark column. Conjuncts of the condition that read only the right
  side go into it; for a semi join, condition conjuncts on the left side alone filter it.
* Aggregate: a conjunct over grouping columns only holds for a whole group, so it may filter
  the input instead: σ_p(γ_G(R)) = γ_G(σ_p(R)) when cols(p) ⊆ G (G non-empty).
* Grouping sets: the same for a conjunct over the keys every set groups by (read through their
  outputs, which hold the keys' values in every row); keys some set rolls up are NULL there,
  and a conjunct on them stays above. With an empty set among the sets no key is in every set.
* Union (ALL or DISTINCT): σ_p(R ∪ S) = σ_{p[R]}(R) ∪ σ_{p[S]}(S), p[X] reading the branch's
  columns: each row of a union is a row of a branch, so the same rows pass.
* Sort passes conjuncts through; Limit, INTERSECT/EXCEPT ALL and VALUES keep them above, and so does
  a CTE's consumer (the rows it reads are shared: ``cbo.normalize.ctes``). A CTE's anchor
  passes them to its body.
* Window: conjuncts stay above it. One that reads only the partition columns holds for whole
  partitions and may filter the input instead; the memo rule ``PushFilterBelowWindow``
  (``cbo.memo.rules.filter_below_window``) moves it, and carries it on down with this pass.
"""

from __future__ import annotations

from cbo.ir.expressions import TRUE, Column, ColumnRef, Expr, can_raise, columns_of, conjunction, substitute
from cbo.ir.operators import (
    Aggregate,
    CteAnchor,
    CteConsumer,
    Filter,
    GroupingSets,
    Join,
    Limit,
    Plan,
    Project,
    Scan,
    SetOp,
    Sort,
    Values,
    Window,
    null_rejected_columns,
)
from cbo.normalize.factor_or import factored_conjuncts


def push_filters(plan: Plan) -> Plan:
    return _push(plan, [])


def _filter(plan: Plan, predicates: list[Expr]) -> Plan:
    kept = [p for p in predicates if p != TRUE]
    return Filter(plan, conjunction(kept)) if kept else plan


def _reads_only(predicate: Expr, columns: set[Column]) -> bool:
    return columns_of(predicate) <= columns


def _push(plan: Plan, predicates: list[Expr]) -> Plan:
    if isinstance(plan, Filter):
        return _push(plan.input, predicates + factored_conjuncts(plan.predicate))
    if isinstance(plan, Project):
        definitions = {c: e for c, e in plan.assignments}
        raising = {c for c, e in plan.assignments if can_raise(e)}
        movable = [p for p in predicates if not (columns_of(p) & raising)]
        staying = [p for p in predicates if columns_of(p) & raising]
        inlined = [substitute(p, definitions) for p in movable]
        return _filter(Project(_push(plan.input, inlined), plan.assignments), staying)
    if isinstance(plan, Join):
        return _push_join(plan, predicates)
    if isinstance(plan, Aggregate) and plan.group_by:
        groups = set(plan.group_by)
        below = [p for p in predicates if _reads_only(p, groups)]
        above = [p for p in predicates if not _reads_only(p, groups)]
        return _filter(Aggregate(_push(plan.input, below), plan.group_by, plan.aggregates), above)
    if isinstance(plan, GroupingSets):
        # outputs of the keys every set groups by are those keys' values (never rolled up)
        # (not a conjunct without columns: below, FALSE would leave an empty set's one row)
        kept = {plan.outputs[i]: ColumnRef(plan.keys[i]) for i in plan.in_every_set}
        movable = [p for p in predicates if columns_of(p) and _reads_only(p, set(kept))]
        below = [substitute(p, kept) for p in movable]
        above = [p for p in predicates if p not in movable]
        return _filter(plan.with_children((_push(plan.input, below),)), above)
    if isinstance(plan, Sort):
        return Sort(_push(plan.input, predicates), plan.keys)
    if isinstance(plan, SetOp) and plan.kind == "union":
        # Each output row is a row of one branch (UNION ALL), or stands for equal rows of some
        # branches (DISTINCT): filtering each branch keeps exactly the rows that pass.
        children = tuple(_push(child, [substitute(p, {c: ColumnRef(b) for c, b in zip(plan.columns, columns)})
                                       for p in predicates])
                         for child, columns in zip(plan.inputs, plan.inputs_columns))
        return plan.with_children(children)
    if isinstance(plan, (Aggregate, Limit, SetOp, Window)):
        children = tuple(_push(child, []) for child in plan.children)
        return _filter(plan.with_children(children), predicates)
    if isinstance(plan, (Scan, Values, CteConsumer)):
        return _filter(plan, predicates)
    if isinstance(plan, CteAnchor):
        return CteAnchor(plan.cte, plan.name, _push(plan.producer, []), _push(plan.body, predicates))
    raise AssertionError(f"unknown operator {type(plan).__name__}")


def _push_join(join: Join, predicates: list[Expr]) -> Plan:
    left_cols, right_cols = set(join.left.output), set(join.right.output)
    kind = join.kind
    if kind in ("left", "right"):
        padded = right_cols if kind == "left" else left_cols
        if any(null_rejected_columns(p) & padded for p in predicates):
            kind = "inner"  # the filter drops every NULL-padded row: no outer join is needed
    condition = factored_conjuncts(join.condition)

    if kind == "inner":
        everything = predicates + condition
        to_left = [p for p in everything if _reads_only(p, left_cols)]
        to_right = [p for p in everything if _reads_only(p, right_cols) and p not in to_left]
        rest = [p for p in everything if p not in to_left and p not in to_right and p != TRUE]
        return Join("inner", _push(join.left, to_left), _push(join.right, to_right), conjunction(rest))

    if kind in ("left", "right"):
        preserved_cols = left_cols if kind == "left" else right_cols
        padded_cols = right_cols if kind == "left" else left_cols
        from_above = [p for p in predicates if _reads_only(p, preserved_cols)]
        above = [p for p in predicates if p not in from_above]
        into_padded = [c for c in condition if _reads_only(c, padded_cols)]
        stay = [c for c in condition if c not in into_padded]
        if kind == "left":
            left, right = _push(join.left, from_above), _push(join.right, into_padded)
        else:
            left, right = _push(join.left, into_padded), _push(join.right, from_above)
        return _filter(Join(kind, left, right, conjunction(stay)), above)

    if kind == "full":
        return _filter(Join("full", _push(join.left, []), _push(join.right, []), join.condition), predicates)

    # semi, anti, mark: the output is the left side (plus the mark column)
    from_above = [p for p in predicates if _reads_only(p, left_cols)]
    above = [p for p in predicates if p not in from_above]
    into_right = [c for c in condition if _reads_only(c, right_cols)]
    into_left = [c for c in condition if kind == "semi" and _reads_only(c, left_cols) and c not in into_right]
    stay = [c for c in condition if c not in into_right and c not in into_left]
    return _filter(Join(kind, _push(join.left, from_above + into_left), _push(join.right, into_right),
                        conjunction(stay), join.mark, join.mark_predicate), above)
