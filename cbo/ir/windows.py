"""Window functions and their frames, as SQL defines them.

A window function computes, for each row, a value over the rows of its *partition* (the rows
with equal ``PARTITION BY`` values, NULLs equal to each other) in the window's order (``ORDER BY``,
each key with its direction and its NULL order). Rows equal on every order key are *peers*.

* **Ranking** functions read only the order and the row's place in it, never a frame:
  ``row_number()`` (1, 2, 3 ... in order; peers in an arbitrary order), ``rank()`` (1 + the rows
  before the row's first peer), ``dense_rank()`` (1 + the distinct peer groups before it),
  ``percent_rank()`` ((rank - 1) / (rows - 1), 0 for a partition of one row), ``cume_dist()``
  (rows up to the row's last peer / rows) and ``ntile(n)`` (the bucket 1..n of the row when
  the partition is cut into n buckets whose sizes differ by at most one, larger ones first).
  They are BIGINT but for the last two and ``percent_rank``, which are DOUBLE.
* **Offset** functions ``lag(x, k, d)`` and ``lead(x, k, d)``: ``x`` of the row ``k`` rows before
  (after) the row in the window's order (``k`` a non-negative constant, 1 by default), ``d``
  (NULL by default) when no such row is in the partition; a NULL ``x`` there gives NULL, not
  ``d``. No frame.
* **Value** functions ``first_value(x)`` and ``last_value(x)``: ``x`` of the frame's first
  (last) row, NULLs included; NULL for an empty frame.
* **Aggregates** (``sum``, ``avg``, ``count``, ``count(*)``, ``min``, ``max`` and the second
  moments, ``cbo.ir.moments``) over the row's frame, with the aggregate's NULL semantics: NULL
  values are skipped, an empty frame (or one of NULLs only) gives NULL, and 0 for ``count``.

**Frames** (``Frame``) name the rows an aggregate or a value function reads, from ``start``
to ``end``: in ``ROWS`` units, offsets count rows; in ``RANGE`` units, ``CURRENT ROW`` means the
row's peers and ``n PRECEDING``/``n FOLLOWING`` the rows whose one order key lies within ``n``
of the row's (rows with a NULL key are peers of each other only). The default frame is SQL's:
with an ORDER BY, ``RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`` (the row and its peers
included, so a running sum is equal among peers); without one, the whole partition. A frame
that cannot change a function's value is written in one canonical form (``canonical_frame``),
so equal windows compare equal.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass
from enum import Enum
from typing import TypeGuard

from cbo.ir import types as T
from cbo.ir.kinds import AggregateName

RANKING = ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile")
OFFSET = ("lag", "lead")
VALUE = ("first_value", "last_value")
# The ranking functions whose value is a number of rows or of peer groups before the row: a
# filter ``f <= k`` over one of them keeps a prefix of each partition's order (a per-partition
# top-k, Spark's WindowGroupLimit).
RANK_LIKE = ("row_number", "rank", "dense_rank")
# Functions that read the partition's size (Spark's SizeBasedWindowFunction): their value for
# a row depends on rows after it, so no partition may be cut short for them.
SIZE_BASED = ("percent_rank", "cume_dist", "ntile")
# Window aggregates: an aggregate's name (``AggregateCall``), computed over the frame.
AGGREGATES: tuple[AggregateName, ...] = ("count_star", "count", "sum", "avg", "min", "max", "var_samp", "var_pop",
                                          "stddev_samp", "stddev_pop")
FRAMELESS = RANKING + OFFSET


def is_aggregate(name: str) -> TypeGuard[AggregateName]:
    """Whether a window function of this name is an aggregate over its frame (``AGGREGATES``)."""
    return name in AGGREGATES


class FrameUnit(Enum):
    ROWS = "ROWS"
    RANGE = "RANGE"


class BoundKind(Enum):
    UNBOUNDED_PRECEDING = "UNBOUNDED PRECEDING"
    PRECEDING = "PRECEDING"
    CURRENT_ROW = "CURRENT ROW"
    FOLLOWING = "FOLLOWING"
    UNBOUNDED_FOLLOWING = "UNBOUNDED FOLLOWING"


# A bound's place on the line of rows: preceding ones before the current row, following after.
_SIDE = {BoundKind.UNBOUNDED_PRECEDING: -2, BoundKind.PRECEDING: -1, BoundKind.CURRENT_ROW: 0,
         BoundKind.FOLLOWING: 1, BoundKind.UNBOUNDED_FOLLOWING: 2}


@dataclass(frozen=True)
class FrameBound:
    kind: BoundKind
    offset: int | decimal.Decimal | float | None = None   # for PRECEDING and FOLLOWING: n >= 0

    def __str__(self) -> str:
        return f"{self.offset} {self.kind.value}" if self.offset is not None else self.kind.value

    @property
    def position(self) -> float:
        """Where the bound lies relative to the current row (rows or key units; -inf, +inf
        for unbounded): the frame is empty for every row when its start lies after its end."""
        if self.kind is BoundKind.UNBOUNDED_PRECEDING:
            return float("-inf")
        if self.kind is BoundKind.UNBOUNDED_FOLLOWING:
            return float("inf")
        if self.kind is BoundKind.CURRENT_ROW:
            return 0.0
        assert self.offset is not None
        return float(self.offset) * (-1.0 if self.kind is BoundKind.PRECEDING else 1.0)


UNBOUNDED_PRECEDING = FrameBound(BoundKind.UNBOUNDED_PRECEDING)
CURRENT_ROW = FrameBound(BoundKind.CURRENT_ROW)
UNBOUNDED_FOLLOWING = FrameBound(BoundKind.UNBOUNDED_FOLLOWING)


@dataclass(frozen=True)
class Frame:
    unit: FrameUnit
    start: FrameBound
    end: FrameBound

    def __str__(self) -> str:
        return f"{self.unit.value} BETWEEN {self.start} AND {self.end}"

    @property
    def whole_partition(self) -> bool:
        return self.start.kind is BoundKind.UNBOUNDED_PRECEDING and self.end.kind is BoundKind.UNBOUNDED_FOLLOWING

    @property
    def running(self) -> bool:
        """From the partition's first row to the current row (or its last peer)."""
        return self.start.kind is BoundKind.UNBOUNDED_PRECEDING and self.end.kind is BoundKind.CURRENT_ROW


