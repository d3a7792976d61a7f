"""What the estimator knows about one column of an intermediate result.

A :class:`ColumnEstimate` is a column's distribution in absolute rows: the most common values
with their row counts, and histogram segments with their rows, the distinct values present
(``distinct``) and the values that may occur (``domain``). The two differ after a filter on
another column: it removes rows and so some values, but not the range of values a row may
take, and joins on a key/foreign key pair must compare domains (a filtered customer table
still draws its keys from all customer keys). A filter on the column itself narrows both.

Operations return new estimates: ``scaled`` (other columns filtered, or rows multiplied by a
join), ``restricted`` (a predicate on this column), ``rows_equal`` (rows holding a value).
"""

from __future__ import annotations

import bisect
import datetime as dt
import decimal
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Literal, NamedTuple

from cbo.estimate.values import fraction_within, is_discrete, position
from stats.model import ColumnStats, in_bucket


class Segment(NamedTuple):
    """A histogram range's rows, distinct values present and values that may occur. A named
    tuple, not a frozen dataclass: filters, joins and ``live`` make thousands per query, and a
    frozen dataclass's constructor sets each field through ``object.__setattr__``."""
    lower: Any
    upper: Any
    rows: float
    distinct: float
    domain: float

    def part(self, share: float) -> Segment:
        return Segment(self.lower, self.upper, self.rows * share, self.distinct * share, self.domain * share)


