"""A column's distribution as weighted points on a line, and back: for arithmetic on columns,
comparisons between two columns and the outputs of aggregates.

``atoms`` places each most common value at its position with its rows, and spreads each
histogram segment's rows over ``PER_SEGMENT`` evenly spaced points inside it (values are spread
evenly within a segment, as everywhere in the estimator). ``histogram`` turns weighted points
or a mixture of normal laws (sums and averages of many values) back into a
:class:`ColumnEstimate` with equal-width segments, so filters and joins read it as any other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from cbo.estimate.column import ColumnEstimate, Segment
from cbo.estimate.values import position

PER_SEGMENT = 8
BUCKETS = 64


def atoms(estimate: ColumnEstimate, numbers_only: bool = False) -> tuple[np.ndarray, np.ndarray] | None:
    """(positions, rows) of the column's non-NULL values; None when they cannot be placed
    (no statistics, values without an order on a line, or not numbers when ``numbers_only``)."""
    if estimate.kind is None or (numbers_only and estimate.kind != "number"):
        return None
    # Kept on the (immutable) estimate, read-only, as ``filters._uppers`` keeps its bounds: a
    # table's column is compared or aggregated by every sub-plan reading it, with the same
    # values. The positions are those of its values as they are (``_positions``: kept for
    # the MCVs and segments that every scaled copy of a leaf's column shares); only the rows
    # are scaled, as ``live`` scales them.
    kept = estimate.__dict__.get("_atoms", _NOT_KEPT)
    if kept is _NOT_KEPT:
        placed = _positions(estimate)
        if placed is None:
            kept = None
        else:
            points, mcv_rows, segment_rows = placed
            f = estimate.factor
            if f != 1.0:   # the products ``live`` makes (MCV rows and segment rows times f)
                mcv_rows, segment_rows = mcv_rows * f, segment_rows * f
            kept = points, np.concatenate([mcv_rows, np.repeat(segment_rows / PER_SEGMENT, PER_SEGMENT)])
            kept[1].flags.writeable = False
        object.__setattr__(estimate, "_atoms", kept)
    return kept


_NOT_KEPT = object()

def _positions(estimate: ColumnEstimate) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(positions of all points, MCV rows, segment rows) of the estimate's MCVs and segments,
    read-only, or None: kept with them (``ColumnEstimate.derived``), since a leaf's column and all
    its scaled copies (filters, joins) have the same values in the same places."""
    derived = estimate.derived
    found = derived.get("positions", _NOT_KEPT)
    if found is _NOT_KEPT:
        found = _placed_unscaled(estimate.mcv, estimate.segments)
        if found is not None:
            for array in found:
                array.flags.writeable = False
        derived["positions"] = found
    return found


def _placed_unscaled(mcv: tuple[tuple[object, float], ...], segments: tuple[Segment, ...]) \
        -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    places, weights = [], []
    for value, rows in mcv:
        at = position(value)
        if at is None:
            return None
        places.append(at)
        weights.append(rows)
    lows, highs, rows_of = [], [], []
    for s in segments:
        lo, hi = position(s.lower), position(s.upper)
        if lo is None or hi is None:
            return None
        lows.append(lo)
        highs.append(hi)
        rows_of.append(s.rows)
    if lows:
        low, high = np.array(lows), np.array(highs)
        inner = (low[:, None] + (high - low)[:, None] * _SPREAD[None, :]).ravel()
        points = np.concatenate([np.array(places, dtype=float), inner])
    else:
        points = np.array(places, dtype=float)
    return points, np.array(weights, dtype=float), np.array(rows_of, dtype=float)


_SPREAD = (np.arange(PER_SEGMENT) + 0.5) / PER_SEGMENT


def _placed(live: ColumnEstimate) -> tuple[np.ndarray, np.ndarray] | None:
    """``atoms`` of a live estimate, computed (what ``atoms`` keeps: the tests compare)."""
    placed = _placed_unscaled(live.mcv, live.segments)
    if placed is None:
        return None
    points, mcv_rows, segment_rows = placed
    return points, np.concatenate([mcv_rows, np.repeat(segment_rows / PER_SEGMENT, PER_SEGMENT)])


def moments(points: np.ndarray, weights: np.ndarray) -> tuple[float, float] | None:
    """(mean, variance) of weighted points; None when they weigh nothing."""
    total = float(weights.sum())
    if total <= 0:
        return None
    mean = float((points * weights).sum() / total)
    return mean, float((weights * (points - mean) ** 2).sum() / total)


def point(value: float, rows: float) -> ColumnEstimate:
    """A column holding one value on ``rows`` rows (the result of a scalar aggregate)."""
    return ColumnEstimate("number", 0.0, ((value, rows),) if rows > 0 else (), ())


def histogram(rows: float, exact: Sequence[tuple[float, np.ndarray, np.ndarray]] = (),
              normals: Sequence[tuple[float, float, float]] = ()) -> ColumnEstimate:
    """A numeric column of ``rows`` rows distributed as a mixture: ``exact`` parts (weight,
    points, point weights) and ``normals`` (weight, mean, standard deviation); the weights sum
    to 1. Equal-width segments over the mixture's range; every row is its own value (the
    outputs of an aggregate are one per group)."""
    lows, highs = [], []
    for _, points, _ in exact:
        if len(points):
            lows.append(float(points.min()))
            highs.append(float(points.max()))
    for _, mean, sd in normals:
        lows.append(mean - 6.0 * sd)
        highs.append(mean + 6.0 * sd)
    if not lows or rows <= 0:
        return ColumnEstimate("number", 0.0, (), ())
    low, high = min(lows), max(highs)
    if high <= low:
        return point(low, rows)
    edges = np.linspace(low, high, BUCKETS + 1)
    mass = np.zeros(BUCKETS)
    for weight, points, point_weights in exact:
        total = float(point_weights.sum())
        if total > 0 and weight > 0:
            counts, _ = np.histogram(points, bins=edges, weights=point_weights)
            mass += weight * counts / total
    for weight, mean, sd in normals:
        if weight <= 0:
            continue
        if sd <= 0:
            counts, _ = np.histogram([mean], bins=edges)
            mass += weight * counts
            continue
        cdf = np.array([0.5 * (1.0 + math.erf((e - mean) / (sd * math.sqrt(2.0)))) for e in edges])
        mass += weight * np.diff(cdf)
    total = float(mass.sum())
    if total <= 0:
        return ColumnEstimate("number", 0.0, (), ())
    mass *= rows / total
    segments = tuple(Segment(float(edges[i]), float(edges[i + 1]), float(mass[i]), float(mass[i]), float(mass[i]))
                     for i in range(BUCKETS) if mass[i] > 0)
    return ColumnEstimate("number", 0.0, (), segments)
