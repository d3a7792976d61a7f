"""The join region of a memo group, read into a join graph (``cbo.joinorder.graph``).

A region is read from each group's written (first) expression, from the region's top join
down: the reorderable joins (``is_region_join``) are the region, every other group below them
is one of its relations. A left join whose padded columns another predicate reads cannot move:
the region is read again with it kept whole, until no such join is left.
"""

from __future__ import annotations

from cbo.ir.expressions import columns_of, conjuncts
from cbo.ir.operators import Join
from cbo.joinorder.graph import GraphBuilder, JoinGraph, build_hypergraph, is_region_join, pinned_left_joins
from cbo.memo.memo import Group, group_of


def region_of(root: Group) -> JoinGraph[Group]:
    """Read the join region whose top is ``root`` (from each group's written expression)."""
    pinned: set[int] = set()
    while True:
        graph = _read(root, pinned)
        blocked = pinned_left_joins(graph)
        if not blocked:
            break
        pinned |= blocked
    build_hypergraph(graph)
    return graph


def _read(root: Group, pinned: set[int]) -> JoinGraph[Group]:
    builder: GraphBuilder[Group] = GraphBuilder(root)

    def read(group: Group, top: bool = False) -> int:
        expr = group.first
        if not top and (not is_region_join(expr) or group.id in pinned):
            return builder.relation(group)
        assert isinstance(expr, Join)
        left_group, right_group = group_of(expr.left), group_of(expr.right)
        if expr.kind == "inner":
            left = read(left_group)
            right = read(right_group)
            builder.inner(conjuncts(expr.condition))
        else:
            movable = group.id not in pinned and bool(columns_of(expr.condition) & set(expr.left.output))
            if not movable and not top:
                return builder.relation(group)
            left = read(left_group) if movable else builder.relation(left_group)
            right = builder.relation(right_group)
            builder.non_inner(expr, group.id, left, right)
        builder.written(left | right, group, group.id)
        return left | right

    read(root, top=True)
    return builder.graph()
