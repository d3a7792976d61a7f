"""Distinct values of a set of columns in an intermediate result (after joins and filters).

Rewrites that turn a join into a semi-join, or push a DISTINCT or a grouping below a join, need
to know how many distinct combinations of some columns a join output holds. The columns'
estimates in a join output already say how many of their values survive: a join key carries
the joint distribution of its equivalence class (``cbo.estimate.join_sets``), and the other
columns of a leaf keep the values of the leaf's rows that found a match. This module adds what
the grouping estimate alone does not know: columns that a join equated have the same value in
every row, so ``{posts.Id, postLinks.PostId}`` after ``posts.Id = postLinks.PostId`` has as many
combinations as either column alone, not their product.
"""

from __future__ import annotations

from collections.abc import Iterable

from cbo.estimate.estimator import Estimator, group_count
from cbo.estimate.relation import RelEstimate
from cbo.ir.expressions import Column
from cbo.ir.operators import Plan, equated_columns


def distinct_count(estimate: RelEstimate, columns: Iterable[Column]) -> float:
    """Expected number of distinct combinations of ``columns`` among the rows of ``estimate``
    (NULL counted as one value), never above its rows."""
    chosen = list(dict.fromkeys(columns))
    if not chosen:
        return 1.0 if estimate.rows >= 1 else estimate.rows
    return group_count(estimate, tuple(_one_per_class(estimate, chosen)))[0]


def plan_distinct_count(estimator: Estimator, plan: Plan, columns: Iterable[Column]) -> float:
    """``distinct_count`` of ``columns`` in ``plan``'s output, with ``estimator``'s statistics."""
    found = set(plan.output)
    chosen = list(columns)
    missing = [str(c) for c in chosen if c not in found]
    if missing:
        raise ValueError(f"distinct count of columns the plan does not output: {', '.join(missing)}")
    return distinct_count(estimator.estimate(plan), chosen)


def _one_per_class(estimate: RelEstimate, columns: list[Column]) -> list[Column]:
    """The columns with all but one of each group that inner-join conditions equate removed."""
    if estimate.join_set is None:
        return columns
    parent: dict[Column, Column] = {}

    def find(c: Column) -> Column:
        while parent.get(c, c) is not c:
            c = parent[c]
        return c

    for conjunct in estimate.join_set.conjuncts:
        pair = equated_columns(conjunct)
        if pair is not None:
            a, b = find(pair[0]), find(pair[1])
            if a is not b:
                parent[b] = a
    kept, seen = [], set()
    for c in columns:
        root = find(c)
        if root not in seen:
            seen.add(root)
            kept.append(c)
    return kept

