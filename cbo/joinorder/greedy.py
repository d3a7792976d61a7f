"""Greedy operator ordering (GOO), for join regions too large to enumerate exhaustively.

After Fegaras, "A New Heuristic for Optimizing Large Queries" (DEXA 1998): start with every
relation as its own tree; repeatedly join the two trees, linked by an edge, whose join has
the fewest estimated rows; stop when one tree is left. The trees are bushy, no cross product
is formed while an edge remains, and each step costs one estimate per new candidate pair
(estimates of untouched pairs are kept), so a 50-relation star takes about 1,200 estimates.

DuckDB falls back to the same heuristic when its DPhyp enumeration exceeds a pair budget.
"""

from __future__ import annotations

from collections.abc import Callable

from cbo.joinorder.dphyp import Hypergraph

RowsOf = Callable[[int, int], float]      # estimated rows of joining two sets
JoinSets = Callable[[int, int], None]     # build the join of two sets


def greedy_order(graph: Hypergraph, rows_of: RowsOf, join: JoinSets) -> list[tuple[int, int]]:
    """Join all relations of ``graph``; returns the joins made, in order."""
    trees = [1 << i for i in range(graph.n)]
    known: dict[tuple[int, int], float] = {}
    made = []
    while len(trees) > 1:
        best: tuple[float, int, int] | None = None
        for x in range(len(trees)):
            for y in range(x + 1, len(trees)):
                a, b = trees[x], trees[y]
                if not graph.connected(a, b):
                    continue
                rows = known.get((a, b))
                if rows is None:
                    rows = known[(a, b)] = rows_of(a, b)
                if best is None or rows < best[0]:
                    best = (rows, x, y)
        if best is None:
            raise ValueError("the join graph is not connected")
        _, x, y = best
        a, b = trees[x], trees[y]
        join(a, b)
        made.append((a, b))
        trees[x] = a | b
        del trees[y]
    return made
