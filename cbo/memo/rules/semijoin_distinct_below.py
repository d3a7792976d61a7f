"""SemiJoinToInnerDistinctBelow: a semi join on equalities as an inner join with the filtering
side made distinct on its join columns first (the early-out join design's second rewrite).

Pattern: ``SemiJoin[a1 = b1 AND ... AND an = bn AND L AND R](A, B)``: at least one equality
between a column ``a_i`` of ``A`` and a column ``b_i`` of ``B`` (``=``, or ``IS NOT DISTINCT
FROM`` as INTERSECT's keys are); ``L`` conjuncts reading no column of ``B``; ``R`` conjuncts
reading only ``B``.

Result::

    Project[A's columns](InnerJoin[a1 = b1 AND ... AND L](A,
        Aggregate[group by b1..bn](Filter[R](B))))

Equivalence: after the DISTINCT, ``B`` holds each combination of ``b1..bn`` (among its rows
passing ``R``) once, so a row of ``A`` meets at most one row of it on the equalities: the inner
join emits each row of ``A`` at most once, and exactly when some row of ``B`` passes ``R`` and
equals it on every pair, which is the semi join's condition. ``L`` reads only ``A`` (or
nothing) and is the same on every pair a row of ``A`` is in. NULLs: ``a = b`` is never TRUE for
a NULL, before or after the DISTINCT (which keeps one NULL group, that matches nothing);
``a IS NOT DISTINCT FROM b`` matches a NULL ``a`` with that one NULL group, once.

Refused (the semi join stays, and the DISTINCT above the join may still apply):

* a conjunct that reads both sides and is not a plain column equality: ``a < b``, ``a <> b``,
  ``a = b + 1``, ``a = b OR ...``; the DISTINCT would have to keep
  every column those read, and for ``<`` a row of ``A`` could still meet several rows;
* anti joins, null-aware anti joins (NOT IN) and mark joins, which keep rows without a match.

When ``b1..bn`` already hold a unique key of ``B`` (with ``exploit_constraints``) no DISTINCT is
needed: the result is the inner join alone, projected.

The byte-reduction threshold (``push_aggregation_below_join_byte_reduction_threshold``, as in
Presto's ``TransformDistinctInnerJoinToRightEarlyOutJoin``): the inner join ``A ⋈ B`` is
*byte-reducing* when its estimated output bytes are at most threshold × the bytes of ``B``, its
probe side in Presto's plan (the filtering side, the input the DISTINCT would be pushed
onto). Then the DISTINCT stays above the join (``SemiJoinToInnerDistinctAbove``) and this
rewrite does not enter the memo; otherwise it does, and cost picks among the DISTINCT above, the
DISTINCT below and the semi join. A larger threshold counts
more joins as reducing, so it pushes less: 0 pushes below every join that outputs any byte, an
infinite threshold never pushes. The decision, with the estimated ratio, is noted at the semi
join's group (``cbo explain``, ``cbo explain --memo``). Enabled by
``in_predicates_as_inner_joins_enabled``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from cbo.ir.expressions import TRUE, Column, ColumnRef, Expr, columns_of, conjunction, conjuncts
from cbo.ir.operators import Aggregate, Filter, Join, Plan, Project, key_columns
from cbo.memo.memo import Group, group_of
from cbo.memo.pattern import Joins, Pattern
from cbo.memo.rules.base import TransformationRule

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext


class SemiJoinToInnerDistinctBelow(TransformationRule):
    """A semi join on equalities as an inner join with the filtering side made distinct first."""

    name = "SemiJoinToInnerDistinctBelow"
    patterns = (Pattern(Join, where=Joins(frozenset({"semi"}), equi_keyed=True)),)

    def matches(self, expr: Plan, group: Group, context: SearchContext) -> bool:
        settings = context.settings
        return settings.in_predicates_as_inner_joins_enabled and settings.existential_form != "SEMI_JOIN"

    def apply(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[Plan]:
        assert isinstance(expr, Join) and expr.kind == "semi"
        split = split_condition(expr)
        if split is None:
            return
        pairs, on_left, on_right = split
        left, right = expr.left, expr.right
        keys = tuple(dict.fromkeys(b for _, b, _ in pairs))
        body: Plan = Filter(right, conjunction(on_right)) if on_right else right
        already_distinct = context.settings.exploit_constraints and any(key <= set(keys) for key in right.unique_keys)
        if not already_distinct:
            if not _pushes(expr, group, context):
                return
            body = Aggregate(body, keys)
        # Each key as written: ``=``, or ``IS NOT DISTINCT FROM`` (INTERSECT's and EXCEPT's
        # keys), which still holds with one row per distinct b (NULL its own group).
        condition = conjunction([key for _, _, key in pairs] + on_left)
        yield Project(Join("inner", left, body, condition), tuple((c, ColumnRef(c)) for c in left.output))


def split_condition(join: Join) -> tuple[list[tuple[Column, Column, Expr]], list[Expr], list[Expr]] | None:
    """The condition as (a, b, conjunct) keys (``a = b`` or ``a IS NOT DISTINCT FROM b``),
    conjuncts reading no column of the right side, and conjuncts reading only the right side;
    None when another conjunct reads both sides."""
    left, right = set(join.left.output), set(join.right.output)
    pairs: list[tuple[Column, Column, Expr]] = []
    on_left: list[Expr] = []
    on_right: list[Expr] = []
    for conjunct in conjuncts(join.condition):
        if conjunct == TRUE:
            continue
        pair = key_columns(conjunct)
        if pair is not None:
            a, b = pair
            if a in left and b in right:
                pairs.append((a, b, conjunct))
                continue
            if b in left and a in right:
                pairs.append((b, a, conjunct))
                continue
        read = columns_of(conjunct)
        if not read & right:
            on_left.append(conjunct)
        elif read <= right:
            on_right.append(conjunct)
        else:
            return None
    return (pairs, on_left, on_right) if pairs else None


def _pushes(join: Join, group: Group, context: SearchContext) -> bool:
    """Whether the inner join is *not* byte-reducing, so the DISTINCT may go below it; the
    decision is noted at the semi join's group."""
    left, right = group_of(join.left), group_of(join.right)
    inner = Join("inner", join.left, join.right, join.condition)
    rows = context.memo.estimator.estimate_node(inner, [left.estimate, right.estimate]).rows
    width = sum(context.column_width(c) for c in inner.output)
    output_bytes = rows * width
    probe_bytes = context.size_bytes(right)
    threshold = context.settings.push_aggregation_below_join_byte_reduction_threshold
    # Byte-reducing: the join's output is at most the probe side's bytes divided by the
    # threshold. So 0 never pushes (every join counts as reducing), a very large value always
    # pushes, and at the default 1.0 the aggregation goes below a join that outputs more bytes
    # than its probe side reads (Presto's design: "the join does not reduce cardinality").
    # An infinite threshold always pushes, even over an empty join (inf × 0 is not a number).
    reducing = not math.isinf(threshold) and threshold * output_bytes <= probe_bytes
    decision = "byte-reducing, not pushed" if reducing else "not byte-reducing, pushed"
    if context.settings.existential_form == "DISTINCT_BELOW":
        # Forced, to be measured: the threshold does not apply.
        reducing, decision = False, "pushed: existential_form = DISTINCT_BELOW"
    ratio = output_bytes / probe_bytes if probe_bytes > 0 else float("inf")
    scaled = ratio * threshold if ratio and threshold else 0.0   # 0 × inf counts as 0
    context.memo.note(group, f"distinct below the join (3.2): inner join {_bytes(output_bytes)} / probe side "
                             f"{_bytes(probe_bytes)} = {ratio:.3g}, x threshold {threshold:g} = "
                             f"{scaled:.3g} (pushed above 1): {decision}")
    return not reducing


def _bytes(n: float) -> str:
    if n < 1024:
        return f"{n:.3g} B"
    for unit in ("KB", "MB", "GB"):
        n /= 1024
        if n < 1024 or unit == "GB":
            return f"{n:,.1f} {unit}"
    raise AssertionError("unreachable")
