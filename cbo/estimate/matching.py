"""Matching several columns' distributions at once: the joint distribution of an equivalence class.

When a join set equates columns c1 = c2 = ... = ck (an equivalence class, each column from a
different input), the rows that survive are, per value v, the product of each column's rows
holding v: ``sum over v of n1(v) x ... x nk(v)``. For two columns this is the classical
matching of two distributions (``joins.matching_pairs`` gives the same number); for three it
is what a foreign key meeting another foreign key at a primary key needs: the rows of
``badges.UserId = users.Id = posts.LastEditorUserId`` are the sum over users of
badges(u) x posts(u), which a few heavy users dominate, and which the pairwise estimate (each
join assuming the key's uniform distribution) underestimates by orders of magnitude.

The sum is taken in two parts, as for two columns:
* every most common value of any member, times each member's rows of that value (its MCV
  count, or its histogram bucket's rows over the bucket's domain);
* the members' histograms aligned on their bucket bounds: in each range where all overlap,
  the smallest domain's values are shared by all (containment) and each holds rows/domain of
  each member: ``min(domain) x product(rows / domain)``.

``joint`` returns the same sum value by value, as a :class:`ColumnEstimate` (the distribution
of the class's column in the join's output before the other conditions scale it): so the
next join, or a grouping above, sees the skew the join carried in.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from cbo.estimate.column import ColumnEstimate, Segment, thinned
from cbo.estimate.values import is_discrete, position


def matching_tuples(columns: Sequence[ColumnEstimate]) -> float:
    """Expected number of tuples (one row of each column's input) whose values are all equal."""
    if len(columns) < 2 or any(c.kind is None for c in columns):
        return _total(joint(columns))
    # The columns are not made ``live``: the sum reads only their rows, which ``live`` would
    # multiply by ``factor`` segment by segment; the arrays of the unscaled segments (kept per
    # segments object, which every scaled copy of a leaf's column shares) are multiplied instead,
    # the same products. ``rows_equal`` makes a column live where an MCV asks it.
    arrays = []
    for c in columns:
        found = _discrete_arrays(c)
        if found is None or not c.segments:
            return _total(joint(columns))
        arrays.append(found)
    try:
        factors = [c.factor for c in columns]
        if sum(len(a[0]) for a in arrays) <= _SMALL:
            # (the rows column alone, summed as numpy would: no arrays made for a few segments)
            return _mcv_tuples(columns) + _array_sum(_swept_rows([_discrete_lists(c) for c in columns], factors))
        return _mcv_tuples(columns) + _histogram_tuples(arrays, factors)
    except TypeError:
        return _total(joint(columns))


def _mcv_tuples(live: Sequence[ColumnEstimate]) -> float:
    found = common_values(live)
    if found is not None:
        products = products_each(live, found[0])
        if products is not None:
            return sum_in_order(products)
    return _mcv_tuples_per_value(live)


def _mcv_tuples_per_value(live: Sequence[ColumnEstimate]) -> float:
    """``_mcv_tuples`` value by value (any values): the joint's most common values summed."""
    return sum(product for _, product in _joint_mcv_per_value(live))


def _discrete_arrays(column: ColumnEstimate) -> tuple[np.ndarray, ...] | None:
    """(lower, upper, rows, domain, distinct) of the column's segments over whole numbers, as
    read-only arrays; None otherwise. The joins of integer keys (nearly all) are matched in
    numpy (``_pieces``). Kept with the column's values (``ColumnEstimate.derived``): a memo's
    join sets match the same leaves' columns in thousands of combinations."""
    derived = column.derived
    found = derived.get("arrays", _MISSING)
    if found is _MISSING:
        found = _arrays_of(column.segments)
        for array in found or ():
            array.flags.writeable = False
        derived["arrays"] = found
    return found


def _discrete_lists(column: ColumnEstimate) -> tuple[list[float], ...]:
    """``_discrete_arrays`` as lists (the plain sweep of a few segments reads lists), kept with
    them."""
    derived = column.derived
    found = derived.get("lists")
    if found is None:
        arrays = _discrete_arrays(column)
        assert arrays is not None
        found = derived["lists"] = tuple(a.tolist() for a in arrays)
    return found


_MISSING = object()


def _arrays_of(segments: tuple[Segment, ...]) -> tuple[np.ndarray, ...] | None:
    if not segments:
        return None
    first, last = segments[0], segments[-1]
    if not all(type(b) is int for b in (first.lower, first.upper, last.lower, last.upper)):
        return None
    try:
        lower = np.fromiter((s.lower for s in segments), dtype=np.float64, count=len(segments))
        upper = np.fromiter((s.upper for s in segments), dtype=np.float64, count=len(segments))
    except (TypeError, ValueError):
        return None
    if not (np.all(lower == np.floor(lower)) and np.all(upper == np.floor(upper))):
        return None
    rows = np.fromiter((s.rows for s in segments), dtype=np.float64, count=len(segments))
    domain = np.fromiter((s.domain for s in segments), dtype=np.float64, count=len(segments))
    distinct = np.fromiter((s.distinct for s in segments), dtype=np.float64, count=len(segments))
    return lower, upper, rows, domain, distinct


def _pieces(arrays: Sequence[tuple[np.ndarray, ...]],
            lists: Sequence[tuple[list[float], ...] | None] | None = None) -> tuple[np.ndarray, ...] | None:
    """The sweep of ``aligned_many`` for whole-number segments, vectorized: the ranges where
    every member has a segment are the elementary intervals between all bounds, each summed as
    ``_product`` sums a piece (the same pieces, the same formula). Returns (lower, upper, rows,
    distinct, domain) of the joint's segments, or None when no range is shared. ``lists``: the
    members' arrays as lists, where kept (``_discrete_lists``)."""
    if sum(len(a[0]) for a in arrays) <= _SMALL:
        return _pieces_small(arrays, lists)
    return _pieces_numpy(arrays)


def _pieces_numpy(arrays: Sequence[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...] | None:
    layout = _layout(arrays)
    if layout is None:
        return None
    start, last, covered, domain, placed = layout
    factor = np.ones(len(start))
    distinct = np.full(len(start), np.inf)
    for (_, _, rows, _, dist), (safe, share, part_domain) in zip(arrays, placed):
        distinct = np.minimum(distinct, dist[safe] * share)
        factor *= rows[safe] * share / part_domain
    keep = covered & (factor > 0)
    if not keep.any():
        return None
    return start[keep], last[keep], (domain * factor)[keep], np.minimum(distinct, domain)[keep], domain[keep]


def _bounds(arrays: Sequence[tuple[np.ndarray, ...]]) -> np.ndarray:
    """The members' segment bounds (each lower bound, and each upper bound plus one), sorted,
    each once: ``np.unique`` of them, without its general path (bounds are whole numbers,
    never NaN, so equal neighbours after a sort are the only repeats), which the joins of a
    memo's sets ask for thousands of times on a few hundred bounds."""
    points = np.concatenate([part for a in arrays for part in (a[0], a[1] + 1.0)])
    points.sort()
    if len(points) < 2:
        return points
    first = np.empty(len(points), dtype=bool)
    first[0] = True
    np.not_equal(points[1:], points[:-1], out=first[1:])
    return points[first]


def _layout(arrays: Sequence[tuple[np.ndarray, ...]]) -> tuple | None:
    """(start, last, covered, smallest domain, [(index, share, part domain) per member]) of the
    elementary intervals between all members' bounds; None when there are fewer than two bounds."""
    return _layout_of(arrays)


def _layout_of(arrays: Sequence[tuple[np.ndarray, ...]]) -> tuple | None:
    points = _bounds(arrays)
    if len(points) < 2:
        return None
    start, end = points[:-1], points[1:]
    width = end - start
    covered = np.ones(len(start), dtype=bool)
    domain = np.full(len(start), np.inf)
    placed = []
    for lo, hi, _, dom, _ in arrays:
        index = lo.searchsorted(start, side="right") - 1
        safe = np.maximum(index, 0)   # (at most len(lo) - 1 already)
        covered &= (index >= 0) & (hi[safe] >= end - 1.0)
        share = width / (hi[safe] - lo[safe] + 1.0)
        part_domain = np.maximum(dom[safe] * share, 1.0)
        domain = np.minimum(domain, part_domain)
        placed.append((safe, share, part_domain))
    for array in (start, covered, domain, *(a for member in placed for a in member)):
        array.flags.writeable = False
    last = end - 1.0
    last.flags.writeable = False
    return start, last, covered, domain, placed


# Up to this many segments in all, ``_pieces`` sweeps in plain Python: numpy's fixed cost per
# call (some forty small-array operations) dominates for a few segments, as with keys whose
# statistics have no histogram (one segment each), met in thousands of join sets.
#
# The plain sweep (``_pieces_small``, and ``_swept_rows`` for the rows alone, summed by
# ``_array_sum`` as numpy sums) is a second implementation of the numpy one, kept because it
# pays: with ``_SMALL`` below 1, ``python -m benchmarks.instructions`` counts a 10-relation
# clique's search (``clique:10:ex``) at far more instructions. It must give the numpy sweep's
# numbers to the last bit, so that which one runs never changes an estimate:
# ``tests/quick/test_matching_small.py`` holds them equal.
_SMALL = 12


def _pieces_small(arrays: Sequence[tuple[np.ndarray, ...]],
                  lists: Sequence[tuple[list[float], ...] | None] | None = None) -> tuple[np.ndarray, ...] | None:
    """``_pieces`` in plain Python: the same operations in the same order on the same doubles,
    so the same result to the last bit (``tests/quick/test_matching_small.py`` holds them equal)."""
    members = [found if found is not None else tuple(a.tolist() for a in member)
               for member, found in zip(arrays, lists or [None] * len(arrays))]
    found = _sweep_small(members)
    return None if found is None else tuple(np.array(column) for column in found)


def _sweep_small(members: Sequence[tuple[list[float], ...]], factors: Sequence[float] | None = None) \
        -> list[list[float]] | None:
    """The columns (lower, upper, rows, distinct, domain) of ``_pieces_small`` as lists; each
    member's rows multiplied by its factor first (the distinct values are not thinned: only the
    rows column is right then)."""
    if factors is not None:
        members = [m if f == 1.0 else (m[0], m[1], [r * f for r in m[2]], *m[3:])
                   for m, f in zip(members, factors)]
    found: list[list[float]] = [[], [], [], [], []]
    for start, last, domain, placed in _small_layout_of(members):
        distinct = math.inf
        factor = 1.0
        for (_, _, rows, _, dist), (safe, share, part_domain) in zip(members, placed):
            distinct = min(distinct, dist[safe] * share)
            factor *= rows[safe] * share / part_domain
        if factor > 0:
            for column, value in zip(found, (start, last, domain * factor, min(distinct, domain), domain)):
                column.append(value)
    if not found[0]:
        return None
    return found


def _swept_rows(members: Sequence[tuple[list[float], ...]], factors: Sequence[float] | None) -> list[float]:
    """The rows column of ``_sweep_small`` (empty where it finds nothing), by the same operations
    in the same order, without the other four: ``matching_tuples`` sums the rows alone."""
    rows_of = [m[2] if factors is None or factors[i] == 1.0 else [r * factors[i] for r in m[2]]
               for i, m in enumerate(members)]
    found: list[float] = []
    for _, _, domain, placed in _small_layout_of(members):
        factor = 1.0
        for rows, (safe, share, part_domain) in zip(rows_of, placed):
            factor *= rows[safe] * share / part_domain
        if factor > 0:
            found.append(domain * factor)
    return found


def _small_layout_of(members: Sequence[tuple[list[float], ...]]) -> list:
    # An elementary interval is covered only inside every member's overall range (from its
    # first lower bound to its greatest upper one): the bounds outside that range delimit
    # uncovered intervals alone, so they are left out (the covered intervals are the same
    # consecutive bounds), and an interval is dropped at its first member not covering it.
    if all(len(member[0]) == 1 for member in members):
        return _single_segment_layout(members)
    low = max(lo[0] for lo, *_ in members)
    high = min(max(hi) for _, hi, *_ in members) + 1.0
    points = sorted({p for lo, hi, *_ in members for p in (*lo, *(h + 1.0 for h in hi)) if low <= p <= high})
    layout = []
    for start, end in zip(points, points[1:]):
        width = end - start
        domain = math.inf
        placed = []
        for lo, hi, _, dom, _ in members:
            index = bisect_right(lo, start) - 1
            safe = min(max(index, 0), len(lo) - 1)
            if index < 0 or not hi[safe] >= end - 1.0:
                break
            share = width / (hi[safe] - lo[safe] + 1.0)
            part_domain = max(dom[safe] * share, 1.0)
            domain = min(domain, part_domain)
            placed.append((safe, share, part_domain))
        else:
            layout.append((start, end - 1.0, domain, placed))
    return layout


def _single_segment_layout(members: Sequence[tuple[list[float], ...]]) -> list:
    """``_small_layout_of`` where every member is one segment (keys without histograms): inside
    the members' common range each covers every interval with its only segment, so the index
    search and the covering test are left out (the same shares and domains, by the same
    operations)."""
    low = max(member[0][0] for member in members)
    high = min(member[1][0] for member in members) + 1.0
    points = sorted({p for member in members for p in (member[0][0], member[1][0] + 1.0) if low <= p <= high})
    spans = [(member[1][0] - member[0][0] + 1.0, member[3][0]) for member in members]
    layout = []
    for start, end in zip(points, points[1:]):
        width = end - start
        domain = math.inf
        placed = []
        for span, dom in spans:
            share = width / span
            part_domain = max(dom * share, 1.0)
            domain = min(domain, part_domain)
            placed.append((0, share, part_domain))
        layout.append((start, end - 1.0, domain, placed))
    return layout


def _array_sum(values: list[float]) -> float:
    """``float(np.array(values).sum())`` to the last bit, without the array: numpy adds fewer
    than eight doubles in order, and more in eight running sums (its pairwise summation's
    unrolled block, up to 128 values) combined pairwise, then the rest in order
    (``tests/quick/test_matching_small.py`` holds the two equal)."""
    n = len(values)
    if n < 8:
        total = 0.0
        for value in values:
            total += value
        return total
    if n > 128:
        return float(np.array(values).sum())
    r = values[:8]
    i = 8
    end = n - n % 8
    while i < end:
        for j in range(8):
            r[j] += values[i + j]
        i += 8
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        total += values[i]
        i += 1
    return total


def matched_histogram(a: ColumnEstimate, b: ColumnEstimate) -> float | None:
    """The histogram part of ``joins.matched_rows`` for whole-number segments, vectorized:
    in each range both cover, ``a``'s rows times the share of its values ``b`` holds. None
    when the segments are not over whole numbers (the caller sweeps instead).

    Of the columns' live segments, without making them live: the arrays of their segments as
    they are (kept per segments object, which the scaled copies of a column share), ``a``'s rows
    multiplied by its pending factor and ``b``'s distinct values thinned by its survival, the
    same numbers ``live`` computes (only these two of the live columns are read)."""
    base_a, base_b = _discrete_arrays(a), _discrete_arrays(b)
    if base_a is None or base_b is None:
        return None
    a_rows = base_a[2] if a.factor == 1.0 else base_a[2] * a.factor
    b_distinct = base_b[4] if b.survival >= 1.0 else np.fromiter(
        (thinned(s.distinct, s.rows, b.survival) for s in b.segments), dtype=np.float64, count=len(b.segments))
    arrays = [(*base_a[:2], a_rows, *base_a[3:]), (*base_b[:4], b_distinct)]
    points = _bounds(arrays)
    if len(points) < 2:
        return 0.0
    start, end = points[:-1], points[1:]
    width = end - start
    parts = []
    covered = np.ones(len(start), dtype=bool)
    for lo, hi, rows, dom, dist in arrays:
        index = lo.searchsorted(start, side="right") - 1
        safe = np.maximum(index, 0)   # (at most len(lo) - 1 already)
        covered &= (index >= 0) & (hi[safe] >= end - 1.0)
        share = width / (hi[safe] - lo[safe] + 1.0)
        parts.append((rows[safe] * share, dom[safe] * share, dist[safe] * share))
    (rows_a, dom_a, _), (_, dom_b, dist_b) = parts
    values = rows_a * np.minimum(1.0, dist_b / np.maximum(np.maximum(dom_a, dom_b), 1.0))
    return float(np.where(covered, values, 0.0).sum())


def _histogram_tuples(arrays: Sequence[tuple[np.ndarray, ...]], factors: Sequence[float] | None = None) -> float:
    """The histogram part of ``matching_tuples``: its joint's rows summed; each member's rows
    multiplied by its factor (a scaled column's pending ``factor``) before they are matched."""
    if sum(len(a[0]) for a in arrays) <= _SMALL:
        # (the rows column alone, summed as numpy would: no arrays made for a few segments)
        return _array_sum(_swept_rows([tuple(a.tolist() for a in member) for member in arrays], factors))
    if factors is not None:
        arrays = [a if f == 1.0 else (a[0], a[1], a[2] * f, *a[3:]) for a, f in zip(arrays, factors)]
    found = _pieces(arrays)
    return 0.0 if found is None else float(found[2].sum())


def joint(columns: Sequence[ColumnEstimate]) -> ColumnEstimate:
    """Per value, the product of the members' rows holding it (see the module docstring).

    Members without value statistics, or whose values do not compare, fall back to the uniform
    formula: the smallest domain's values shared by all, each with rows/domain of each member.
    """
    if len(columns) == 1:
        return columns[0].without_nulls()
    if any(c.kind is None for c in columns):
        return _uniform(columns)
    try:
        # (the MCVs' values are the live estimates' values; ``rows_equal`` makes a column live)
        mcv = _joint_mcv(columns)
        live = [_live_arrays(c) for c in columns]
        arrays = [a for a in live if a is not None]
        if len(arrays) == len(live):
            lists = [_discrete_lists(c) if c.factor == 1.0 and c.survival >= 1.0 else None for c in columns]
            found = _pieces(arrays, lists)
            segments: tuple[Segment, ...] = () if found is None else tuple(
                Segment(int(lo), int(hi), float(r), float(d), float(dom)) for lo, hi, r, d, dom in zip(*found))
        else:
            segments = tuple(_product(pieces) for pieces in aligned_many([c.live.segments for c in columns],
                                                                         [segment_bounds(c) for c in columns]))
    except TypeError:
        return _uniform(columns)
    return ColumnEstimate(columns[0].kind, 0.0, tuple(mcv), tuple(s for s in segments if s.rows > 0),
                          max(c.width for c in columns))


def _joint_mcv(columns: Sequence[ColumnEstimate]) -> list[tuple[Any, float]]:
    """The joint's most common values: each member's, with the product of the members' rows."""
    found = common_values(columns)
    products = products_each(columns, found[0]) if found is not None else None
    if found is not None and products is not None:
        return [(v, p) for v, p in zip(found[1], products.tolist()) if p > 0.0]
    return _joint_mcv_per_value(columns)


def _joint_mcv_per_value(columns: Sequence[ColumnEstimate]) -> list[tuple[Any, float]]:
    """``_joint_mcv`` value by value (any values)."""
    common: dict[Any, None] = {}
    for c in columns:
        for v, _ in c.mcv:
            common.setdefault(v, None)
    mcv = []
    for v in common:
        product = 1.0
        for c in columns:
            product *= c.rows_equal(v)
            if product == 0.0:
                break
        if product > 0.0:
            mcv.append((v, product))
    return mcv


def _live_arrays(c: ColumnEstimate) -> tuple[np.ndarray, ...] | None:
    """``_discrete_arrays`` of ``c.live.segments`` without making it live: the arrays of
    ``c.segments`` (kept per segments object, shared by a column's scaled copies) with the rows
    multiplied by the pending factor and the distinct values thinned by the survival, the
    numbers ``live`` computes."""
    base = _discrete_arrays(c)
    if base is None or (c.factor == 1.0 and c.survival >= 1.0):
        return base   # (the kept arrays themselves)
    lower, upper, rows, domain, distinct = base
    if c.factor != 1.0:
        rows = rows * c.factor
    if c.survival < 1.0:
        distinct = np.fromiter((thinned(s.distinct, s.rows, c.survival) for s in c.segments), dtype=np.float64,
                               count=len(c.segments))
    return lower, upper, rows, domain, distinct


def _total(estimate: ColumnEstimate) -> float:
    return sum(r for _, r in estimate.mcv) + sum(s.rows for s in estimate.segments)


def _product(pieces: list[tuple[Segment, Any, Any]]) -> Segment:
    """The joint of overlapping histogram pieces: the smallest domain's values shared by all."""
    domain = min(max(s.domain, 1.0) for s, _, _ in pieces) if pieces else 0.0
    rows = domain
    for s, _, _ in pieces:
        rows *= s.rows / max(s.domain, 1.0)
    distinct = min(s.distinct for s, _, _ in pieces)
    lower = max(pieces, key=lambda p: p[1])[0].lower
    upper = min(pieces, key=lambda p: p[2])[0].upper
    return Segment(lower, upper, rows, min(distinct, domain), domain)


def _uniform(columns: Sequence[ColumnEstimate]) -> ColumnEstimate:
    domain = min(max(c.domain, 1.0) for c in columns)
    rows = domain
    for c in columns:
        rows *= c.non_null / max(c.domain, 1.0)
    distinct = min(min(c.distinct for c in columns), domain)
    kinds = {c.kind for c in columns}
    estimate = ColumnEstimate.unknown(rows, distinct, max(c.width for c in columns))
    if len(kinds) == 1 and None not in kinds:
        estimate = replace(estimate, kind=next(iter(kinds)))
    return estimate


def aligned_many(lists: Sequence[tuple[Segment, ...]],
                 bounds: Sequence[list[tuple[float, float]] | None] | None = None) \
        -> Iterator[list[tuple[Segment, float, float]]]:
    """The ranges where every sorted segment list has a segment: for each, the parts of those
    segments in the range, with the range's bounds as positions (a sweep over all lists).
    ``bounds``: each list's positions as ``segment_bounds`` keeps them, where known."""
    if not lists or any(not segments for segments in lists):
        return
    if any(segments[0].lower is None for segments in lists):
        whole = [_whole(segments) for segments in lists]
        yield [(s, 0.0, 0.0) for s in whole]
        return
    placed = [_positions(segments) if bounds is None else _placed(bounds[k])
              for k, segments in enumerate(lists)]
    discrete = all(_discrete(segments) for segments in lists)
    index = [0] * len(lists)
    while all(i < len(segments) for i, segments in zip(index, lists)):
        spans = [placed[k][index[k]] for k in range(len(lists))]
        low = max(lo for lo, _ in spans)
        high = min(hi for _, hi in spans)
        if low <= high:
            parts = []
            for k, (lo, hi) in enumerate(spans):
                share = _share(lo, hi, low, high, discrete)
                if share <= 0:
                    break
                parts.append((lists[k][index[k]].part(share), lo, hi))
            else:
                yield parts
        # Advance every list whose current segment ends first.
        for k, (_, hi) in enumerate(spans):
            if hi == high:
                index[k] += 1


def _share(lo: float, hi: float, low: float, high: float, discrete: bool) -> float:
    if discrete:
        return min(1.0, (high - low + 1.0) / (hi - lo + 1.0))
    if hi <= lo:
        return 1.0
    return (high - low) / (hi - lo)


def _positions(segments: tuple[Segment, ...]) -> list[tuple[float, float]]:
    return _placed(_bounds_of(segments))


def _placed(bounds: list[tuple[float, float]] | None) -> list[tuple[float, float]]:
    if bounds is None:
        raise TypeError("values cannot be placed")
    return bounds


def _bounds_of(segments: tuple[Segment, ...]) -> list[tuple[float, float]] | None:
    placed = []
    for s in segments:
        lo, hi = position(s.lower), position(s.upper)
        if lo is None or hi is None:
            return None
        placed.append((lo, hi))
    return placed


def segment_bounds(column: ColumnEstimate) -> list[tuple[float, float]] | None:
    """The positions (``values.position``) of the bounds of the column's segments, None where
    one cannot be placed; kept with its values (``ColumnEstimate.derived``): its scaled and
    live copies have segments over the same bounds, and placing a string bound is a loop
    over its characters, met again in every join set matching the column."""
    derived = column.derived
    found = derived.get("bounds", _MISSING)
    if found is _MISSING:
        found = derived["bounds"] = _bounds_of(column.segments)
    return found


def _discrete(segments: tuple[Segment, ...]) -> bool:
    first, last = segments[0], segments[-1]
    return is_discrete(first.lower, first.upper) and is_discrete(last.lower, last.upper)


def _whole(segments: tuple[Segment, ...]) -> Segment:
    return Segment(None, None, sum(s.rows for s in segments), sum(s.distinct for s in segments),
                   sum(s.domain for s in segments))


# -- most common values looked up many at a time -----------------------------------------------
#
# Matching two or more columns asks each member, for every most common value of the others,
# its rows holding that value (``ColumnEstimate.rows_equal``) or the chance that it occurs
# (``presence``): a dictionary lookup, else a bisection over the histogram, one Python call
# per value, hundreds per class and thousands per memo. Where the values and the histogram's
# bounds are whole numbers (the keys nearly every join matches), the lookups below answer all
# values of one member at once in numpy. They are a second implementation of those two
# methods, kept because they pay where a memo matches the same keys in hundreds of join sets
# (TPC-DS q72's planning, counted by ``python -m benchmarks.instructions OTHER tpcds:q72``,
# spent a sixth of its instructions in the per-value calls), and they must give the same
# numbers to the last bit: the same operations on the same doubles, the sums taken in the same
# order by the callers (``tests/quick/test_mcv_lookup.py`` holds them equal). Anything else
# (other kinds of values, unsorted or unplaceable bounds) returns None, and the callers take
# the per-value path.

_EXACT = float(2 ** 53)   # whole numbers up to here are exact doubles, compared as Python compares them


class _Mcv:
    """A column's most common values as arrays: ``ordered`` (the values in the order the
    estimate lists them, as doubles), ``values`` (the same as Python objects), ``rows`` (each
    entry's rows), and for lookups ``keys`` (sorted, each value once) with ``key_rows`` (the rows
    of its first entry, as the estimate's dictionary keeps them)."""

    __slots__ = ("ordered", "values", "rows", "keys", "key_rows")

    def __init__(self, values: list[Any], rows: list[float]):
        self.values = values
        self.ordered = np.array(values, dtype=np.float64)
        self.rows = np.array(rows, dtype=np.float64)
        self.keys, first = np.unique(self.ordered, return_index=True)
        self.key_rows = self.rows[first]


def _mcv_arrays(column: ColumnEstimate) -> _Mcv | None:
    """The column's most common values as ``_Mcv``, where every one is a whole number (a Python
    int, exactly a double); kept with its values (``ColumnEstimate.derived``), unscaled."""
    derived = column.derived
    found = derived.get("mcv arrays", _MISSING)
    if found is _MISSING:
        values = [v for v, _ in column.mcv]
        whole = all(type(v) is int and -_EXACT <= v <= _EXACT for v in values)
        found = derived["mcv arrays"] = _Mcv(values, [r for _, r in column.mcv]) if whole else None
    return found


def _placed_segments(column: ColumnEstimate) -> tuple[np.ndarray, ...] | None:
    """(lower, upper, rows, domain, distinct, shared) of the column's segments where they are over
    whole numbers, exact as doubles and in ascending order (the bisection of ``_segment_of``
    assumes it); ``shared`` marks a segment whose lower bound is its predecessor's upper one
    (``stats.model.in_bucket``). Kept with its values; None otherwise (and for no segments)."""
    derived = column.derived
    found = derived.get("placed segments", _MISSING)
    if found is _MISSING:
        found = None
        arrays = _discrete_arrays(column) if column.segments else None
        if arrays is not None:
            lower, upper = arrays[0], arrays[1]
            if bool(np.all(np.abs(lower) <= _EXACT)) and bool(np.all(np.abs(upper) <= _EXACT)) \
                    and bool(np.all(upper[1:] >= upper[:-1])):
                shared = np.zeros(len(lower), dtype=bool)
                shared[1:] = upper[:-1] == lower[1:]
                shared.flags.writeable = False
                found = (*arrays, shared)
        derived["placed segments"] = found
    return found


def _histogram_rows(column: ColumnEstimate, values: np.ndarray) -> np.ndarray | None:
    """``rows_equal`` of each of ``values`` (whole numbers) by the column's live histogram
    alone: the rows of the segment holding it over the segment's domain, 0 outside every
    segment. None where the segments cannot be looked up here."""
    if not column.segments:
        return np.zeros(len(values))
    placed = _placed_segments(column)
    if placed is None:
        return None
    lower, upper, rows, domain, _, shared = placed
    index = np.searchsorted(upper, values, side="left")
    inside = index < len(upper)
    safe = np.minimum(index, len(upper) - 1)
    low = lower[safe]
    inside &= np.where(shared[safe], values > low, values >= low)
    # (live segments hold rows x factor: the product ``live`` makes, then the division)
    return np.where(inside, (rows[safe] * column.factor) / np.maximum(domain[safe], 1.0), 0.0)


def _mcv_hits(mcv: _Mcv, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(whether each of ``values`` is a most common value, the index of its key)."""
    if not len(mcv.keys):
        return np.zeros(len(values), dtype=bool), np.zeros(len(values), dtype=np.intp)
    index = np.searchsorted(mcv.keys, values)
    safe = np.minimum(index, len(mcv.keys) - 1)
    return (index < len(mcv.keys)) & (mcv.keys[safe] == values), safe


def rows_equal_each(column: ColumnEstimate, values: np.ndarray) -> np.ndarray | None:
    """``column.rows_equal(v)`` for each of ``values`` (whole numbers as doubles), or None where
    this cannot answer (see above)."""
    mcv = _mcv_arrays(column)
    if mcv is None:
        return None
    found = _histogram_rows(column, values)
    if found is None:
        return None
    if not len(mcv.keys):
        return found
    hit, key = _mcv_hits(mcv, values)
    return np.where(hit, mcv.key_rows[key] * column.factor, found)


def presence_each(column: ColumnEstimate, values: np.ndarray, whole: bool) -> np.ndarray | None:
    """``presence(v)`` of ``column.live`` for each of ``values`` (whole numbers as doubles), or
    None. ``whole``: the survival test ``presence`` makes of the estimate it is called on (a
    live copy has none pending: True; ``column.survival == 1.0`` for the column itself)."""
    mcv = _mcv_arrays(column)
    if mcv is None:
        return None
    found = np.zeros(len(values))
    if column.segments:
        placed = _placed_segments(column)
        if placed is None:
            return None
        lower, upper, rows, domain, distinct, shared = placed
        if column.survival < 1.0:   # (the live segments' distinct values, thinned as ``live`` thins them)
            distinct = np.array([thinned(s.distinct, s.rows, column.survival) for s in column.segments])
        index = np.searchsorted(upper, values, side="left")
        inside = index < len(upper)
        safe = np.minimum(index, len(upper) - 1)
        low = lower[safe]
        inside &= np.where(shared[safe], values > low, values >= low)
        found = np.where(inside, np.minimum(1.0, distinct[safe] / np.maximum(domain[safe], 1.0)), 0.0)
    hit, key = _mcv_hits(mcv, values)
    if not hit.any():
        return found
    known = mcv.key_rows[key] * column.factor
    result = found.tolist()
    for i in np.flatnonzero(hit).tolist():
        hit_rows = float(known[i])
        # (``_presence``, with math's exp: numpy's may differ in the last bit)
        result[i] = 1.0 if whole and hit_rows >= 1.0 else (1.0 - math.exp(-hit_rows) if hit_rows < 30 else 1.0)
    return np.array(result)


def common_values(columns: Sequence[ColumnEstimate]) -> tuple[np.ndarray, list[Any]] | None:
    """The most common values of all ``columns``, each once, in the order a dictionary filled
    from them member by member keeps (as doubles, and as the objects); None where some
    column's values are not all whole numbers."""
    mcvs: list[_Mcv] = []
    for column in columns:
        found = _mcv_arrays(column)
        if found is None:
            return None
        mcvs.append(found)
    ordered = np.concatenate([m.ordered for m in mcvs])
    if not len(ordered):
        return ordered, []
    _, first = np.unique(ordered, return_index=True)
    first.sort()
    objects = [v for m in mcvs for v in m.values]
    return ordered[first], [objects[i] for i in first.tolist()]


def products_each(columns: Sequence[ColumnEstimate], values: np.ndarray) -> np.ndarray | None:
    """Per value, the product of the columns' ``rows_equal`` in member order, a product that
    reaches 0 staying 0 (the per-value loop stops there); None where a column cannot answer."""
    product: np.ndarray | None = None
    for c in columns:
        rows = rows_equal_each(c, values)
        if rows is None:
            return None
        product = rows if product is None else np.where(product == 0.0, 0.0, product * rows)
    return product


def sum_in_order(values: np.ndarray) -> float:
    """``total += v`` over ``values`` from 0.0, in order (not numpy's pairwise sum)."""
    total = 0.0
    for v in values.tolist():
        total += v
    return total
