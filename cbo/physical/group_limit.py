"""Spark's WindowGroupLimit: when a filter on a rank over a window runs as a per-partition top-k.

A filter ``r <= k`` (also ``r < k``, ``r = k`` and their mirror images, ``k`` an integer) over a
window whose ``r`` is ``row_number()``, ``rank()`` or ``dense_rank()`` keeps, in each partition,
a prefix of the window's order: the rows whose rank is at most k. Nothing after that prefix can
change the functions' values of the rows in it when every function of the window reads only
rows up to the current one (the ranking functions, and frames ``ROWS BETWEEN UNBOUNDED
PRECEDING AND CURRENT ROW``) and none reads the partition's size (``percent_rank``,
``cume_dist``, ``ntile``). Then each task can sort its rows and keep each partition's first k
before the shuffle, and the window runs over those (Spark's ``InferWindowGroupLimit``, which
inserts a partial ``WindowGroupLimitExec`` below the exchange and a final one above it).

``group_limit`` states Spark's conditions, so the memo offers the top-k exactly where Spark
will run one for cbo's SQL, and the executor can tell where Spark would run one cbo did not
choose (``spark.sql.optimizer.windowGroupLimitThreshold``, 1000 by default, bounds k).
"""

from __future__ import annotations

from dataclasses import dataclass

from cbo.ir.expressions import Call, ColumnRef, Constant, Expr, conjuncts
from cbo.ir.kinds import FunctionName
from cbo.ir.operators import Window
from cbo.ir.windows import RANK_LIKE, ROWS_TO_CURRENT_ROW, SIZE_BASED

# Spark's spark.sql.optimizer.windowGroupLimitThreshold default: a larger limit is not inferred.
THRESHOLD = 1000

_MIRRORED: dict[FunctionName, FunctionName] = {"lt": "gt", "lte": "gte", "gt": "lt", "gte": "lte", "eq": "eq"}


@dataclass(frozen=True)
class GroupLimit:
    """Each partition's first ``limit`` rows by ``function`` (a rank-like function's name)."""

    function: str
    limit: int


def expanding(window: Window) -> bool:
    """Whether every function of the window reads only rows up to the current one and none
    reads the partition's size (Spark's ``isExpandingWindow``), over an ordered window."""
    if not window.order_by:
        return False
    for _, call in window.functions:
        if call.name in SIZE_BASED:
            return False
        if call.name not in RANK_LIKE and call.frame != ROWS_TO_CURRENT_ROW:
            return False
    return True


def group_limit(predicate: Expr, window: Window, threshold: int = THRESHOLD) -> GroupLimit | None:
    """The per-partition limit a filter ``predicate`` over ``window`` implies (as Spark infers
    it: row_number's limits before the others', then the least), None where Spark infers none.
    A limit of 0 or less (an empty answer) is not one: Spark replaces the whole plan by an
    empty relation there."""
    if not expanding(window):
        return None
    ranks = {c: f.name for c, f in window.functions if f.name in RANK_LIKE}
    found: list[tuple[int, str]] = []
    for conjunct in conjuncts(predicate):
        if not (isinstance(conjunct, Call) and conjunct.name in _MIRRORED and len(conjunct.args) == 2):
            continue
        name = conjunct.name
        left, right = conjunct.args
        if isinstance(left, Constant):
            left, right, name = right, left, _MIRRORED[name]
        if not (isinstance(left, ColumnRef) and left.column in ranks and isinstance(right, Constant)
                and isinstance(right.value, int) and not isinstance(right.value, bool)):
            continue
        if name in ("lte", "eq"):
            found.append((right.value, ranks[left.column]))
        elif name == "lt":
            found.append((right.value - 1, ranks[left.column]))
    if not found:
        return None
    numbered = [f for f in found if f[1] == "row_number"]
    limit, function = min(numbered or found)
    if limit <= 0 or limit > threshold:
        return None
    return GroupLimit(function, limit)
