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
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul, "divide": operator.truediv,
    "float_divide": operator.truediv}
MAX_PAIRS = 4096


def with_constant(name: str, column: ColumnEstimate, constant: float, constant_first: bool) -> ColumnEstimate | None:
    """The distribution of ``column <op> constant`` (or ``constant <op> column``); None when the
    column is not numeric or the operation is not affine in it (a constant divided by it)."""
    if column.kind != "number" or name not in OPERATIONS:
        return None
    if name in ("divide", "float_divide") and (constant_first or constant == 0):
        return None
    scale, shift = 1.0, 0.0
    if name == "multiply":
        scale = constant
    elif name in ("divide", "float_divide"):
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
    (pa, wa), (pb, wb) = _thin(*found_a, a.derived), _thin(*found_b, b.derived)
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


def _thin(points: np.ndarray, weights: np.ndarray, derived: dict[str, Any] | None = None) \
        -> tuple[np.ndarray, np.ndarray]:
    """At most sqrt(MAX_PAIRS) points, merged in order (keeps the product of two small): the
    points sorted and split as ``np.array_split`` splits them, each group's weights summed and
    its points averaged by weight (by plain mean where the group weighs nothing). ``derived``:
    what derives from the column's values (``ColumnEstimate.derived``), whose points these are:
    their sort and groups are kept there, for every scaled copy of the column, whose weights
    alone differ."""
    limit = int(MAX_PAIRS ** 0.5)
    if len(points) <= limit:
        return points, weights
    if derived is None:
        order, blocks = _thinning(points, limit)
    else:
        found = derived.get("thinning")
        if found is None:
            found = derived["thinning"] = _thinning(points, limit)
        order, blocks = found
    weights = weights[order]
    merged_w, merged_p = [], []
    start = 0
    for block in blocks:   # (array_split's groups: the first ones one point longer)
        count, size = block.shape
        w = weights[start:start + count * size].reshape(count, size)
        start += count * size
        total = _row_sums(w)
        with np.errstate(divide="ignore", invalid="ignore"):
            average = _row_sums(block * w) / total
        for i in np.flatnonzero(~(total > 0)):
            average[i] = block[i].mean()
        merged_w.append(total)
        merged_p.append(average)
    return np.concatenate(merged_p), np.concatenate(merged_w)


def _row_sums(rows: np.ndarray) -> np.ndarray:
    """Each row's ``np.sum``, to the last bit, for all rows at once: numpy adds fewer than eight
    doubles in order, and up to 128 in eight running sums combined pairwise, then the rest in
    order (``cbo.estimate.matching._array_sum`` does the same for one list); longer rows are
    summed by numpy itself."""
    count, size = rows.shape
    if size > 128:
        return np.array([row.sum() for row in rows])
    total = np.zeros(count)
    if size < 8:
        for j in range(size):
            total = total + rows[:, j]
        return total
    r = rows[:, :8].copy()
    end = size - size % 8
    for i in range(8, end, 8):
        r += rows[:, i:i + 8]
    total = total + (((r[:, 0] + r[:, 1]) + (r[:, 2] + r[:, 3])) + ((r[:, 4] + r[:, 5]) + (r[:, 6] + r[:, 7])))
    for i in range(end, size):
        total = total + rows[:, i]
    return total


def _thinning(points: np.ndarray, limit: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """The sort and the ``limit`` groups of ``_thin``: the points' order, and the sorted points in
    ``array_split``'s groups as one or two blocks of equal-length rows."""
    order = np.argsort(points)
    ordered = points[order]
    size, extra = divmod(len(points), limit)
    longer = extra * (size + 1)
    blocks = [b for b in (ordered[:longer].reshape(extra, size + 1), ordered[longer:].reshape(limit - extra, size))
              if len(b)]
    return order, blocks


def shifted(column: ColumnEstimate, amount: Any) -> ColumnEstimate | None:
    """The distribution of ``column + amount`` for a whole number (or a number of days added to
    a date): every most common value and segment bound moved, rows and distinct values kept, and
    the values' type too, so that whole numbers and dates still count the values a range holds
    (``rank - 1`` is matched with ``rank`` value by value). None where the values do not move so."""
    live = column.live
    try:
        mcv = tuple((v + amount, r) for v, r in live.mcv)
        segments = tuple(s._replace(lower=s.lower + amount, upper=s.upper + amount) for s in live.segments)
    except TypeError:
        return None
    return ColumnEstimate(live.kind, live.nulls, mcv, segments, live.width, live.default)
