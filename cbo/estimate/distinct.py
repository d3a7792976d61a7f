"""Distinct values of a set of columns in an intermediate result (after joins and filters).

Rewrites that turn a join into a semi-join, or push a DISTINCT or a grouping below a join, need
to know how many distinct combinations of some columns a join output holds. The columns'
estimates in a join output already say how many of their values survive: a join key carries
the joint distribution of its equivalence class (``cbo.estimate.join_sets``), and the other
columns of a leaf keep the values of the leaf's rows that found a match. Columns that a join
equated have the same value in every row, so ``{posts.Id, postLinks.PostId}`` after
``posts.Id = postLinks.PostId`` has as many combinations as either column alone, not their
product: ``group_count`` keeps one column of each such group (``estimator.one_per_class``), for
a grouping as for a distinct count.
"""

from __future__ import annotations

from collections.abc import Iterable

from cbo.estimate.estimator import Estimator, group_count, one_per_class
from cbo.estimate.relation import RelEstimate
from cbo.ir.expressions import Column
from cbo.ir.operators import Plan


def distinct_count(estimate: RelEstimate, columns: Iterable[Column]) -> float:
    """Expected number of distinct combinations of ``columns`` among the rows of ``estimate``
    (NULL counted as one value), never above its rows."""
    chosen = list(dict.fromkeys(columns))
    if not chosen:
        return 1.0 if estimate.rows >= 1 else estimate.rows
    return group_count(estimate, tuple(one_per_class(estimate, chosen)))[0]


def plan_distinct_count(estimator: Estimator, plan: Plan, columns: Iterable[Column]) -> float:
    """``distinct_count`` of ``columns`` in ``plan``'s output, with ``estimator``'s statistics."""
    found = set(plan.output)
    chosen = list(columns)
    missing = [str(c) for c in chosen if c not in found]
    if missing:
        raise ValueError(f"distinct count of columns the plan does not output: {', '.join(missing)}")
    return distinct_count(estimator.estimate(plan), chosen)
