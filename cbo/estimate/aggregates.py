"""Distributions of aggregate outputs: what ``sum(x)``, ``avg(x)`` and ``count(*)`` look like
across the groups, so ``HAVING sum(x) > c`` and comparisons with an aggregate's value are
estimated from data rather than with a default third.

* **Group sizes.** A grouping of ``rows`` input rows into ``groups`` groups has groups of
  ``m = rows / groups`` rows on average. Groups named by the grouping column's most common
  values have their known sizes; the others are taken as spread evenly between 1 and
  ``2m' - 1`` rows (mean ``m'``, the remaining rows over the remaining groups), the widest spread
  with that mean and no empty group (TPC-H's orders hold 1 to 7 lines, mean 4).
  A size is a whole number of rows: a fractional representative size (a mean of 1.07 rows,
  TPC-H Q11's parts per German supplier) stands for its two neighbouring whole sizes, weighted
  to keep the mean (93 % single rows, 7 % pairs), since a pair's sum is not a row's value.
* **Values.** A group of one row aggregates to its value: ``x``'s own distribution. A group of
  ``n > 1`` rows (values independent of the group) sums to the ``n``-fold convolution of
  ``x``'s distribution, computed on a lattice up to ``EXACT_SIZE`` rows; its average is that
  sum over ``n``. Larger groups are normal laws (mean ``n mu``, variance ``n sigma^2``; the
  average ``mu``, ``sigma^2 / n``). The normal law is not used for small groups: its tails are
  unbounded where a sum of seven quantities of 1 to 50 stops at 350, so ``HAVING sum > 300``
  (TPC-H Q18) would count 2.4x the groups. ``count(*)`` is the size itself; ``min`` and
  ``max`` keep ``x``'s distribution (a bound, not a law of extremes).
* **No grouping.** A scalar aggregate is one row holding ``N mu``, ``mu``, ``N``, or the
  largest (smallest) value of ``x``'s distribution.
* **Second moments** (``cbo.ir.moments``). The variance or deviation of a group of ``n``
  values drawn from ``x``'s distribution: for ``n`` up to ``EXACT_SIZE``, the statistic of
  ``MOMENT_DRAWS`` groups drawn from that distribution (a fixed seed, so estimates repeat; a
  pair of values spreads from 0 to the range, far from a normal law); larger groups are normal
  laws around ``sigma^2`` (spread ``sigma^2 sqrt(2 / (n - 1))``) or ``sigma`` (spread
  ``sigma / sqrt(2 (n - 1))``), the population forms scaled by ``(n - 1) / n``. The sample
  forms of one-value groups are NULL (their share of the groups is the output's NULL
  fraction), the population forms 0. Without grouping: one row holding ``sigma^2`` or ``sigma``.

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
from cbo.ir.moments import MOMENTS, is_moment

SIZES = 16   # representative group sizes of the evenly spread rest
EXACT_SIZE = 64   # groups of up to this many rows sum by convolution; larger ones by the normal law
MOMENT_DRAWS = 512   # groups drawn per group size to place a variance's values
LATTICE = 256    # points of the lattice a column's values are placed on for the convolution


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
            sizes.extend(_whole_sizes(rest_groups / groups, mean))
        else:
            count = min(SIZES, int(round(largest)))
            for i in range(count):
                # evenly spaced sizes between 1 and 2m - 1 (mean m)
                n = 1.0 + (largest - 1.0) * i / max(count - 1, 1)
                sizes.extend(_whole_sizes(rest_groups / groups / count, n))
    return sizes


def _whole_sizes(share: float, size: float) -> list[tuple[float, float]]:
    """``share`` of the groups with ``size`` rows on average, as whole sizes: the two
    neighbours of a fractional size, weighted to keep the mean."""
    low = math.floor(size)
    upper = size - low
    if upper < 1e-9 or size > EXACT_SIZE:
        return [(share, size)]
    return [(share * (1.0 - upper), float(low)), (share * upper, float(low + 1))]


def aggregate_output(call: AggregateCall, rel: RelEstimate, group_by: tuple[Column, ...],
                     groups: float) -> ColumnEstimate:
    """The distribution of ``call`` over the ``groups`` output rows (see the module docstring)."""
    unknown = ColumnEstimate.unknown(groups)
    if call.distinct or call.name not in ("count_star", "count", "sum", "avg", "min", "max") + MOMENTS:
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
    if is_moment(call.name):
        return _moment(call.name, rel, group_by, groups, present, variance, found)
    if not group_by:
        value = rel.rows * present * mu if call.name == "sum" else mu
        return point(value, 1.0)
    exact, normals = [], []
    lattice = _Lattice(*found)
    for share, n in group_sizes(rel, group_by, groups):
        n_present = max(n * present, 1.0)
        if n_present <= EXACT_SIZE:
            for part, size in _whole_sizes(share, n_present):
                k = int(round(size))
                if k <= 1:
                    exact.append((part, found[0], found[1]))
                else:
                    points, weights = lattice.sum_of(k)
                    exact.append((part, points if call.name == "sum" else points / k, weights))
        elif call.name == "sum":
            normals.append((share, n_present * mu, math.sqrt(n_present) * sigma))
        else:
            normals.append((share, mu, sigma / math.sqrt(n_present)))
    result = histogram(groups, exact=exact, normals=normals)
    return replace(result, width=column.width)


def _moment(name: str, rel: RelEstimate, group_by: tuple[Column, ...], groups: float, present: float,
            variance: float, found: tuple[np.ndarray, np.ndarray]) -> ColumnEstimate:
    """A second-moment aggregate's values over the groups (see the module docstring)."""
    deviation = name.startswith("stddev")
    sample = name.endswith("_samp")
    if not group_by:
        return point(math.sqrt(max(variance, 0.0)) if deviation else max(variance, 0.0), 1.0)
    exact, normals = [], []
    nulls = 0.0   # share of groups whose value is NULL
    for share, n in group_sizes(rel, group_by, groups):
        for part, size in _whole_sizes(share, max(n * present, 1.0)):
            k = max(int(round(size)), 1)
            if k == 1:
                if sample:
                    nulls += part
                else:
                    exact.append((part, np.array([0.0]), np.array([1.0])))
                continue
            scale = 1.0 if sample else (k - 1) / k
            if k <= EXACT_SIZE:
                exact.append((part, _drawn_moments(found, k, sample, deviation), np.ones(MOMENT_DRAWS)))
            elif deviation:
                sigma = math.sqrt(max(variance * scale, 0.0))
                normals.append((part, sigma, sigma / math.sqrt(2.0 * (k - 1))))
            else:
                normals.append((part, variance * scale, variance * scale * math.sqrt(2.0 / (k - 1))))
    valued = groups * (1.0 - nulls)
    if valued <= 0:
        return ColumnEstimate("number", groups, (), ())
    weight = 1.0 - nulls
    result = histogram(valued, exact=[(w / weight, p, q) for w, p, q in exact],
                       normals=[(w / weight, m, sd) for w, m, sd in normals])
    return replace(result, nulls=groups * nulls)


