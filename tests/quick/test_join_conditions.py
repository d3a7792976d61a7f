"""A join region's conditions are shared by the pairs that join on the same class equalities
(``JoinGraph.condition_and_keys`` keeps them by the equalities' identity): each must be the
condition and keys the pair's own conjuncts make."""

from __future__ import annotations

import pytest

from benchmarks.join_enumeration.shapes import build
from cbo.estimate import Estimator
from cbo.ir.expressions import Expr, conjunction
from cbo.joinorder.dphyp import DPhyp
from cbo.joinorder.graph import JoinGraph
from cbo.memo.memo import Memo
from cbo.memo.region import region_of


def _plain(graph: JoinGraph, left: int, right: int) -> tuple[Expr, tuple]:
    """The pair's condition and keys computed afresh: each class's equality, then the conjuncts."""
    found, pairs = [], []
    for cls in graph.classes:
        if cls.mask & left and cls.mask & right:
            equality, pair = cls.equality_and_pair(left, right)
            found.append(equality)
            pairs.append(pair)
    graph._place_conjuncts(left, right, found, pairs)
    return conjunction(found), tuple(pairs)


@pytest.mark.parametrize("shape,n", [("clique", 6), ("star", 6), ("cycle", 6), ("snowflake", 7)])
def test_shared_conditions_are_each_pairs_own(shape: str, n: int) -> None:
    workload = build(shape, n, 0)
    memo = Memo(Estimator(workload.stats))
    graph = region_of(memo.insert(workload.plan))
    pairs: list[tuple[int, int]] = []
    DPhyp(graph.hypergraph, lambda a, b: pairs.append((a, b))).run()
    assert pairs
    for a, b in pairs:
        kind, swap = graph.join_kind(a, b)
        left, right = (b, a) if swap else (a, b)
        condition, keys = graph.condition_and_keys(left, right, kind)
        assert (condition, keys) == _plain(graph, left, right), (left, right)
    if shape == "clique":   # joins on the same equalities share one condition object
        conditions = {id(graph.condition_and_keys(a, b, "inner")[0]) for a, b in pairs}
        assert len(conditions) < len(pairs)
