"""Parallel partitioned reads of a pushed remote query: which column, which bounds, how many.

Spark's JDBC reader reads ``dbtable = (<query>) cbo_remote`` in N partitions, partition i
sending ``SELECT <columns> FROM (<query>) cbo_remote WHERE <column> >= b_i AND <column> < b_i+1``
(the first ``<column> < b_1 OR <column> IS NULL``, the last ``<column> >= b_N-1``), all at once.
Every row of the query's result satisfies exactly one of these predicates, so the partitions
together are the result whatever the bounds: bounds only decide how evenly rows spread, and
statistics that are stale cannot make an answer wrong.

What makes a split wrong or wasteful, and so decides where it is allowed (``choose``):

* **LIMIT, ORDER BY ... LIMIT (top-N), anywhere in the query: never split.** Each partition
  evaluates the query again, and a LIMIT without a total order (or with ties at the k-th row)
  may keep other rows each time: the partitions' union would not be one answer. The source can
  neither move the range below the LIMIT, so each partition would compute the whole top-N.
* **The range must reach a table scan.** PostgreSQL and MariaDB move a predicate on a derived
  table's column down to where the column is read, through filters, projections that pass the
  column on, either input of an inner join, the preserved input of an outer join, the left
  input of a semi or anti join, and an aggregation *when the column is a grouping key* (a
  group lies wholly in one partition). A column reached any other way (an aggregate's result,
  a computed value, the NULL-extended side of an outer join) would be filtered only at the
  top: correct, but every partition would do the whole query's work. Such columns are never
  chosen; a query without a column reaching a scan (a global aggregate such as TPC-H Q17's)
  is read in one partition.
* The column's type must be one Spark partitions on: integer, bigint or date.

Among the allowed columns, the one read from the largest table (the bulk of the work, split),
then the one with the most distinct values (even ranges). Bounds are the column's smallest and
largest value in the estimate of the pushed subplan's result (filters on it narrow them).

How many: one partition per ``ROWS_PER_PARTITION`` estimated result rows (or
``BYTES_PER_PARTITION`` bytes, whichever gives more), at most the cluster's cores, and at most
a tenth of the column's distinct values; below two the query is read whole. Each partition is
a query of its own: the source plans it, and the inputs the range does not reach (the other
side of a join on the partitioned table) are evaluated once per partition. The cost model
should charge a partitioned pushed query N times that unreduced work, its reduced work once,
and its transfer divided by N (the partitions are read in parallel), plus N queries' overhead.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cbo.ir.expressions import Column, ColumnRef
from cbo.ir.operators import Aggregate, Filter, Join, Limit, Plan, Project, Scan, Sort, walk
from cbo.sqlgen import name_of

ROWS_PER_PARTITION = 250_000
BYTES_PER_PARTITION = 16 * 2**20
PARTITION_TYPES = ("integer", "bigint", "date")


@dataclass(frozen=True)
class Partitioning:
    """How a remote query is read: on ``column`` (its name in the query's result) in
    ``partitions`` ranges between ``lower`` and ``upper`` (an int, or a date)."""

    column: str
    lower: Any
    upper: Any
    partitions: int

    def describe(self) -> str:
        return f"{self.partitions} partitions on {self.column} in [{self.lower}, {self.upper}]"


def scan_column(plan: Plan, column: Column) -> tuple[Scan, str] | None:
    """The table column that ``column`` of ``plan``'s result is, read unchanged along a path a
    range predicate is moved down by the source (see the module's docstring); else None."""
    node, wanted = plan, column
    while True:
        if isinstance(node, Scan):
            if wanted in node.columns:
                return node, node.column_names[node.columns.index(wanted)]
            return None
        if isinstance(node, Filter):
            node = node.input
        elif isinstance(node, Project):
            source = dict(node.assignments).get(wanted)
            if not isinstance(source, ColumnRef):
                return None
            node, wanted = node.input, source.column
        elif isinstance(node, Aggregate):
            if wanted not in node.group_by:
                return None
            node = node.input
        elif isinstance(node, Join):
            in_left = wanted in node.left.output
            in_right = not in_left and node.kind not in ("semi", "anti", "null_aware_anti", "mark") \
                and wanted in node.right.output
            # a range on a NULL-extended side stays above the outer join
            if in_left and node.kind in ("inner", "cross", "left", "semi", "anti", "null_aware_anti", "mark"):
                node = node.left
            elif in_right and node.kind in ("inner", "cross", "right"):
                node = node.right
            else:
                return None
        else:
            return None


def splittable(plan: Plan) -> bool:
    """Whether a query may be read in ranges at all: no LIMIT or ORDER BY anywhere in it."""
    return not any(isinstance(n, (Limit, Sort)) for n in walk(plan))


def choose(plan: Plan, estimate: Any, rows: float, width: float, max_partitions: int,
           table_rows: Callable[[str], float] | None = None,
           rows_per_partition: float = ROWS_PER_PARTITION) -> Partitioning | None:
    """How to read the pushed subplan ``plan`` (its result estimated ``rows`` of ``width``
    bytes; ``estimate`` its ``RelEstimate``) in at most ``max_partitions`` parallel partitions,
    or None to read it whole (see the module's docstring for the rule)."""
    if max_partitions < 2 or not splittable(plan):
        return None
    bytes_per_partition = BYTES_PER_PARTITION * rows_per_partition / ROWS_PER_PARTITION
    wanted = max(rows / rows_per_partition, rows * width / bytes_per_partition)
    if wanted < 2:
        return None
    candidates = []
    for column in plan.output:
        if column.type.name not in PARTITION_TYPES:
            continue
        found = scan_column(plan, column)
        if found is None:
            continue
        column_estimate = estimate.column(column) if estimate is not None else None
        if column_estimate is None or column_estimate.kind is None:
            continue
        bounds = _bounds(column_estimate, column.type.name)
        if bounds is None:
            continue
        size = table_rows(found[0].table) if table_rows is not None else 0.0
        candidates.append((size, column_estimate.distinct, column, bounds))
    if not candidates:
        return None
    size, distinct, column, (lower, upper) = max(candidates, key=lambda c: (c[0], c[1], -c[2].id))
    partitions = int(min(max_partitions, wanted, distinct / 10))   # ranges of ten values at least
    if partitions < 2 or lower >= upper:
        return None
    return Partitioning(name_of(column), lower, upper, partitions)


def _bounds(estimate: Any, type_name: str) -> tuple[Any, Any] | None:
    live = estimate.live
    values = [v for v, r in live.mcv if r > 0 and v is not None]
    for segment in live.segments:
        if segment.rows > 0:
            values += [v for v in (segment.lower, segment.upper) if v is not None]
    if not values:
        return None
    try:
        low, high = min(values), max(values)
    except TypeError:
        return None
    if type_name == "date":
        if isinstance(low, datetime.datetime):
            low, high = low.date(), high.date()
        return (low, high) if isinstance(low, datetime.date) and isinstance(high, datetime.date) else None
    try:
        return math.floor(low), math.ceil(high)
    except (TypeError, ValueError, OverflowError):
        return None
