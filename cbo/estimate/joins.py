"""Join cardinality: matching two columns' distributions (PostgreSQL's eqjoinsel, extended).

For an equi-join key pair the expected number of matching row pairs is summed in three parts:
* each MCV of either side against the other side's rows of that value (its MCV count, or its
  histogram bucket's rows over the bucket's domain);
* the two histograms aligned on their bucket bounds: in each overlapping range, rows of one
  side times rows of the other over the larger of their domains there (values spread evenly,
  the smaller set of values contained in the larger).
Ranges where only one side has values contribute nothing, so joins of filtered key ranges are
estimated right. Domains (not distinct values present) are compared, so a key/foreign-key join
whose key side was filtered on another column yields |FK side| x the filter's share.

Several key pairs multiply their selectivities (independence), except when the pairs form a
known column group (a composite key or foreign key with a measured distinct count): then one
over the larger group domain. A side whose join columns hold one of its unique keys matches
each row of the other side at most once, which caps the estimate.

Semi and anti joins use the share of probe rows whose value is present on the other side;
outer joins add the unmatched rows of their preserved side, so they are never below it. A semi
or anti join of a table's rows with the same table's rows on one column, asking for *another*
row of the group (``l1.orderkey = l3.orderkey AND l1.suppkey <> l3.suppkey``), is
decided by the sizes of the groups: every probe row finds itself and the ``<>`` rejects it, so
what counts is whether its group holds more rows (``_other_row_share``).
"""

from __future__ import annotations

import math
from collections import ChainMap
from dataclasses import replace

import numpy as np

from cbo.estimate.aggregates import group_sizes
from cbo.estimate.column import ColumnEstimate, Segment
from cbo.estimate.filters import generic_selectivity
from cbo.estimate.matching import (
    _histogram_rows,
    _mcv_arrays,
    _mcv_hits,
    matched_histogram,
    presence_each,
    rows_equal_each,
    segment_bounds,
    sum_in_order,
)
from cbo.estimate.relation import DerivedColumns, Origin, RelEstimate, layered
from cbo.estimate.values import is_discrete, position
from cbo.ir.expressions import TRUE, Call, Column, ColumnRef, Expr, conjuncts
from cbo.ir.operators import Join, Scan, key_columns


def _uniform(notes: list[str] | None, what: str) -> None:
    """Record that a join estimate fell back to the uniform formula (EXPLAIN shows it)."""
    if notes is not None:
        notes.append(f"{what}: join estimated as uniform over distinct values")


def matching_pairs(a: ColumnEstimate, b: ColumnEstimate, notes: list[str] | None = None) -> float:
    """Expected number of (a row, b row) pairs with equal non-NULL values. Where the two value
    distributions cannot be matched (no statistics, or values of kinds that do not compare), the
    uniform formula, with a note in ``notes``."""
    if a.kind is None or b.kind is None:
        _uniform(notes, "a join column without value statistics")
        return a.non_null * b.non_null / max(a.domain, b.domain, 1.0)
    placed = (segment_bounds(a), segment_bounds(b))   # (kept with the columns' values, as live shares them)
    try:
        found = _mcv_pairs(a, b)
        a, b = a.live, b.live
        total = found if found is not None else _mcv_pairs_per_value(a, b)
        # (the parts ``aligned`` would make, computed in place: the same products)
        for sa, fa, sb, fb in overlaps(a.segments, b.segments, placed):
            total += (sa.rows * fa) * (sb.rows * fb) / max(sa.domain * fa, sb.domain * fb, 1.0)
        return total
    except TypeError:
        _uniform(notes, f"join columns of kinds {a.kind} and {b.kind} whose values do not compare")
        return a.non_null * b.non_null / max(a.domain, b.domain, 1.0)


def matched_rows(a: ColumnEstimate, b: ColumnEstimate, notes: list[str] | None = None) -> float:
    """Expected rows of ``a``'s side whose value occurs in ``b`` (the uniform formula, noted,
    where the distributions cannot be matched)."""
    if a.kind is None or b.kind is None:
        _uniform(notes, "a join column without value statistics")
        return a.non_null * min(1.0, b.distinct / max(a.domain, b.domain, 1.0))
    try:
        total = 0.0
        if a.mcv or b.mcv:   # (whole-number histograms alone need neither side live)
            found = _mcv_matched(a, b)
            total = found if found is not None else _mcv_matched_per_value(a.live, b.live)
        fast = matched_histogram(a, b)
        if fast is not None:
            total += fast
        else:
            a_live, b_live = a.live, b.live
            for sa, sb in aligned(a_live.segments, b_live.segments, (segment_bounds(a), segment_bounds(b))):
                total += sa.rows * min(1.0, sb.distinct / max(sa.domain, sb.domain, 1.0))
        # (the sums ``live`` would give, pending or not: ``non_null``)
        return min(total, a.non_null)
    except TypeError:
        _uniform(notes, f"join columns of kinds {a.kind} and {b.kind} whose values do not compare")
        return a.non_null * min(1.0, b.distinct / max(a.domain, b.domain, 1.0))


