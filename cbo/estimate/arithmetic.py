"""Distributions of computed numeric columns: a column with a constant, or two columns.

``x * c``, ``x / c``, ``x + c``, ``x - c`` (and ``c * x``, ``c + x``, ``c - x``) move and stretch
``x``'s distribution exactly: each most common value and segment bound is mapped (a negative
factor reverses the order), rows and distinct values stay. Two columns combined by ``+ - * /``
are taken as independent: every pair of their weighted points (``atoms``) gives a point of the
result, weighted by the product of their shares, and the points become a histogram. This lets
a comparison with ``0.2 * avg(x)`` or a sum of ``price * quantity`` be estimated from data.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from cbo.estimate.atoms import atoms, histogram
from cbo.estimate.column import ColumnEstimate, Segment

OPERATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul, "divide": operator.truediv}
MAX_PAIRS = 4096


def with_constant(name: str, column: ColumnEstimate, constant: float, constant_first: bool) -> ColumnEstimate | None:
    """The distribution of ``column <op> constant`` (or ``constant <op> column``); None when the
    column is not numeric or the operation is not affine in it (a constant divided by it)."""
    if column.kind != "number" or name not in OPERATIONS:
        return None
    if name == "divide" and (constant_first or constant == 0):
        return None
    scale, shift = 1.0, 0.0
    if name == "multiply":
        scale = constant
    elif name == "divide":
        scale = 1.0 / constant
    elif name == "add":
        shift = constant
    elif constant_first:      # constant - x
        scale, shift = -1.0, constant
    else:
        shift = -constant
    return affine(column, scale, shift)


def affine(column: ColumnEstimate, scale: float, shift: float) -> ColumnEstimate | None:
    live = column.live
    try:
        mcv = tuple((float(v) * scale + shift, r) for v, r in live.mcv)
        segments = [Segment(float(s.lower) * scale + shift, float(s.upper) * scale + shift, s.rows, s.distinct,
                            s.domain) for s in live.segments]
    except (TypeError, ValueError):
        return None
    if scale < 0:
        segments = [Segment(s.upper, s.lower, s.rows, s.distinct, s.domain) for s in reversed(segments)]
    elif scale == 0:
        return ColumnEstimate("number", live.nulls, ((shift, live.non_null),) if live.non_null > 0 else (), (),
                              live.width)
    return ColumnEstimate("number", live.nulls, mcv, tuple(segments), live.width)


def of_two(name: str, a: ColumnEstimate, b: ColumnEstimate, rows: float) -> ColumnEstimate | None:
    """The distribution of ``a <op> b`` for independent numeric columns, on ``rows`` rows."""
    if name not in OPERATIONS:
        return None
    found_a, found_b = atoms(a, numbers_only=True), atoms(b, numbers_only=True)
    if found_a is None or found_b is None:
        return None
    (pa, wa), (pb, wb) = _thin(*found_a), _thin(*found_b)
    if not len(pa) or not len(pb):
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        values = OPERATIONS[name](pa[:, None], pb[None, :]).ravel()
    weights = (wa[:, None] * wb[None, :]).ravel()
    keep = np.isfinite(values)
    non_null = rows * (1.0 - a.null_fraction) * (1.0 - b.null_fraction)
    result = histogram(non_null, exact=[(1.0, values[keep], weights[keep])])
    from dataclasses import replace

    return replace(result, nulls=max(rows - non_null, 0.0))


def _thin(points: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """At most sqrt(MAX_PAIRS) points, merged in order (keeps the product of two small)."""
    limit = int(MAX_PAIRS ** 0.5)
    if len(points) <= limit:
        return points, weights
    order, bounds, point_groups = _thinning(points, limit)
    weights = weights[order]
    merged_w = np.array([weights[lo:hi].sum() for lo, hi in bounds])
    merged_p = np.array([(p * weights[lo:hi]).sum() / w if w > 0 else p.mean()
                         for p, (lo, hi), w in zip(point_groups, bounds, merged_w)])
    return merged_p, merged_w


# (points, their order, the groups' bounds in that order, the groups' sorted points) per
# read-only points array: ``atoms`` keeps one per leaf column, shared by its scaled copies,
# whose weights alone differ.
_THINNING: dict[int, tuple[np.ndarray, np.ndarray, list[tuple[int, int]], list[np.ndarray]]] = {}


def _thinning(points: np.ndarray, limit: int) -> tuple[np.ndarray, list[tuple[int, int]], list[np.ndarray]]:
    """The sort and the ``limit`` groups (``np.array_split``'s) of ``_thin``, kept per points array
    that cannot change."""
    found = _THINNING.get(id(points))
    if found is not None and found[0] is points:
        return found[1], found[2], found[3]
    order = np.argsort(points)
    ordered = points[order]
    bounds = [(int(g[0]), int(g[-1]) + 1) for g in np.array_split(np.arange(len(points)), limit)]
    point_groups = [ordered[lo:hi] for lo, hi in bounds]
    if not points.flags.writeable:
        if len(_THINNING) > 10_000:
            _THINNING.clear()
        _THINNING[id(points)] = (points, order, bounds, point_groups)   # (points kept: its id stays its)
    return order, bounds, point_groups