@dataclass(frozen=True)
class ColumnEstimate:
    kind: str | None                      # None: nothing known (a computed column or missing statistics)
    nulls: float
    mcv: tuple[tuple[Any, float], ...]    # (value, rows)
    segments: tuple[Segment, ...]
    width: float = 8.0
    default: bool = False                 # rests on defaults rather than statistics
    # Scaling is recorded, not applied, until someone looks at the values (``live``): most
    # columns pass many joins and filters without being read. ``nulls`` is always current.
    factor: float = 1.0                   # rows multiplied by
    survival: float = 1.0                 # share of rows kept by filters on other columns

    @cached_property
    def live(self) -> ColumnEstimate:
        """The same estimate with its pending scaling applied to MCVs and segments."""
        if self.factor == 1.0 and self.survival == 1.0:
            return self
        f, keep = self.factor, self.survival
        mcv = tuple((v, r * f) for v, r in self.mcv)
        segments = tuple(Segment(s.lower, s.upper, s.rows * f, thinned(s.distinct, s.rows, keep), s.domain)
                         for s in self.segments)
        return ColumnEstimate(self.kind, self.nulls, mcv, segments, self.width, self.default)

    @cached_property
    def derived(self) -> dict[str, Any]:
        """What derives from this estimate's MCVs and segments alone (their positions on a
        line, the segments as arrays), kept for every estimate sharing the two objects:
        ``scaled`` hands the same dictionary to its copies, so a table's column and all its
        copies through filters and joins compute each once, and it goes with the last of them."""
        return {}

    # -- summaries -------------------------------------------------------------------------------

    @cached_property
    def non_null(self) -> float:
        if self._pending:
            # the sums ``live`` would give, without building its MCVs and segments
            f = self.factor
            return sum(r * f for _, r in self.mcv) + sum(s.rows * f for s in self.segments)
        live = self.live
        return sum(r for _, r in live.mcv) + sum(s.rows for s in live.segments)

    @property
    def _pending(self) -> bool:
        """Whether scaling is pending and ``live`` has not applied it yet."""
        return (self.factor != 1.0 or self.survival != 1.0) and "live" not in self.__dict__

    @property
    def rows(self) -> float:
        return self.non_null + self.nulls

    @cached_property
    def distinct(self) -> float:
        """Distinct non-NULL values present."""
        if self._pending:
            f, keep = self.factor, self.survival
            return sum(_presence(r * f) for _, r in self.mcv) + \
                sum(thinned(s.distinct, s.rows, keep) for s in self.segments)
        live = self.live
        return sum(_presence(r) for _, r in live.mcv) + sum(s.distinct for s in live.segments)

    @cached_property
    def domain(self) -> float:
        return len(self.mcv) + sum(s.domain for s in self.segments)

    @property
    def null_fraction(self) -> float:
        total = self.rows
        return self.nulls / total if total > 0 else 0.0

    # -- construction ----------------------------------------------------------------------------

    @staticmethod
    def from_stats(stats: ColumnStats, rows: float) -> ColumnEstimate:
        mcv = tuple((v, f * rows) for v, f in stats.mcv)
        segments = tuple(Segment(b.lower, b.upper, b.rows, b.distinct, b.distinct) for b in stats.histogram)
        rest = max(stats.distinct - len(mcv), 0.0)
        if not segments and rest >= 1 and stats.min is not None:
            # No histogram (e.g. all values were MCVs in the sample): one segment over the range.
            leftover = max(rows * (1 - stats.null_fraction) - sum(r for _, r in mcv), 0.0)
            if leftover > 0:
                segments = (Segment(stats.min, stats.max, leftover, rest, rest),)
        return ColumnEstimate(stats.kind, stats.null_fraction * rows, mcv, segments,
                              max(stats.avg_width, 1.0))

    @staticmethod
    def unknown(rows: float, distinct: float | None = None, width: float = 8.0) -> ColumnEstimate:
        d = max(min(distinct if distinct is not None else rows, rows), 1.0 if rows > 0 else 0.0)
        return ColumnEstimate(None, 0.0, (), (Segment(None, None, rows, d, d),) if rows > 0 else (), width, True)

    @staticmethod
    def of_values(values: list[Any], width: float = 8.0) -> ColumnEstimate:
        counts: dict[Any, float] = {}
        nulls = 0.0
        for v in values:
            if v is None:
                nulls += 1
            else:
                if isinstance(v, decimal.Decimal):
                    v = float(v)    # numbers as the statistics hold them (and constants meet them)
                counts[v] = counts.get(v, 0.0) + 1
        kind = None
        if counts:
            sample = next(iter(counts))
            kind = "string" if isinstance(sample, str) else "number"
        return ColumnEstimate(kind, nulls, tuple(counts.items()), (), width)

    # -- transformations -------------------------------------------------------------------------

    def scaled(self, factor: float) -> ColumnEstimate:
        """Rows multiplied by ``factor``: below 1 a filter on other columns (values thin out
        independently), above 1 a join that repeats rows (no new values)."""
        if factor == 1.0:
            return self
        # (the constructor, not ``dataclasses.replace``: every column of every filter and join
        # is scaled, and ``replace`` reads the fields' list each time)
        copy = ColumnEstimate(self.kind, self.nulls * factor, self.mcv, self.segments, self.width, self.default,
                              self.factor * factor, self.survival * min(factor, 1.0))
        # (the same MCVs and segments: the same ``derived``, read without the property's lock)
        derived = self.__dict__.get("derived")
        if derived is None:
            derived = self.__dict__["derived"] = {}
        copy.__dict__["derived"] = derived
        return copy

    def kept_whole(self, share: float) -> ColumnEstimate:
        """``share`` of the rows kept by a filter on columns this one determines
        (``dependence``): each value's rows are kept or dropped together, so the distinct
        values thin in proportion to the rows, not as rows surviving one by one would thin
        them (``thinned``)."""
        if share >= 1.0:
            return self
        live = self.live
        mcv = tuple((v, r * share) for v, r in live.mcv)
        segments = tuple(Segment(s.lower, s.upper, s.rows * share, s.distinct * share, s.domain)
                         for s in live.segments)
        return ColumnEstimate(live.kind, live.nulls * share, mcv, segments, live.width, live.default)

    def with_rows(self, rows: float) -> ColumnEstimate:
        current = self.rows
        if current <= 0:
            return ColumnEstimate.unknown(rows, width=self.width) if rows > 0 else self
        return self.scaled(rows / current)

    def _segment_of(self, value: Any) -> tuple[bool, Segment | None]:
        """(True, the segment holding ``value`` or None if none does), found by bisection over
        the segments' upper bounds: joins ask this for every most common value of the other
        side. (False, None) when bisection cannot answer (unbounded segments, values that do not
        compare), and the callers scan instead."""
        segments = self.segments
        uppers = self.__dict__.get("_uppers", False)
        if uppers is False:   # once per estimate: None when bisection cannot be used
            uppers = None if not segments or any(s.lower is None for s in segments) else [s.upper for s in segments]
            object.__setattr__(self, "_uppers", uppers)
        if uppers is None or not self.comparable(value):
            return False, None
        index = bisect.bisect_left(uppers, value)
        if index < len(segments) and _in_segment(value, segments, index):
            return True, segments[index]
        return True, None

    def comparable(self, value: Any) -> bool:
        """Whether ``value`` compares with the histogram's bounds (a string against numeric
        bounds does not), so that a segment can be found for it. Where it does not,
        ``rows_equal`` and ``presence`` assume the first segment's average (a default: the
        filter estimate notes it, see ``cbo.estimate.filters.restrict``)."""
        bounded = [s for s in (self.segments[0], self.segments[-1]) if s.lower is not None] if self.segments else []
        try:
            for s in bounded:
                bool(value < s.lower) or bool(value > s.upper)
        except TypeError:
            return False
        return True

    def _first_average(self, distinct: bool) -> float:
        """The first segment's rows (or presence) per value: what a value that cannot be placed
        in the histogram is assumed to hold."""
        s = self.segments[0]
        return min(1.0, s.distinct / max(s.domain, 1.0)) if distinct else s.rows / max(s.domain, 1.0)

    def _mcv_rows(self, value: Any) -> float | None:
        """The rows of ``value`` if it is a most common value, else None: a dictionary lookup
        built once per estimate (joins ask it for every MCV of the other side), a scan where
        values do not hash."""
        index: dict[Any, float] | None | Literal[False] = self.__dict__.get("_mcv_index", False)
        if index is False:
            index = {}
            try:
                for v, r in self.mcv:
                    index.setdefault(v, r)
            except TypeError:
                index = None    # values that do not hash: scan
            object.__setattr__(self, "_mcv_index", index)
        if index is not None:
            try:
                return index.get(value)
            except TypeError:
                pass
        for v, r in self.mcv:
            if _same(v, value):
                return r
        return None

    def rows_equal(self, value: Any) -> float:
        """Expected rows holding ``value``."""
        self = self.live
        if value is None:
            return 0.0
        known = self._mcv_rows(value)
        if known is not None:
            return known
        placed, found = self._segment_of(value)
        if placed:
            return 0.0 if found is None else found.rows / max(found.domain, 1.0)
        segments = self.segments
        if segments and not self.comparable(value):
            return self._first_average(distinct=False)
        for i, s in enumerate(segments):
            if s.lower is None or _in_segment(value, segments, i):
                return s.rows / max(s.domain, 1.0)
        return 0.0

    def presence(self, value: Any) -> float:
        """Probability that ``value`` occurs at least once."""
        whole = self.survival == 1.0
        self = self.live
        known = self._mcv_rows(value)
        if known is not None:
            # A most common value of the statistics occurs in the table: only filters on other
            # columns (survival below 1) make its occurrence a chance, a Poisson one over the
            # rows expected to remain. (Read as a chance even unfiltered, every value of a
            # 25-row table, one row each, would occur with probability 1 - 1/e, and a foreign
            # key to it would find its match for 63% of its rows.)
            return 1.0 if whole and known >= 1.0 else _presence(known)
        placed, found = self._segment_of(value)
        if placed:
            return 0.0 if found is None else min(1.0, found.distinct / max(found.domain, 1.0))
        if self.segments and not self.comparable(value):
            return self._first_average(distinct=True)
        for i, s in enumerate(self.segments):
            if s.lower is None or _in_segment(value, self.segments, i):
                return min(1.0, s.distinct / max(s.domain, 1.0))
        return 0.0

    def equal_to(self, value: Any) -> ColumnEstimate:
        rows = self.rows_equal(value)
        return ColumnEstimate(self.kind, 0.0, ((value, rows),) if rows > 0 else (), (), self.width, self.default)

    def in_values(self, values: list[Any]) -> ColumnEstimate:
        unique: dict[Any, None] = {}
        for v in values:
            if v is not None:
                unique[v] = None
        mcv = tuple((v, r) for v in unique if (r := self.rows_equal(v)) > 0)
        return ColumnEstimate(self.kind, 0.0, mcv, (), self.width, self.default)

    def not_equal_to(self, value: Any) -> ColumnEstimate:
        self = self.live
        mcv = tuple((v, r) for v, r in self.mcv if not _same(v, value))
        removed = 0.0 if len(mcv) < len(self.mcv) else self.rows_equal(value)
        segments = self.segments
        if removed > 0:
            segments = tuple(_without_one_value(s) if s.lower is None or _safe_in(value, self.segments, i) else s
                             for i, s in enumerate(self.segments))
        return replace(self, nulls=0.0, mcv=mcv, segments=segments)

    def in_range(self, low: Any, high: Any, low_inclusive: bool = True,
                 high_inclusive: bool = True) -> ColumnEstimate | None:
        """Rows with low <(=) value <(=) high (None: unbounded); None when the values cannot be placed."""
        self = self.live
        mcv = []
        for v, r in self.mcv:
            try:
                if _within(v, low, high, low_inclusive, high_inclusive):
                    mcv.append((v, r))
            except TypeError:
                return None
        # Segments wholly outside the range are skipped here, by the tests ``fraction_within``
        # makes first (it would say 0), in its order; that needs its test of the range itself
        # not to raise (it does not where a bound is None, as for every comparison).
        try:
            skip = low is None or high is None or \
                not (low > high or (low == high and not (low_inclusive and high_inclusive)))
        except TypeError:
            skip = False
        segments = []
        try:
            first, last = self._outside(low, high, low_inclusive, high_inclusive) if skip else (0, len(self.segments))
        except TypeError:   # values of one type that do not compare (a naive and an aware
            return None     # timestamp): None, as the loop's first comparison would give
        for s in self.segments[first:last]:
            lower, upper = s.lower, s.upper
            try:
                inside = (low is None or lower > low) and (high is None or upper < high)
                if not inside and skip and lower is not None and upper is not None and \
                        ((low is not None and (upper < low or (upper == low and not low_inclusive)))
                         or (high is not None and (lower > high or (lower == high and not high_inclusive)))):
                    continue   # wholly outside
            except TypeError:
                return None
            if inside:   # wholly within the range: no interpolation needed
                segments.append(s)
                continue
            share = fraction_within(lower, upper, low, high, low_inclusive, high_inclusive)
            if share is None:
                return None
            if share > 0:
                # The part's values lie within the range too: an inclusive bound inside the
                # segment becomes its bound (``x BETWEEN 2051 AND 2051`` keeps a segment of
                # one value, which a join with ``y = 5`` no longer overlaps, and a second
                # range on the column interpolates within what the first kept).
                part = s.part(share)
                if low_inclusive and low is not None and lower is not None and low > lower:
                    part = part._replace(lower=low)
                if high_inclusive and high is not None and upper is not None and high < upper:
                    part = part._replace(upper=high)
                segments.append(part)
        return ColumnEstimate(self.kind, 0.0, tuple(mcv), tuple(segments), self.width, self.default,
                              self.factor, self.survival)

    def _outside(self, low: Any, high: Any, low_inclusive: bool, high_inclusive: bool) -> tuple[int, int]:
        """``(first, last)``: the segments before ``first`` and from ``last`` on are wholly
        outside the range, as ``in_range``'s loop would find (and skip) one by one; found by
        bisection where every bound has the range's own type and the segments are in order
        (``_ordered_bounds``), else ``(0, len(segments))``. A histogram has 100 segments, a
        range filter keeps a few: the loop over all of them was most of its estimate."""
        n = len(self.segments)
        bounds = self.__dict__.get("_ordered", False)
        if bounds is False:   # once per estimate
            bounds = _ordered_bounds(self.segments)
            object.__setattr__(self, "_ordered", bounds)
        if bounds is None:
            return 0, n
        kind, lowers, uppers = bounds
        for value in (low, high):
            if value is not None and (type(value) is not kind or value != value):
                return 0, n
        first = 0 if low is None else \
            (bisect.bisect_left(uppers, low) if low_inclusive else bisect.bisect_right(uppers, low))
        last = n if high is None else \
            (bisect.bisect_right(lowers, high) if high_inclusive else bisect.bisect_left(lowers, high))
        return first, max(first, last)

    def matching(self, test: Callable[[Any], bool], rest_share: float) -> ColumnEstimate:
        """MCVs kept by ``test``; ``rest_share`` of the other values kept (e.g. LIKE without a prefix)."""
        self = self.live
        mcv = tuple((v, r) for v, r in self.mcv if test(v))
        return replace(self, nulls=0.0, mcv=mcv, segments=tuple(s.part(rest_share) for s in self.segments))

    def only_nulls(self) -> ColumnEstimate:
        self = self.live
        return replace(self, mcv=(), segments=())

    def without_nulls(self) -> ColumnEstimate:
        return replace(self, nulls=0.0)

    def narrowed_to(self, domain: float) -> ColumnEstimate:
        """Values limited to ``domain`` distinct ones (the other side of an equi-join)."""
        self = self.live
        if domain >= self.domain or self.domain <= 0:
            return self
        share = domain / self.domain
        segments = tuple(Segment(s.lower, s.upper, s.rows, min(s.distinct, s.domain * share), s.domain * share)
                         for s in self.segments)
        return replace(self, segments=segments)


