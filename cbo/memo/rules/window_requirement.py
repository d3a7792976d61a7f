"""What a window needs of its input, as Spark's WindowExec states it: rows clustered on the
partition columns (one partition without them), sorted within each partition on the partition
columns (ascending, NULLs first) and then on the window's order keys, each in its own direction
and NULL order. Read by the window's implementations (``implement``, ``window_top_k``) and by
``cbo.memo.delivery`` (what a top-k with its own exchange delivers)."""

from __future__ import annotations

from cbo.ir.operators import Window
from cbo.physical.properties import ASC, Delivered, Directions, Required, Requirements, direction


def _needs(window: Window) -> tuple[tuple[int, ...], tuple[int, ...], Directions]:
    partition = tuple(c.id for c in window.partition_by)
    ordering = partition + tuple(k.column.id for k in window.order_by)
    directions = (ASC,) * len(partition) + tuple(direction(k.ascending, k.nulls_first) for k in window.order_by)
    return partition, ordering, directions


def window_requirement(window: Window, required: Requirements, delivered: bool = False) -> Required:
    """What a window needs of its input, built through the search's ``required``; computed
    once per window (an expression of the search's memo) and form. ``delivered``: the
    clustering must be there already (only the sort may be added): what a per-partition top-k
    without an exchange of its own needs, since where Spark adds the exchange it cuts each
    task's partitions before it."""
    key = "_requirement_delivered" if delivered else "_requirement"
    found = window.__dict__.get(key)
    if found is None:
        partition, ordering, directions = _needs(window)
        if delivered:
            # (clustered on no columns: one partition, as only a single partition delivers it)
            found = required("clustered", partition, ordering, directions)
        elif partition:
            found = required("partitioned", partition, ordering, directions)
        else:
            found = required("single", (), ordering, directions)
        object.__setattr__(window, key, found)
    return found


def window_delivery(window: Window) -> Delivered:
    """What an exchange and sort made for the window deliver: hash partitioning on the
    partition columns (one partition without them), sorted as the window reads."""
    partition, ordering, directions = _needs(window)
    classes = tuple(frozenset({c}) for c in ordering)
    if all(d is ASC for d in directions):
        directions = ()
    if not partition:
        return Delivered("single", (), classes, directions)
    return Delivered("hash", tuple(frozenset({c}) for c in partition), classes, directions)
