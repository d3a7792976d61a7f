"""Column pruning: every operator keeps only the columns someone above it reads.

Removing a column nobody reads never changes an answer: projections drop unread assignments,
aggregates drop unread aggregate calls (a grouping column always stays: it defines the
groups; so do grouping sets), windows drop unread functions (a window none of whose functions
is read goes: it passes every row through unchanged), scans read only needed columns. Set
operations keep all their columns, because DISTINCT compares whole rows; so do a CTE's producer
and its consumers (``cbo.normalize.ctes``). A scan from which nothing is read keeps one column,
so row counts (``count(*)``) stay right.
"""

from __future__ import annotations

from cbo.ir.expressions import Column, columns_of
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


def prune_columns(plan: Plan) -> Plan:
    return _prune(plan, set(plan.output))


def _prune(plan: Plan, required: set[Column]) -> Plan:
    if isinstance(plan, Scan):
        keep = [i for i, c in enumerate(plan.columns) if c in required] or [_narrowest(plan)]
        if len(keep) == len(plan.columns):
            return plan
        columns = tuple(plan.columns[i] for i in keep)
        kept = set(columns)
        return Scan(plan.table, columns, tuple(plan.column_names[i] for i in keep),
                    tuple(k for k in plan.keys if set(k) <= kept),
                    tuple(fk for fk in plan.references if set(fk.columns) <= kept),
                    tuple(k for k in plan.assumed_keys if set(k.columns) <= kept))
    if isinstance(plan, Project):
        assignments = tuple((c, e) for c, e in plan.assignments if c in required)
        needed = set().union(*[columns_of(e) for _, e in assignments]) if assignments else set()
        return Project(_prune(plan.input, needed), assignments)
    if isinstance(plan, Filter):
        return Filter(_prune(plan.input, required | columns_of(plan.predicate)), plan.predicate)
    if isinstance(plan, Join):
        needed = required | columns_of(plan.condition)
        if plan.mark_predicate is not None:
            needed |= columns_of(plan.mark_predicate)
        left = _prune(plan.left, needed & set(plan.left.output))
        right = _prune(plan.right, needed & set(plan.right.output))
        return Join(plan.kind, left, right, plan.condition, plan.mark, plan.mark_predicate)
    if isinstance(plan, Aggregate):
        aggregates = tuple((c, a) for c, a in plan.aggregates if c in required)
        if not aggregates and not plan.group_by:
            aggregates = plan.aggregates[:1]  # keep the single output row
        needed = set(plan.group_by)
        for _, call in aggregates:
            needed |= columns_of(call)
        return Aggregate(_prune(plan.input, needed), plan.group_by, aggregates)
    if isinstance(plan, GroupingSets):
        # every key stays (the sets group by them), as do the sets: a set's rows are there
        # whether or not anything reads its aggregates
        aggregates = tuple((c, a) for c, a in plan.aggregates if c in required)
        groupings = tuple((c, g) for c, g in plan.groupings if c in required)
        needed = set(plan.keys)
        for _, call in aggregates:
            needed |= columns_of(call)
        return GroupingSets(_prune(plan.input, needed), plan.keys, plan.outputs, plan.sets, aggregates, groupings)
    if isinstance(plan, Sort):
        return Sort(_prune(plan.input, required | {k.column for k in plan.keys}), plan.keys)
    if isinstance(plan, Window):
        functions = tuple((c, f) for c, f in plan.functions if c in required)
        passed = required & set(plan.input.output)
        if not functions:
            return _prune(plan.input, passed)
        needed = passed | set(plan.partition_by) | {k.column for k in plan.order_by}
        for _, function in functions:
            needed |= columns_of(function)
        return Window(_prune(plan.input, needed), plan.partition_by, plan.order_by, functions)
    if isinstance(plan, Limit):
        return Limit(_prune(plan.input, required), plan.count, plan.offset)
    if isinstance(plan, SetOp):
        children = tuple(_prune(child, set(cols)) for child, cols in zip(plan.inputs, plan.inputs_columns))
        return plan.with_children(children)
    if isinstance(plan, (Values, CteConsumer)):
        return plan
    if isinstance(plan, CteAnchor):
        # the producer keeps every column: each consumer reads the producer's whole row
        return CteAnchor(plan.cte, plan.name, _prune(plan.producer, set(plan.producer.output)),
                         _prune(plan.body, required))
    raise AssertionError(f"unknown operator {type(plan).__name__}")


def _narrowest(scan: Scan) -> int:
    from cbo.ir.types import width_bytes

    return min(range(len(scan.columns)), key=lambda i: (width_bytes(scan.columns[i].type), i))