WHOLE_PARTITION = Frame(FrameUnit.ROWS, UNBOUNDED_PRECEDING, UNBOUNDED_FOLLOWING)
RANGE_TO_CURRENT_ROW = Frame(FrameUnit.RANGE, UNBOUNDED_PRECEDING, CURRENT_ROW)
ROWS_TO_CURRENT_ROW = Frame(FrameUnit.ROWS, UNBOUNDED_PRECEDING, CURRENT_ROW)


def default_frame(ordered: bool) -> Frame:
    """SQL's frame when a window names none: up to the current row's last peer with an ORDER
    BY, the whole partition without one."""
    return RANGE_TO_CURRENT_ROW if ordered else WHOLE_PARTITION


def canonical_frame(name: str, frame: Frame | None, ordered: bool) -> Frame | None:
    """The frame ``name`` reads, in one form per meaning: None for functions that read none
    (ranking and offset functions); the whole partition in ROWS units, however written; and
    without an ORDER BY, a RANGE frame bounded by CURRENT ROW is the whole partition (every
    row is a peer of every other)."""
    if name in FRAMELESS:
        return None
    if frame is None:
        frame = default_frame(ordered)
    if not ordered and frame.unit is FrameUnit.RANGE and all(
            b.kind is not BoundKind.PRECEDING and b.kind is not BoundKind.FOLLOWING for b in (frame.start, frame.end)):
        return WHOLE_PARTITION
    if frame.whole_partition:
        return WHOLE_PARTITION
    return frame


def result_type(name: str, argument: T.DataType | None) -> T.DataType:
    """The type of a non-aggregate window function's value (aggregates keep their own type)."""
    if name in ("percent_rank", "cume_dist"):
        return T.DOUBLE
    if name in RANKING:
        return T.BIGINT
    assert argument is not None
    return argument


def bound_order(start: FrameBound, end: FrameBound) -> bool:
    """Whether the frame's start lies at or before its end where both are known (Spark refuses
    a frame whose lower bound lies after its upper bound, DuckDB gives empty frames)."""
    return start.position <= end.position


def side(bound: FrameBound) -> int:
    """-2 unbounded preceding, -1 preceding, 0 current row, 1 following, 2 unbounded following."""
    return _SIDE[bound.kind]
