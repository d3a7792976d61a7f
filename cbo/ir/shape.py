"""A plan's shape: its structure and expressions with column identities numbered in order of
first appearance, so two subplans that differ only in their columns' ids have equal shapes.

A query that names a view twice (TPC-H Q15's ``revenue0``: once joined, once under ``max``) is
bound into two copies of the view's plan with fresh column ids; their shapes are equal, and
equal shapes compute the same rows, column for column in ``output`` order (the shape holds the
output's numbers too). The JDBC pushdown uses this to have a source compute a repeated
aggregation once (``cbo.sqlgen``: a ``WITH ... AS MATERIALIZED`` common table expression) and to
charge its work once (``cbo.memo.rules.jdbc_pushdown``). A repeated join is shared the same way:
``cbo.memo.rules.table_copy`` makes an aggregation read a copy of the join its outer side reads
(``fresh_copy``: the same plan, every column renamed, so of the same shape).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import fields, is_dataclass
from typing import Any

from cbo.ir.expressions import Column, ColumnRef
from cbo.ir.operators import CteAnchor, CteConsumer, Plan, Project, walk
from cbo.ir.types import DataType


def shape(plan: Plan) -> Hashable:
    """``plan``'s shape (hashable; equal for plans equal up to a renaming of column ids)."""
    numbers: dict[int, int] = {}

    def of(value: Any) -> Any:
        if isinstance(value, Column):
            # name aside: a column's name does not change what is computed
            return ("#", numbers.setdefault(value.id, len(numbers)), of(value.type), value.nullable)
        if is_dataclass(value) and not isinstance(value, type):
            return (type(value).__name__,) + tuple(of(getattr(value, f.name)) for f in fields(value) if f.compare)
        if isinstance(value, (tuple, list)):
            return tuple(of(v) for v in value)
        if isinstance(value, (set, frozenset)):
            return ("set",) + tuple(sorted((of(v) for v in value), key=repr))
        return value

    body = of(plan)
    return body, tuple(numbers.get(c.id, -1) for c in plan.output)


def fresh_copy(plan: Plan, new_column: Callable[[str, DataType, bool], Column]) -> tuple[Plan, dict[Column, Column]]:
    """A copy of ``plan`` (no group references) with every column it names replaced by a new
    one from ``new_column``, and the replacements (old -> new). The copy computes the same rows
    under new column ids, so it may stand in the same plan as ``plan``; its shape is ``plan``'s
    (columns are renamed one to one, in the order ``shape`` numbers them)."""
    renamed: dict[Column, Column] = {}

    def of(value: Any) -> Any:
        if isinstance(value, Column):
            found = renamed.get(value)
            if found is None:
                found = renamed[value] = new_column(value.name, value.type, value.nullable)
            return found
        if isinstance(value, DataType):
            return value
        if is_dataclass(value) and not isinstance(value, type):
            # A field not compared is no part of what the node computes (a CTE consumer's
            # producer, which another node computes under its own ids): kept as it is.
            return type(value)(**{f.name: of(getattr(value, f.name)) if f.compare else getattr(value, f.name)
                                  for f in fields(value) if f.init})
        if isinstance(value, (tuple, list)):
            return type(value)(of(v) for v in value)
        if isinstance(value, (set, frozenset)):
            return type(value)(of(v) for v in value)
        if isinstance(value, Plan):
            raise TypeError(f"fresh_copy copies dataclass operators only, not {type(value).__name__}")
        return value

    return of(plan), renamed


def without_ctes(plan: Plan) -> Plan:
    """``plan`` with every common table expression inlined: each ``CteConsumer`` replaced by a
    fresh copy of its producer (itself without CTEs) under a projection that gives the copy's
    output the consumer's ids, each ``CteAnchor`` by its body. A consumer's rows are its
    producer's, column for column, so the result computes ``plan``'s rows; it reads no CTE
    computed elsewhere, so it renders and runs on its own. ``plan`` itself when it has no CTE.
    The copies' ids are numbered above every id ``plan`` (producers included) names."""
    if not any(isinstance(node, (CteAnchor, CteConsumer)) for node in walk(plan)):
        return plan
    next_id = [_max_id(plan) + 1]

    def new_column(name: str, type_: DataType, nullable: bool) -> Column:
        next_id[0] += 1
        return Column(next_id[0] - 1, name, type_, nullable)

    def inline(node: Plan) -> Plan:
        if isinstance(node, CteAnchor):
            return inline(node.body)
        if isinstance(node, CteConsumer):
            copy, _ = fresh_copy(inline(node.producer), new_column)
            return Project(copy, tuple((c, ColumnRef(p)) for c, p in zip(node.columns, copy.output)))
        children = tuple(inline(child) for child in node.children)
        return node.with_children(children) if any(a is not b for a, b in zip(children, node.children)) else node

    return inline(plan)


def _max_id(value: Any) -> int:
    """The largest column id anywhere in ``value`` (fields not compared included: a consumer's
    producer), -1 when there is none."""
    if isinstance(value, Column):
        return value.id
    if is_dataclass(value) and not isinstance(value, type):
        return max((_max_id(getattr(value, f.name)) for f in fields(value)), default=-1)
    if isinstance(value, (tuple, list, set, frozenset)):
        return max((_max_id(v) for v in value), default=-1)
    return -1