def _mcv_pairs_per_value(a: ColumnEstimate, b: ColumnEstimate) -> float:
    """The most-common-value part of ``matching_pairs`` of two live columns, value by value:
    ``a``'s values in ``b``, then ``b``'s other values in ``a``'s histogram."""
    total = 0.0
    a_mcv = {v for v, _ in a.mcv}
    for v, rows in a.mcv:
        total += rows * b.rows_equal(v)
    histogram = _without_mcv(a)   # once, not per value
    for v, rows in b.mcv:
        if v not in a_mcv:
            total += rows * histogram.rows_equal(v)
    return total


def _mcv_matched_per_value(a: ColumnEstimate, b: ColumnEstimate) -> float:
    """The most-common-value part of ``matched_rows`` of two live columns, value by value."""
    total = 0.0
    a_mcv = {v for v, _ in a.mcv}
    for v, rows in a.mcv:
        total += rows * b.presence(v)
    histogram = _without_mcv(a)   # once, not per value
    for v, _ in b.mcv:
        if v not in a_mcv:
            total += histogram.rows_equal(v) * b.presence(v)
    return total


def _mcv_pairs(a: ColumnEstimate, b: ColumnEstimate) -> float | None:
    """The most-common-value part of ``matching_pairs``, each side's values looked up in the
    other at once (``matching.rows_equal_each``): ``a``'s values in ``b``, then ``b``'s other
    values in ``a``'s histogram, summed in that order; None where those lookups cannot answer."""
    mcv_a, mcv_b = _mcv_arrays(a), _mcv_arrays(b)
    if mcv_a is None or mcv_b is None:
        return None
    in_b = rows_equal_each(b, mcv_a.ordered)
    in_a = _histogram_rows(a, mcv_b.ordered)
    if in_b is None or in_a is None:
        return None
    others = ~_mcv_hits(mcv_a, mcv_b.ordered)[0]
    return sum_in_order(np.concatenate([(mcv_a.rows * a.factor) * in_b,
                                        ((mcv_b.rows * b.factor) * in_a)[others]]))


def _mcv_matched(a: ColumnEstimate, b: ColumnEstimate) -> float | None:
    """The most-common-value part of ``matched_rows``, as ``_mcv_pairs`` computes its own."""
    mcv_a, mcv_b = _mcv_arrays(a), _mcv_arrays(b)
    if mcv_a is None or mcv_b is None:
        return None
    # (``presence`` of ``b``'s live copy: no survival pending there)
    seen = presence_each(b, mcv_a.ordered, True)
    others = mcv_b.ordered[~_mcv_hits(mcv_a, mcv_b.ordered)[0]]
    in_a = _histogram_rows(a, others)
    seen_others = presence_each(b, others, True)
    if seen is None or in_a is None or seen_others is None:
        return None
    return sum_in_order(np.concatenate([(mcv_a.rows * a.factor) * seen, in_a * seen_others]))


def _without_mcv(estimate: ColumnEstimate) -> ColumnEstimate:
    """The column's histogram alone (its values that are not most common)."""
    return replace(estimate.live, mcv=())


# The positions of two segment lists' bounds (``matching.segment_bounds``), where known.
Placed = tuple[list[tuple[float, float]] | None, list[tuple[float, float]] | None]


def aligned(left: tuple[Segment, ...], right: tuple[Segment, ...], placed: Placed | None = None):
    """Pairs of the overlapping parts of two sorted, non-overlapping segment lists."""
    for sa, fa, sb, fb in overlaps(left, right, placed):
        yield sa.part(fa), sb.part(fb)