def mixture(base: ColumnEstimate, parts: Sequence[ColumnEstimate]) -> ColumnEstimate | None:
    """The distribution of the rows of several restrictions of ``base`` taken together (an OR's
    disjuncts, each at its own rows): per value, the sum of the parts' rows. Most common values
    are summed by value; the parts' segments, each a piece of one of ``base``'s segments (a
    restriction narrows within segments, never across them), are summed per segment of
    ``base``, over the range the pieces span. Overlapping pieces count their rows twice, as the
    rows of two disjuncts that both hold do; the caller rescales to the rows that pass. None
    where ``base`` has no value statistics or a piece lies in none of its segments."""
    base = base.live
    if base.kind is None:
        return None
    segments = base.segments
    lowers = [s.lower for s in segments]
    mcv: dict[Any, float] = {}
    nulls = 0.0
    pieces: dict[int, list[Segment]] = {}
    try:
        for part in parts:
            part = part.live
            nulls += part.nulls
            for value, rows in part.mcv:
                mcv[value] = mcv.get(value, 0.0) + rows
            for piece in part.segments:
                if piece.rows <= 0:
                    continue
                index = bisect.bisect_right(lowers, piece.lower) - 1
                if index < 0 or piece.lower is None or not piece.upper <= segments[index].upper:
                    return None
                pieces.setdefault(index, []).append(piece)
    except TypeError:   # values that do not hash or compare
        return None
    merged = []
    for index in sorted(pieces):
        found = pieces[index]
        whole = segments[index]
        domain = max(min(sum(p.domain for p in found), whole.domain), max(p.domain for p in found))
        merged.append(Segment(min(p.lower for p in found), max(p.upper for p in found), sum(p.rows for p in found),
                              min(sum(p.distinct for p in found), domain), domain))
    return ColumnEstimate(base.kind, nulls, tuple(mcv.items()), tuple(merged), base.width, base.default)


