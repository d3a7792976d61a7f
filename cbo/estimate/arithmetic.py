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
    order = np.argsort(points)
    points, weights = points[order], weights[order]
    groups = np.array_split(np.arange(len(points)), limit)
    merged_w = np.array([weights[g].sum() for g in groups])
    merged_p = np.array([(points[g] * weights[g]).sum() / w if w > 0 else points[g].mean()
                         for g, w in zip(groups, merged_w)])
    return merged_p, merged_w