def overlaps(left: tuple[Segment, ...], right: tuple[Segment, ...], placed: Placed | None = None):
    """``aligned``'s pairs as (segment, share, segment, share): each part is its segment's
    ``part(share)``. ``placed``: the two lists' bounds as ``segment_bounds`` keeps them."""
    if not left or not right:
        return
    if left[0].lower is None or right[0].lower is None:
        yield _whole(left), 1.0, _whole(right), 1.0
        return
    a_pos, b_pos = (_positions(left), _positions(right)) if placed is None else placed
    if a_pos is None or b_pos is None:
        raise TypeError("values cannot be placed")
    discrete = _discrete(left) and _discrete(right)
    i = j = 0
    while i < len(left) and j < len(right):
        (a_lo, a_hi), (b_lo, b_hi) = a_pos[i], b_pos[j]
        low = a_lo if a_lo >= b_lo else b_lo
        high = a_hi if a_hi <= b_hi else b_hi
        if low <= high:
            fa = _share(a_lo, a_hi, low, high, discrete)
            fb = _share(b_lo, b_hi, low, high, discrete)
            if fa > 0 and fb > 0:
                yield left[i], fa, right[j], fb
        if a_hi < b_hi:
            i += 1
        elif b_hi < a_hi:
            j += 1
        else:
            i += 1
            j += 1


def _share(lo: float, hi: float, low: float, high: float, discrete: bool) -> float:
    if discrete:
        return (high - low + 1.0) / (hi - lo + 1.0)
    if hi <= lo:
        return 1.0
    return (high - low) / (hi - lo)


def _positions(segments: tuple[Segment, ...]) -> list[tuple[float, float]] | None:
    placed = []
    for s in segments:
        lo, hi = position(s.lower), position(s.upper)
        if lo is None or hi is None:
            return None
        placed.append((lo, hi))
    return placed


def _discrete(segments: tuple[Segment, ...]) -> bool:
    first, last = segments[0], segments[-1]
    return is_discrete(first.lower, first.upper) and is_discrete(last.lower, last.upper)


def _whole(segments: tuple[Segment, ...]) -> Segment:
    return Segment(None, None, sum(s.rows for s in segments), sum(s.distinct for s in segments),
                   sum(s.domain for s in segments))


# ------------------------------------------------------------------------------------------------