def summed(estimates: Sequence[ColumnEstimate]) -> ColumnEstimate | None:
    """The distribution of the rows of several inputs put together (a UNION ALL's column): per
    value, the sum of the inputs' rows. Most common values are summed by value; segments are
    summed over the ranges between all their bounds, each input's segment contributing its
    share of the range, where the values count (whole numbers, dates) or the segments do not
    overlap. Where inputs overlap on a range, their values are taken to be shared (as a join's
    matching takes them, ``matching``): the range holds the most distinct values any of them
    holds there. None where an input has no value statistics, the kinds differ, or
    overlapping segments cannot be split."""
    lives = [e.live for e in estimates]
    if not lives or any(e.kind is None for e in lives) or len({e.kind for e in lives}) != 1:
        return None
    mcv: dict[Any, float] = {}
    try:
        for e in lives:
            for value, rows in e.mcv:
                mcv[value] = mcv.get(value, 0.0) + rows
    except TypeError:
        return None
    try:
        pieces = sorted((s for e in lives for s in e.segments if s.rows > 0), key=_lower_position)
    except TypeError:
        return None
    segments = _summed_segments(pieces)
    if segments is None:
        return None
    rows = sum(e.non_null for e in lives)
    width = sum(e.width * e.non_null for e in lives) / rows if rows > 0 else max(e.width for e in lives)
    return ColumnEstimate(lives[0].kind, sum(e.nulls for e in lives), tuple(mcv.items()), segments, width,
                          any(e.default for e in lives))


