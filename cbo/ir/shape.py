"""A plan's shape: its structure and expressions with column identities numbered in order of
first appearance, so two subplans that differ only in their columns' ids have equal shapes.

A query that names a view twice (TPC-H Q15's ``revenue0``: once joined, once under ``max``) is
bound into two copies of the view's plan with fresh column ids; their shapes are equal, and
equal shapes compute the same rows, column for column in ``output`` order (the shape holds the
output's numbers too). The JDBC pushdown uses this to have a source compute a repeated
aggregation once (``cbo.sqlgen``: a ``WITH ... AS MATERIALIZED`` common table expression) and to
charge its work once (``cbo.memo.rules.jdbc_pushdown``).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import fields, is_dataclass
from typing import Any

from cbo.ir.expressions import Column
from cbo.ir.operators import Plan


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