def estimate_join(node: Join, left: RelEstimate, right: RelEstimate, matched: float | None = None) -> RelEstimate:
    """The join of two estimates. ``matched``: an outer join's matched rows as estimated
    elsewhere (the inner join of its sides as a set, whatever order built them); its unmatched
    rows are still the preserved side's rows that find no match here."""
    pairs = node.equi_keys
    paired = {frozenset(p) for p in pairs}
    residual = [c for c in conjuncts(node.condition)
                if not ((pair := key_columns(c)) is not None and frozenset(pair) in paired)]
    combined: ChainMap[Column, ColumnEstimate] = layered({}, left.columns, right.columns)
    residual_share, notes = 1.0, []
    for conjunct in residual:
        share, note = generic_selectivity(conjunct, combined, max(left.rows, right.rows))
        residual_share *= share
        if note:
            notes.append(note)
    L, R = left.rows, right.rows
    # An outer join's matched rows estimated elsewhere replace the binary estimate of the inner
    # join below, which is then read only to spread a residual condition over the matched rows.
    given = matched if node.kind in ("left", "right", "full") else None
    if pairs and L > 0 and R > 0:
        if given is not None and residual_share == 1.0:
            inner = given   # (not estimated only to be replaced)
        else:
            corrected = sampled_selectivity(left.origins.get(pairs[0][0]), right.origins.get(pairs[0][1])) \
                if len(pairs) == 1 else None
            selectivity = corrected if corrected is not None else _key_selectivity(pairs, left, right, notes)
            inner = L * R * selectivity
            if any(k <= {b for _, b in pairs} for k in node.right.unique_keys):
                inner = min(inner, L)
            if any(k <= {a for a, _ in pairs} for k in node.left.unique_keys):
                inner = min(inner, R)
        needs_left = node.kind in ("semi", "anti", "null_aware_anti", "mark", "left", "full")
        needs_right = node.kind in ("right", "full")
        left_share = min(min(matched_rows(left.column(a), right.column(b), notes) for a, b in pairs) / L, 1.0) \
            if needs_left else 1.0
        right_share = min(min(matched_rows(right.column(b), left.column(a), notes) for a, b in pairs) / R, 1.0) \
            if needs_right else 1.0
    else:
        inner = L * R
        left_share = 1.0 if R >= 1 else R
        right_share = 1.0 if L >= 1 else L
    inner *= residual_share
    if residual_share < 1.0:
        left_share = _with_residual(left_share, inner, L, residual_share)
        right_share = _with_residual(right_share, inner, R, residual_share)
    if node.kind in ("semi", "anti") and len(pairs) == 1 and residual and L > 0 and R > 0:
        found = _other_row_share(pairs[0], residual, left, right, residual_share)
        if found is not None:
            left_share = found

    if given is not None:
        inner = given
    kind = node.kind
    if kind == "null_aware_anti":
        return _null_aware_anti(node, left, right, left_share, notes)
    if kind in ("semi", "anti", "mark"):
        share = left_share if kind == "semi" else (1.0 - left_share if kind == "anti" else 1.0)
        rows = L * share
        overrides = {}
        if kind == "semi":
            for a, b in pairs:
                if a in left.columns:
                    overrides[a] = left.columns[a].scaled(share).narrowed_to(right.column(b).distinct)
        if kind == "mark" and node.mark is not None:
            overrides[node.mark] = _mark_estimate(node, rows, left_share)
        columns = DerivedColumns(left.columns, lambda c, e: e.scaled(share), overrides)
        return RelEstimate(rows, columns, left.groups, left.origins, None, left.notes | frozenset(notes))

    unmatched_left = L * (1.0 - left_share) if kind in ("left", "full") else 0.0
    unmatched_right = R * (1.0 - right_share) if kind in ("right", "full") else 0.0
    rows = inner + unmatched_left + unmatched_right
    # An outer join keeps every row of its preserved side: never estimate fewer.
    if kind in ("left", "full"):
        rows = max(rows, L)
    if kind in ("right", "full"):
        rows = max(rows, R)
    left_factor = (inner + unmatched_left) / L if L > 0 else 1.0
    right_factor = (inner + unmatched_right) / R if R > 0 else 1.0

    # Key columns keep only the values the other side has (the intersection of domains).
    narrow = {}
    if kind in ("inner", "right"):
        narrow.update({a: (right, b) for a, b in pairs})
    if kind in ("inner", "left"):
        narrow.update({b: (left, a) for a, b in pairs})

    def derive(c: Column, e: ColumnEstimate) -> ColumnEstimate:
        if c in left.columns:
            e = _plus_nulls(e.scaled(left_factor), unmatched_right)
        else:
            e = _plus_nulls(e.scaled(right_factor), unmatched_left)
        if c in narrow:
            other, partner = narrow[c]
            e = e.narrowed_to(other.column(partner).domain)
        return e

    columns = DerivedColumns(layered(dict(), left.columns, right.columns), derive)
    groups = {**left.groups, **right.groups}
    origins = {**left.origins, **right.origins}
    return RelEstimate(rows, columns, groups, origins, None, left.notes | right.notes | frozenset(notes))


def sampled_selectivity(a: Origin | None, b: Origin | None) -> float | None:
    """Selectivity of ``a = b`` from the columns' unfiltered statistics, corrected by the samples.

    Filters on either table may be correlated with the join: answers (PostgreSQL type 2) are
    never a tag's excerpt, busy users both pass a reputation filter and own many posts. The two
    tables' samples measure it: ``pp`` matching pairs among the rows that pass their filters,
    ``aa`` among all sampled rows. Under independence ``pp`` would be ``aa * sa * sb`` (the
    shares passing); their ratio corrects the unfiltered selectivity. It is used only when
    ``aa`` is large enough to mean something and ``pp`` departs from its expectation by more
    than two standard deviations (Poisson), so independent filters keep the statistics' estimate.
    """
    if a is None or b is None or a.sample is None or b.sample is None or a.base is None or b.base is None \
            or a.name is None or b.name is None or a.base_rows <= 0 or b.base_rows <= 0:
        return None
    found_a, found_b = a.sample.sample.column(a.name), b.sample.sample.column(b.name)
    if found_a is None or found_b is None:
        return None
    (values_a, nulls_a), (values_b, nulls_b) = found_a, found_b
    if values_a.dtype != values_b.dtype:
        return None
    mask_a = a.sample.mask if a.sample.mask is not None else np.ones(len(values_a), dtype=bool)
    mask_b = b.sample.mask if b.sample.mask is not None else np.ones(len(values_b), dtype=bool)
    index = _pair_index(a, b, values_a, nulls_a, values_b, nulls_b)
    if index.all_pairs < MIN_SAMPLE_PAIRS:
        return None
    passing_pairs = index.passing(mask_a, mask_b)
    expected = index.all_pairs * (mask_a.sum() / len(mask_a)) * (mask_b.sum() / len(mask_b))
    base = _base_selectivity(a, b)
    if abs(passing_pairs - expected) <= 2.0 * math.sqrt(max(expected, 1.0)):
        return base * (1.0 if expected > 0 else 0.0)
    return base * max(passing_pairs, 0.5) / max(expected, 1e-9)