def _lower_position(s: Segment) -> float:
    return _placed(s.lower)


def _placed(value: Any) -> float:
    """``position`` of a bound, raising TypeError where it has none."""
    found = position(value)
    if found is None:
        raise TypeError(f"{value!r} cannot be placed")
    return found


def _summed_segments(pieces: list[Segment]) -> tuple[Segment, ...] | None:
    """``summed``'s segments from all inputs' segments (sorted by lower bound)."""
    try:
        if all(_placed(a.upper) < _placed(b.lower) for a, b in zip(pieces, pieces[1:])):
            return tuple(pieces)
    except TypeError:
        return None
    if not all(is_discrete(s.lower, s.upper) for s in pieces):
        return None
    step = _step(pieces[0].lower)
    if step is None or any(type(s.lower) is not type(pieces[0].lower) for s in pieces):
        return None
    bounds = sorted({p for s in pieces for p in (s.lower, s.upper + step)})
    merged = []
    for start, end in zip(bounds, bounds[1:]):
        last = end - step
        width = _placed(end) - _placed(start)
        rows = distinct = domain = 0.0
        for s in pieces:
            if s.lower <= start and last <= s.upper:
                share = width / (_placed(s.upper) - _placed(s.lower) + 1.0)
                rows += s.rows * share
                distinct = max(distinct, s.distinct * share)
                domain = max(domain, s.domain * share)
        if rows > 0:
            merged.append(Segment(start, last, rows, min(distinct, domain), domain))
    return tuple(merged)


