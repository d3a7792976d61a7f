"""What a physical alternative delivers, from its strategy and its inputs' delivered properties.

These follow Spark's ``outputPartitioning`` and ``outputOrdering`` of each physical operator, so
that the search's enforcers sit where Spark's ``EnsureRequirements`` puts exchanges and sorts:

* scans deliver no known partitioning (files are split by size, not by value);
* filters pass their input's properties on; projections too, for the columns they keep; so
  do windows (Spark's WindowExec keeps its input's partitioning and order), but for a
  per-partition top-k with its own exchange, which delivers what the window requires;
* a broadcast join (null-aware anti joins included) keeps its probe (left) side's properties;
* shuffled hash and sort-merge joins deliver hash partitioning on the join keys (for inner joins
  either side's key, for left/semi/anti/mark joins the left key, for full joins nothing); a
  sort-merge join also delivers the keys' order;
* an aggregation's partial/final form delivers hash partitioning on its grouping columns (one
  partition without them); its final-only form keeps its input's partitioning;
* grouping sets deliver nothing a parent can use;
* a CTE's consumer delivers nothing known (rows read back from storage); its anchor, its
  body's properties;
* a global sort is range-partitioned (not a hash partitioning any parent can use); a limit
  and a top-N gather to one partition.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cbo.ir.dispatch import OperatorTable
from cbo.ir.expressions import ColumnRef
from cbo.ir.operators import (
    Aggregate,
    CteAnchor,
    CteConsumer,
    Filter,
    GroupingSets,
    Join,
    Limit,
    Plan,
    Project,
    Scan,
    SetOp,
    Sort,
    Values,
    Window,
)
from cbo.memo.memo import PhysicalExpr
from cbo.memo.rules.window_requirement import window_delivery
from cbo.physical.algorithm import Algorithm
from cbo.physical.properties import UNKNOWN, Delivered

SINGLE_PARTITION = Delivered("single")


def deliver(physical: PhysicalExpr, inputs: list[Delivered]) -> Delivered:
    if physical.algorithm is Algorithm.REMOTE_QUERY:
        # rows read through JDBC (one partition, or key ranges): no partitioning a parent can use
        return UNKNOWN
    return DELIVERY[physical.node](physical.node, physical.algorithm, inputs)


DELIVERY: OperatorTable[Callable[[Any, Algorithm, list[Delivered]], Delivered]] = OperatorTable("delivered properties")


@DELIVERY.register(Scan, Sort, SetOp, GroupingSets, CteConsumer)
def _nothing_known(node: Plan, algorithm: Algorithm, inputs: list[Delivered]) -> Delivered:
    # Files split by size; a global sort's range partitioning no parent can use; a union's
    # inputs side by side; grouping sets partitioned on the keys and the set's number (Expand),
    # which no parent names, or stacked per set (a union).
    return UNKNOWN


@DELIVERY.register(CteAnchor)
def _cte_anchor(node: CteAnchor, algorithm: Algorithm, inputs: list[Delivered]) -> Delivered:
    return inputs[1]   # the body's rows, as the body delivers them


@DELIVERY.register(Filter)
def _filter(node: Filter, algorithm: Algorithm, inputs: list[Delivered]) -> Delivered:
    if algorithm is Algorithm.WINDOW_TOP_K:
        # its own exchange and sort: what the window requires, made
        window = node.input
        assert isinstance(window, Window)
        return window_delivery(window)
    return inputs[0]


@DELIVERY.register(Window)
def _window(node: Window, algorithm: Algorithm, inputs: list[Delivered]) -> Delivered:
    return inputs[0]


@DELIVERY.register(Project)
def _project(node: Project, algorithm: Algorithm, inputs: list[Delivered]) -> Delivered:
    mapping: dict[int, set[int]] = {}
    for column, expr in node.assignments:
        if isinstance(expr, ColumnRef):
            mapping.setdefault(expr.column.id, set()).add(column.id)
    return inputs[0].renamed(mapping)


@DELIVERY.register(Aggregate)
def _aggregate(node: Aggregate, algorithm: Algorithm, inputs: list[Delivered]) -> Delivered:
    if algorithm is Algorithm.FINAL_AGGREGATE:
        kept = {c.id: {c.id} for c in node.group_by}
        return inputs[0].renamed(kept)
    if not node.group_by:
        return SINGLE_PARTITION
    return Delivered("hash", tuple(frozenset({c.id}) for c in node.group_by))


@DELIVERY.register(Limit, Values)
def _single(node: Plan, algorithm: Algorithm, inputs: list[Delivered]) -> Delivered:
    return SINGLE_PARTITION


@DELIVERY.register(Join)
def _join(node: Join, algorithm: Algorithm, inputs: list[Delivered]) -> Delivered:
    pairs = [(a.id, b.id) for a, b in node.equi_keys]
    if algorithm is Algorithm.SCALAR_SUBQUERY:
        return inputs[0]   # a filter and projection of the left input
    if algorithm in (Algorithm.BROADCAST_HASH_JOIN, Algorithm.BROADCAST_NESTED_LOOP_JOIN,
                     Algorithm.NULL_AWARE_BROADCAST_HASH_JOIN):
        probe = inputs[0]
        return probe.merged(pairs) if node.kind == "inner" else probe
    if node.kind == "full" or node.kind == "right":
        return UNKNOWN
    keys = tuple(frozenset({a, b}) if node.kind == "inner" else frozenset({a}) for a, b in pairs)
    ordering = keys if algorithm is Algorithm.SORT_MERGE_JOIN else ()
    if node.kind == "mark":
        return UNKNOWN   # regrouped per left row after the join (see exec.spark_sql)
    return Delivered("hash", keys, ordering)