MIN_SAMPLE_PAIRS = 30


def _base_selectivity(a: Origin, b: Origin) -> float:
    """Selectivity of the two unfiltered columns (their statistics): kept on ``a``'s sample by
    the columns' tables and names."""
    assert a.base is not None and b.base is not None and a.sample is not None and b.sample is not None
    base_a, base_b = a.base, b.base
    return a.sample.sample.kept(("base selectivity", a.name, b.sample.sample.table, b.name),
                                lambda: matching_pairs(base_a, base_b) / (a.base_rows * b.base_rows))


class _PairIndex:
    """Which sampled values of ``a`` equal which of ``b``: built once per column pair, then any
    two masks (the rows passing each side's filters) count their matching pairs in O(n)."""

    def __init__(self, values_a: np.ndarray, nulls_a: np.ndarray, values_b: np.ndarray, nulls_b: np.ndarray):
        keys, inverse = np.unique(values_b[~nulls_b], return_inverse=True)
        self.size = len(keys)
        self.b_valid = ~nulls_b
        self.b_group = np.full(len(values_b), -1, dtype=np.int64)
        self.b_group[~nulls_b] = inverse
        where = np.clip(np.searchsorted(keys, values_a), 0, max(len(keys) - 1, 0)) if len(keys) else \
            np.zeros(len(values_a), dtype=np.int64)
        self.a_hit = ~nulls_a & (keys[where] == values_a) if len(keys) else np.zeros(len(values_a), dtype=bool)
        self.a_group = where
        counts = np.bincount(inverse, minlength=self.size) if self.size else np.zeros(0)
        self.all_pairs = int(counts[self.a_group[self.a_hit]].sum()) if self.size else 0

    def passing(self, mask_a: np.ndarray, mask_b: np.ndarray) -> int:
        if not self.size:
            return 0
        keep_b = self.b_valid & mask_b
        counts = np.bincount(self.b_group[keep_b], minlength=self.size)
        return int(counts[self.a_group[self.a_hit & mask_a]].sum())


def _pair_index(a: Origin, b: Origin, values_a: np.ndarray, nulls_a: np.ndarray, values_b: np.ndarray,
                nulls_b: np.ndarray) -> _PairIndex:
    """The columns' ``_PairIndex``, kept on ``a``'s sample by the columns' tables and names."""
    assert a.sample is not None and b.sample is not None
    return a.sample.sample.kept(("pair index", a.name or "", b.sample.sample.table, b.name or ""),
                                lambda: _PairIndex(values_a, nulls_a, values_b, nulls_b))


def _key_selectivity(pairs: tuple[tuple[Column, Column], ...], left: RelEstimate, right: RelEstimate,
                     notes: list[str] | None = None) -> float:
    L, R = left.rows, right.rows
    shares = sorted(matching_pairs(left.column(a), right.column(b), notes) / (L * R) for a, b in pairs)
    product = 1.0
    for s in shares:
        product *= s
    if len(pairs) > 1:
        left_group = left.groups.get(frozenset(a for a, _ in pairs))
        right_group = right.groups.get(frozenset(b for _, b in pairs))
        if left_group or right_group:
            non_null = 1.0
            for a, b in pairs:
                non_null *= (1.0 - left.column(a).null_fraction) * (1.0 - right.column(b).null_fraction)
            return non_null / max(left_group or 0.0, right_group or 0.0, 1.0)
    return product