def _step(value: Any) -> Any:
    """One value's width, the distance to the next value of a discrete kind (whole numbers and
    dates), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return 1
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return dt.timedelta(days=1)
    return None


def _presence(rows: float) -> float:
    return 1.0 - math.exp(-rows) if rows < 30 else 1.0


def thinned(distinct: float, rows: float, factor: float) -> float:
    """Distinct values left when each row survives with probability ``factor``."""
    if factor >= 1.0 or distinct <= 0 or rows <= 0:
        return distinct
    per_value = rows / distinct
    return distinct * (1.0 - (1.0 - factor) ** per_value)


def _without_one_value(s: Segment) -> Segment:
    if s.domain <= 1:
        return s.part(0.0)
    share = 1.0 - 1.0 / s.domain
    return Segment(s.lower, s.upper, s.rows * share, max(s.distinct - 1, 0.0), s.domain - 1)


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except TypeError:
        return False


def _in_segment(value: Any, segments: tuple[Segment, ...], index: int) -> bool:
    return in_bucket(value, segments, index)  # type: ignore[arg-type]


def _safe_in(value: Any, segments: tuple[Segment, ...], index: int) -> bool:
    try:
        return _in_segment(value, segments, index)
    except TypeError:
        return True


# Bound types whose values compare among themselves without raising, as a total order (a
# float NaN does not: ``_ordered_bounds`` rejects bounds that are not in order).
_ORDERED_KINDS = (int, float, str, decimal.Decimal, dt.date, dt.datetime)


def _ordered_bounds(segments: tuple[Segment, ...]) -> tuple[type, list[Any], list[Any]] | None:
    """The segments' bound type, lower and upper bounds, where every bound has one of
    ``_ORDERED_KINDS`` (the same for all) and the segments are in order (each lower bound at
    most its upper, both non-decreasing): then a range's wholly-outside segments are a prefix
    (upper bound below the range) and a suffix (lower bound above it). None otherwise."""
    if len(segments) < 8:
        return None    # (a few segments cost less to test one by one)
    kind = type(segments[0].lower)
    if kind not in _ORDERED_KINDS:
        return None
    lowers, uppers = [s.lower for s in segments], [s.upper for s in segments]
    for values in (lowers, uppers):
        for value in values:
            if type(value) is not kind:
                return None
    for k in range(len(segments)):
        if not lowers[k] <= uppers[k]:
            return None
        if k and not (lowers[k - 1] <= lowers[k] and uppers[k - 1] <= uppers[k]):
            return None
    return kind, lowers, uppers


def _within(v: Any, low: Any, high: Any, low_inclusive: bool, high_inclusive: bool) -> bool:
    if low is not None and (v < low or (v == low and not low_inclusive)):
        return False
    if high is not None and (v > high or (v == high and not high_inclusive)):
        return False
    return True


def like_regex(pattern: str) -> re.Pattern[str]:
    parts = []
    for char in pattern:
        if char == "%":
            parts.append(".*")
        elif char == "_":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    return re.compile("".join(parts), re.DOTALL)


def like_prefix(pattern: str) -> str:
    prefix = []
    for char in pattern:
        if char in "%_":
            break
        prefix.append(char)
    return "".join(prefix)
