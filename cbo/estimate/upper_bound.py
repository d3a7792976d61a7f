"""A pessimistic estimate of an inner-join set: an upper bound from degree bounds.

In the spirit of PessEst (Cai et al., SIGMOD 2019) and SafeBound (Deeds et al., SIGMOD 2023):
a join never has more rows than one leaf's rows times, for every further leaf joined through a
class already reached, the most rows that leaf holds for one value of its column in that class
(its *degree*). The degree of a column is its largest value frequency in the stored statistics
(the top most-common value; without MCVs the densest histogram segment's rows per value), which
filters only lower; a unique key's degree is 1, and no degree exceeds its leaf's rows. Every
leaf is tried as the first, the next leaf joined is always the one of smallest degree through
the classes reached so far, and the smallest product is the bound. Conditions other than
equalities between leaves are left out (they only remove rows), so is a second class between
two leaves already joined.

The leaves' own rows are estimates (a filter's bound would need the filter's worst case, which
statistics do not give), so the result bounds the join of the estimated leaves. Which order
built the set does not matter: the bound is a function of its leaves and classes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from cbo.estimate.column import ColumnEstimate
from cbo.estimate.relation import Leaf
from cbo.ir.expressions import Column


def max_frequency(column: ColumnEstimate) -> float:
    """The rows of the column's most frequent value, as its statistics know it."""
    live = column.live
    if live.mcv:
        return max(rows for _, rows in live.mcv)
    densest = 0.0
    for segment in live.segments:
        if segment.distinct > 0:
            densest = max(densest, segment.rows / max(segment.distinct, 1.0))
    return max(densest, 1.0) if live.segments else math.inf


def degree(leaf: Leaf, column: Column) -> float:
    """The most rows of ``leaf`` holding one value of ``column``."""
    rows = leaf.estimate.rows
    if frozenset([column]) in leaf.unique:
        return min(1.0, rows)
    origin = leaf.estimate.origins.get(column)
    statistics = origin.base if origin is not None and origin.base is not None else leaf.estimate.column(column)
    return min(max_frequency(statistics), rows)


def join_bound(leaves: Sequence[Leaf], classes: Sequence[tuple[Column, ...]], leaf_of: dict[Column, int]) -> float:
    """The least, over first leaves, of the degree-bound product (see the module)."""
    count = len(leaves)
    in_leaf: list[dict[int, list[Column]]] = [{} for _ in range(count)]
    for k, members in enumerate(classes):
        for c in members:
            in_leaf[leaf_of[c]].setdefault(k, []).append(c)
    degrees = [{k: min(degree(leaves[i], c) for c in cs) for k, cs in in_leaf[i].items()} for i in range(count)]
    best = math.inf
    for first in range(count):
        total = leaves[first].estimate.rows
        joined = {first}
        reached = set(in_leaf[first])
        while len(joined) < count and total > 0:
            choice: tuple[float, int] | None = None
            for i in range(count):
                if i in joined:
                    continue
                shared = [degrees[i][k] for k in in_leaf[i] if k in reached]
                # a leaf no class reaches yet joins as a cross product, after the others
                found = (min(shared), i) if shared else (math.inf, i)
                if choice is None or found < choice:
                    choice = found
            assert choice is not None
            factor, i = choice
            total *= leaves[i].estimate.rows if math.isinf(factor) else factor
            joined.add(i)
            reached |= set(in_leaf[i])
        best = min(best, total)
    return best


__all__ = ["degree", "join_bound", "max_frequency"]
