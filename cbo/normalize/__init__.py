"""Normalization: rewrites that always help, applied once before the search.

Each pass is one idea in its own module: ``set_ops`` (INTERSECT / EXCEPT as semi / anti joins
with a DISTINCT), ``outer_joins`` (outer joins to inner where something above rejects their
padding), ``pushdown`` (filters to the data, comma joins to equi-joins) and ``prune`` (columns
nobody reads).
"""

from __future__ import annotations

from cbo.ir.operators import Plan
from cbo.normalize.outer_joins import simplify_outer_joins
from cbo.normalize.prune import prune_columns
from cbo.normalize.pushdown import push_filters
from cbo.normalize.set_ops import set_ops_as_joins


def normalize(plan: Plan) -> Plan:
    return prune_columns(push_filters(simplify_outer_joins(set_ops_as_joins(plan))))


__all__ = ["normalize", "prune_columns", "push_filters", "set_ops_as_joins", "simplify_outer_joins"]