def _other_row_share(pair: tuple[Column, Column], residual: list[Expr], left: RelEstimate, right: RelEstimate,
                     residual_share: float) -> float | None:
    """Share of the probe rows with another row of their group, for ``a = b AND x <> y`` where
    ``a, b`` and ``x, y`` are each one column of one table, the probe rows are rows of the build
    side (its sample's rows passing the probe's filters pass the build's: every probe row
    matches itself), and ``x <> y`` is the only residual. Each probe row sits in a group of
    ``n`` build rows (the sizes of ``aggregates.group_sizes``, a row as likely in any row's
    group); itself excluded by the ``<>``, it has another row when one of the ``n - 1`` others
    passes the residual (each with its selectivity). None where the shape does not hold."""
    a, b = pair
    if not (_same_column(left.origins.get(a), right.origins.get(b))):
        return None
    origin_a, origin_b = left.origins[a], right.origins[b]
    if origin_b.unique:
        return None
    for conjunct in residual:
        if not (isinstance(conjunct, Call) and conjunct.name == "neq" and len(conjunct.args) == 2):
            return None
        first, second = conjunct.args
        if not (isinstance(first, ColumnRef) and isinstance(second, ColumnRef)):
            return None
        x, y = first.column, second.column
        if x in right.origins and y in left.origins:
            x, y = y, x
        if not _same_column(left.origins.get(x), right.origins.get(y)) \
                or left.origins[x].scan != origin_a.scan or right.origins[y].scan != origin_b.scan:
            return None
    view_a, view_b = origin_a.sample, origin_b.sample
    if view_a is None or view_b is None or view_a.sample is not view_b.sample:
        return None
    if view_b.mask is not None and (view_a.mask is None or bool(np.any(view_a.mask & ~view_b.mask))):
        return None
    key = right.column(b)
    groups = max(key.distinct, 1.0)
    sizes = group_sizes(replace(right, rows=key.non_null), (b,), groups)
    weight = sum(share * n for share, n in sizes)
    if weight <= 0:
        return None
    alone = sum(share * n * (1.0 - residual_share) ** max(n - 1.0, 0.0) for share, n in sizes) / weight
    present = 1.0 - left.column(a).null_fraction
    return present * (1.0 - alone)


def _same_column(x: Origin | None, y: Origin | None) -> bool:
    """Two plan columns that read the same column of the same table."""
    return x is not None and y is not None and isinstance(x.scan, Scan) and isinstance(y.scan, Scan) \
        and x.scan.table == y.scan.table and x.name is not None and x.name == y.name


def _with_residual(share: float, inner: float, rows: float, residual: float) -> float:
    """Share of rows with a match that also passes the residual condition."""
    if share <= 0 or rows <= 0:
        return share
    if residual <= 0:      # a residual nothing passes (e.g. estimated over an empty input)
        return 0.0
    per_row = inner / residual / (rows * share)     # matches per matched row before the residual
    return share * (1.0 - (1.0 - residual) ** max(per_row, 1.0))


def _plus_nulls(estimate: ColumnEstimate, nulls: float) -> ColumnEstimate:
    return replace(estimate, nulls=estimate.nulls + nulls)


def _null_aware_anti(node: Join, left: RelEstimate, right: RelEstimate, left_share: float,
                     notes: list[str]) -> RelEstimate:
    """``x NOT IN (SELECT y ...)``: the anti join's rows, less the rows whose x is NULL (dropped
    unless the subquery is empty), times the chance that no y is NULL (one NULL empties the
    answer). That chance is taken as 1 - (expected NULL rows of y), so a y estimated to have a
    NULL row or more gives no rows at all."""
    L, R = left.rows, right.rows
    rows = L * (1.0 - left_share)
    pairs = node.equi_keys
    if pairs and R > 0:
        x, y = pairs[0]
        rows = max(rows - left.column(x).nulls * min(R, 1.0), 0.0)
        y_nulls = 0.0 if y in node.right.not_null else min(right.column(y).nulls, R)
        if y_nulls > 0:
            survives = max(0.0, 1.0 - y_nulls)
            rows *= survives
            notes.append(f"NOT IN: {y} may be NULL (about {y_nulls:.3g} rows): "
                         + ("estimated empty" if survives == 0 else f"kept with chance {survives:.2f}"))
    share = rows / L if L > 0 else 1.0
    columns = DerivedColumns(left.columns, lambda c, e: e.scaled(share), {})
    return RelEstimate(rows, columns, left.groups, left.origins, None, left.notes | frozenset(notes))


def _mark_estimate(node: Join, rows: float, matched_share: float) -> ColumnEstimate:
    """A mark join's mark. With a TRUE mark predicate (EXISTS, or an IN made two-valued) the
    mark is TRUE on the rows a semi join on the condition keeps and FALSE on the others, never
    NULL; an IN's three-valued mark also depends on NULLs among the values and stays unknown."""
    if node.mark_predicate is not None and node.mark_predicate != TRUE:
        return ColumnEstimate.unknown(rows, 2.0, 1.0)
    share = min(max(matched_share, 0.0), 1.0)
    counts = ((True, rows * share), (False, rows * (1.0 - share)))
    return ColumnEstimate("boolean", 0.0, tuple((v, r) for v, r in counts if r > 0), (), 1.0)