def _drawn_moments(found: tuple[np.ndarray, np.ndarray], k: int, sample: bool, deviation: bool) -> np.ndarray:
    """The variance (or deviation) of ``MOMENT_DRAWS`` groups of ``k`` values drawn from the
    distribution ``found`` (points, weights)."""
    points, weights = found
    rng = np.random.default_rng(k)
    drawn = rng.choice(points, size=(MOMENT_DRAWS, k), p=weights / weights.sum())
    values = drawn.var(axis=1, ddof=1 if sample else 0)
    return np.sqrt(values) if deviation else values


class _Lattice:
    """A column's values placed on evenly spaced points (whole numbers stay exact where their
    range fits ``LATTICE`` points), and the distribution of the sum of ``k`` independent values:
    the ``k``-th power of its Fourier transform."""

    def __init__(self, points: np.ndarray, weights: np.ndarray):
        self.low = float(points.min())
        span = float(points.max()) - self.low
        whole = bool(np.all(points == np.round(points)))
        self.step = max(1.0, math.ceil(span / (LATTICE - 1))) if whole else max(span / (LATTICE - 1), 1e-300)
        slots = np.round((points - self.low) / self.step).astype(np.int64) if span > 0 \
            else np.zeros(len(points), dtype=np.int64)
        self.mass = np.bincount(slots, weights=weights)
        self.mass = self.mass / self.mass.sum()
        self._transforms: dict[int, np.ndarray] = {}   # the mass's transform per FFT size

    def sum_of(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        length = k * (len(self.mass) - 1) + 1
        size = 1 << max(length - 1, 1).bit_length()
        # (one transform per size: the group sizes of one aggregate share a few powers of two)
        transform = self._transforms.get(size)
        if transform is None:
            transform = self._transforms[size] = np.fft.rfft(self.mass, size)
        mass = np.fft.irfft(transform ** k, size)[:length]
        mass = np.clip(mass, 0.0, None)
        return k * self.low + self.step * np.arange(length), mass


def _extreme(column: ColumnEstimate, largest: bool) -> ColumnEstimate | None:
    live = column.live
    values = [v for v, _ in live.mcv] + [b for s in live.segments for b in (s.lower, s.upper) if b is not None]
    try:
        value = max(values) if largest else min(values)
    except (TypeError, ValueError):
        return None
    return ColumnEstimate(live.kind, 0.0, ((value, 1.0),), (), live.width)
