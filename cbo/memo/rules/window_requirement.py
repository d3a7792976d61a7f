"""What a window needs of its input, as Spark's WindowExec states it: rows clustered on the
partition columns (one partition without them), sorted within each partition on the partition
columns (ascending, NULLs first) and then on the window's order keys, each in its own direction
and NULL order. Read by the window's implementations (``implement``, ``window_top_k``)."""

from __future__ import annotations

from cbo.ir.operators import Window
from cbo.memo.properties import ASC, Required, direction, required


def window_requirement(window: Window, delivered: bool = False) -> Required:
    """What a window needs of its input. ``delivered``: the clustering must be there already
    (only the sort may be added): what a per-partition top-k without an exchange of its own
    needs, since where Spark adds the exchange it cuts each task's partitions before it."""
    key = "_requirement_delivered" if delivered else "_requirement"
    found = window.__dict__.get(key)
    if found is None:
        partition = tuple(c.id for c in window.partition_by)
        ordering = partition + tuple(k.column.id for k in window.order_by)
        directions = (ASC,) * len(partition) + tuple(direction(k.ascending, k.nulls_first) for k in window.order_by)
        if delivered:
            # (clustered on no columns: one partition, as only a single partition delivers it)
            found = required("clustered", partition, ordering, directions)
        elif partition:
            found = required("partitioned", partition, ordering, directions)
        else:
            found = required("single", (), ordering, directions)
        object.__setattr__(window, key, found)
    return found
