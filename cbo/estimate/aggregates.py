"""Distributions of aggregate outputs: what ``sum(x)``, ``avg(x)`` and ``count(*)`` look like
across the groups, so ``HAVING sum(x) > c`` and comparisons with an aggregate's value are
estimated from data rather than with a default third.

* **Group sizes.** A grouping of ``rows`` input rows into ``groups`` groups has groups of
  ``m = rows / groups`` rows on average. Groups named by the grouping column's most common
  values have their known sizes; the others are taken as spread evenly between 1 and
  ``2m' - 1`` rows (mean ``m'``, the remaining rows over the remaining groups), the widest spread
  with that mean and no empty group (TPC-H's orders hold 1 to 7 lines, mean 4).
* **Values.** A group of one row aggregates to its value: ``x``'s own distribution. A group of
  ``n > 1`` rows sums to about a normal law of mean ``n mu`` and variance ``n sigma^2`` (``mu``,
  ``sigma^2``: mean and variance of ``x``'s distribution, values independent of the group);
  its average is about normal with mean ``mu`` and variance ``sigma^2 / n``. ``count(*)`` is the
  size itself; ``min`` and ``max`` keep ``x``'s distribution (a bound, not a law of extremes).
* **No grouping.** A scalar aggregate is one row holding ``N mu``, ``mu``, ``N``, or the
  largest (smallest) value of ``x``'s distribution.

Other aggregates (DISTINCT, computed arguments without a distribution) stay unknown.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from cbo.estimate.atoms import atoms, histogram, moments, point
from cbo.estimate.column import ColumnEstimate
from cbo.estimate.relation import RelEstimate
from cbo.ir.expressions import AggregateCall, Column, ColumnRef

SIZES = 16   # representative group sizes of the evenly spread rest


def group_sizes(rel: RelEstimate, group_by: tuple[Column, ...], groups: float) -> list[tuple[float, float]]:
    """(share of groups, rows per group) pairs; shares sum to 1."""
    if groups <= 0 or rel.rows <= 0:
        return []
    known: list[tuple[float, float]] = []     # (groups, size) of the grouping column's common values
    if len(group_by) == 1 and group_by[0] in rel.columns:
        column = rel.column(group_by[0]).live
        known = [(1.0, r) for _, r in column.mcv if r >= 1.0]
    known_groups = sum(g for g, _ in known)
    known_rows = sum(g * n for g, n in known)
    rest_groups = max(groups - known_groups, 0.0)
    rest_rows = max(rel.rows - known_rows, 0.0)
    sizes = [(g / groups, n) for g, n in known] if known_groups <= groups else []
    if not sizes:
        rest_groups, rest_rows = groups, rel.rows
    if rest_groups > 0:
        mean = max(rest_rows / rest_groups, 1.0)
        largest = max(2.0 * mean - 1.0, 1.0)
        if largest - 1.0 < 0.5:
            sizes.append((rest_groups / groups, mean))
        else:
            count = min(SIZES, int(round(largest)))
            for i in range(count):
                # evenly spaced sizes between 1 and 2m - 1 (mean m)
                n = 1.0 + (largest - 1.0) * i / max(count - 1, 1)
                sizes.append((rest_groups / groups / count, n))
    return sizes


def aggregate_output(call: AggregateCall, rel: RelEstimate, group_by: tuple[Column, ...],
                     groups: float) -> ColumnEstimate:
    """The distribution of ``call`` over the ``groups`` output rows (see the module docstring)."""
    unknown = ColumnEstimate.unknown(groups)
    if call.distinct or call.name not in ("count_star", "count", "sum", "avg", "min", "max"):
        return unknown
    column: ColumnEstimate | None = None
    if call.name != "count_star":
        if len(call.args) != 1 or not isinstance(call.args[0], ColumnRef):
            return unknown
        column = rel.column(call.args[0].column)
    if call.name in ("min", "max"):
        assert column is not None
        if column.kind is None or column.non_null <= 0:
            return unknown
        if not group_by:    # one row: the column's extreme value
            return _extreme(column, call.name == "max") or unknown
        return column.with_rows(groups)
    present = 1.0 if column is None else 1.0 - column.null_fraction
    if call.name in ("count_star", "count"):
        if not group_by:
            return point(rel.rows * present, 1.0)
        sizes = group_sizes(rel, group_by, groups)
        return histogram(groups, exact=[(1.0, np.array([n * present for _, n in sizes]),
                                        np.array([s for s, _ in sizes]))]) if sizes else unknown
    assert column is not None
    found = atoms(column, numbers_only=True)
    if found is None:
        return unknown
    stats = moments(*found)
    if stats is None:
        return unknown
    mu, variance = stats
    sigma = math.sqrt(max(variance, 0.0))
    if not group_by:
        value = rel.rows * present * mu if call.name == "sum" else mu
        return point(value, 1.0)
    exact, normals = [], []
    for share, n in group_sizes(rel, group_by, groups):
        n_present = max(n * present, 1.0)
        if n_present < 1.5:
            exact.append((share, found[0], found[1]))
        elif call.name == "sum":
            normals.append((share, n_present * mu, math.sqrt(n_present) * sigma))
        else:
            normals.append((share, mu, sigma / math.sqrt(n_present)))
    result = histogram(groups, exact=exact, normals=normals)
    return replace(result, width=column.width)


def _extreme(column: ColumnEstimate, largest: bool) -> ColumnEstimate | None:
    live = column.live
    values = [v for v, _ in live.mcv] + [b for s in live.segments for b in (s.lower, s.upper) if b is not None]
    try:
        value = max(values) if largest else min(values)
    except (TypeError, ValueError):
        return None
    return ColumnEstimate(live.kind, 0.0, ((value, 1.0),), (), live.width)
