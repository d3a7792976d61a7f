"""Estimating a Window: its rows are its input's, and each function's column gets a distribution.

A window passes every input row through once, so the rows, the input columns' estimates, their
origins, column groups and sample are the input's. The partitions are the groups of the
partition columns (``group_count``), their sizes those an aggregation would see
(``aggregates.group_sizes``: known sizes of common values, the rest spread evenly with the
right mean); from them:

* ``row_number()`` holds 1..s in a partition of s rows: value v on as many rows as partitions
  of at least v rows. Its distinct values are the largest partition's size, and a filter
  ``rn <= k`` keeps about the sum over partitions of min(s, k) rows: a per-partition top-k.
  ``rank()`` is taken to be the same (ties make it skip values, not change the rows a
  ``rank <= k`` keeps by much); ``dense_rank()`` counts peer groups, so its values reach the
  partition's distinct order keys rather than its rows.
* ``ntile(n)``: 1..min(n, s), evenly; ``percent_rank()`` and ``cume_dist()``: (0, 1].
* ``lag``/``lead``/``first_value``/``last_value``: values of their argument, its distribution.
* An aggregate over the whole partition: its value per partition as the aggregation would
  give it (``aggregates.aggregate_output``), repeated on each of the partition's rows. Over a
  running or sliding frame: ``count`` like a row number, ``min``/``max`` the argument's
  values, the others without a known distribution (one value per row).

``row_number()`` with the partition columns is a key, and is recorded as a column group.
"""

from __future__ import annotations

from collections.abc import Callable

from cbo.estimate.aggregates import aggregate_output, group_sizes
from cbo.estimate.column import ColumnEstimate, Segment
from cbo.estimate.relation import DerivedColumns, RelEstimate, layered
from cbo.ir.expressions import AggregateCall, Column, ColumnRef, Constant, WindowCall
from cbo.ir.operators import Window
from cbo.ir.windows import RANK_LIKE, is_aggregate

GroupCount = Callable[[RelEstimate, tuple[Column, ...]], tuple[float, list[str]]]


def estimate_window(plan: Window, rel: RelEstimate, group_count: GroupCount) -> RelEstimate:
    """``group_count``: the estimator's count of distinct combinations of columns (passed in:
    the estimator imports this module)."""
    groups, notes = group_count(rel, plan.partition_by) if plan.partition_by else (1.0, [])
    calls = dict(plan.functions)
    placeholders = {column: ColumnEstimate.unknown(rel.rows) for column in calls}
    computed = DerivedColumns(placeholders, lambda c, _: function_output(calls[c], plan, rel, groups, group_count))
    keys = {frozenset(plan.partition_by) | {c}: rel.rows for c, f in plan.functions if f.name == "row_number"}
    return RelEstimate(rel.rows, layered(rel.columns, computed), {**rel.groups, **keys},
                       rel.origins, rel.sample, rel.notes | frozenset(notes))


def function_output(call: WindowCall, plan: Window, rel: RelEstimate, groups: float,
                    group_count: GroupCount) -> ColumnEstimate:
    """The distribution of ``call``'s values over the window's rows."""
    rows = rel.rows
    if rows <= 0:
        return ColumnEstimate.unknown(0.0)
    sizes = _sizes(rel, plan, groups)
    if call.name in RANK_LIKE:
        scale = 1.0
        if call.name == "dense_rank" and plan.order_by:
            keyed, _ = group_count(rel, plan.partition_by + tuple(k.column for k in plan.order_by))
            scale = min(1.0, keyed / rows)   # peer groups per row
        return numbered(sizes, groups, scale)
    if call.name == "ntile":
        buckets = call.args[0].value if isinstance(call.args[0], Constant) else 1
        largest = max((n for _, n in sizes), default=1.0)
        top = max(1, int(min(float(buckets), largest)))
        return ColumnEstimate("number", 0.0, (), (Segment(1, top, rows, float(top), float(top)),))
    if call.name in ("percent_rank", "cume_dist"):
        largest = max((n for _, n in sizes), default=1.0)
        return ColumnEstimate("number", 0.0, (), (Segment(0.0, 1.0, rows, max(min(largest, rows), 1.0),
                                                          max(min(largest, rows), 1.0)),))
    argument = call.args[0] if call.args else None
    source = rel.column(argument.column) if isinstance(argument, ColumnRef) else None
    if call.name in ("lag", "lead", "first_value", "last_value"):
        return source.with_rows(rows) if source is not None else ColumnEstimate.unknown(rows)
    frame = call.frame
    if frame is not None and frame.whole_partition:
        assert is_aggregate(call.name)   # the value functions, which also have frames, are above
        per_group = aggregate_output(AggregateCall(call.name, call.args, False, call.type), rel, plan.partition_by,
                                     groups)
        return per_group.with_rows(rows) if per_group.rows > 0 else per_group
    if call.name in ("count", "count_star"):
        return numbered(sizes, groups, 1.0 if source is None else 1.0 - source.null_fraction)
    if call.name in ("min", "max") and source is not None:
        return source.with_rows(rows)
    return ColumnEstimate.unknown(rows)


def _sizes(rel: RelEstimate, plan: Window, groups: float) -> list[tuple[float, float]]:
    """(share of partitions, rows per partition): one partition of every row without partition
    columns."""
    if not plan.partition_by:
        return [(1.0, rel.rows)]
    return group_sizes(rel, plan.partition_by, groups) or [(1.0, rel.rows / max(groups, 1.0))]


def numbered(sizes: list[tuple[float, float]], groups: float, scale: float = 1.0) -> ColumnEstimate:
    """Values 1..round(s * scale) in each partition of s rows (``sizes``: share of partitions,
    rows), each value on one row of each partition that reaches it (``scale`` < 1: each value
    on 1 / scale rows, peers sharing a number)."""
    reach: dict[int, float] = {}   # top value -> partitions whose numbers end there
    for share, size in sizes:
        top = max(1, int(round(size * scale)))
        reach[top] = reach.get(top, 0.0) + share * groups
    segments = []
    previous = 0
    remaining = sum(reach.values())
    per_value = 1.0 / scale if scale > 0 else 1.0
    for top in sorted(reach):
        if remaining <= 0:
            break
        width = top - previous
        segments.append(Segment(previous + 1, top, width * remaining * per_value, float(width), float(width)))
        remaining -= reach[top]
        previous = top
    if not segments:
        return ColumnEstimate.unknown(0.0)
    return ColumnEstimate("number", 0.0, (), tuple(segments))

