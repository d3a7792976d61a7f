"""Synthetic join graphs with statistics but no data: chain, cycle, star, clique, snowflake.

Each relation ``t{i}`` has a unique key ``id`` and one foreign-key column per edge it starts.
Row counts are drawn from a seeded generator (fact tables large, dimensions small), distinct
counts follow the keys (a foreign key has at most as many values as the key it references),
and the written plan joins the relations left-deep in index order, each join carrying the
edges to relations already joined. The known number of csg-cmp pairs of each shape
(Moerkotte & Neumann, VLDB 2006) is what a duplicate-free enumerator must consider.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from cbo.ir import types as T
from cbo.ir.expressions import TRUE, Call, Column, ColumnFactory, ColumnRef, Expr, conjunction
from cbo.ir.operators import Join, Plan, Scan
from stats.model import ColumnStats, TableStats

SHAPES = ("chain", "cycle", "star", "clique", "snowflake")
SNOWFLAKE_FANOUT = 3


def edges_of(shape: str, n: int) -> list[tuple[int, int]]:
    """(referencing, referenced) relation pairs."""
    if shape == "chain":
        return [(i, i + 1) for i in range(n - 1)]
    if shape == "cycle":
        return [(i, i + 1) for i in range(n - 1)] + ([(n - 1, 0)] if n > 2 else [])
    if shape == "star":
        return [(0, i) for i in range(1, n)]
    if shape == "clique":
        return [(i, j) for i in range(n) for j in range(i + 1, n)]
    if shape == "snowflake":
        return [((i - 1) // SNOWFLAKE_FANOUT, i) for i in range(1, n)]
    raise ValueError(f"unknown shape {shape!r} (expected one of: {', '.join(SHAPES)})")


def expected_pairs(shape: str, n: int) -> int:
    """The number of csg-cmp pairs of the shape's join graph."""
    if shape == "chain" or (shape == "cycle" and n <= 2):
        return (n ** 3 - n) // 6
    if shape == "cycle":
        return (n ** 3 - 2 * n * n + n) // 2
    if shape == "star":
        return (n - 1) * 2 ** (n - 2) if n >= 2 else 0
    if shape == "clique":
        return (3 ** n - 2 ** (n + 1) + 1) // 2
    if shape == "snowflake":
        return _tree_pairs(n, edges_of("snowflake", n))
    raise ValueError(shape)


def _tree_pairs(n: int, edges: list[tuple[int, int]]) -> int:
    """For a tree, each connected subset of k relations splits into k - 1 pairs (one per edge
    inside it); count subtrees by size with a polynomial per rooted subtree."""
    children: dict[int, list[int]] = {i: [] for i in range(n)}
    for parent, child in edges:
        children[parent].append(child)

    def rooted(v: int) -> list[int]:   # counts[k] = subtrees rooted at v with k nodes
        counts = [0, 1]
        for c in children[v]:
            sub = rooted(c)
            combined = [0] * (len(counts) + len(sub) - 1)
            for i, a in enumerate(counts):
                if a:
                    combined[i] += a                       # c not taken
                    for j, b in enumerate(sub):
                        if b and i + j < len(combined):
                            combined[i + j] += a * b
            counts = combined
        return counts

    total = 0
    for v in range(n):
        for k, count in enumerate(rooted(v)):
            total += count * max(k - 1, 0)
    return total


@dataclass
class Workload:
    shape: str
    n: int
    plan: Plan
    stats: dict[str, TableStats]


def build(shape: str, n: int, seed: int = 0) -> Workload:
    rng = random.Random(f"{shape}-{n}-{seed}")
    factory = ColumnFactory()
    edges = edges_of(shape, n)
    rows = [float(rng.choice([1e6, 3e6, 1e7])) if i == 0 else float(10 ** rng.uniform(2, 6)) for i in range(n)]
    if shape in ("chain", "cycle", "clique"):
        rows = [float(10 ** rng.uniform(2, 7)) for _ in range(n)]
    scans, stats, fk_columns = [], {}, {}
    for i in range(n):
        names = ["id"] + [f"fk{j}" for a, j in edges if a == i]
        columns = tuple(factory.new(name, T.BIGINT, nullable=False) for name in names)
        table = f"bench.t{i}"
        scans.append(Scan(table, columns, tuple(names), ((columns[0],),)))
        column_stats = {"id": _int_column("id", rows[i], rows[i])}
        for a, j in edges:
            if a == i:
                fk_columns[(i, j)] = columns[names.index(f"fk{j}")]
                column_stats[f"fk{j}"] = _int_column(f"fk{j}", min(rows[j], rows[i]), rows[j])
        stats[table] = TableStats(table, rows[i], rows[i] * 8 * len(names), "2026-01-01T00:00:00Z", "synthetic",
                                  "synthetic", columns=column_stats)
    plan: Plan = scans[0]
    for i in range(1, n):
        conjuncts = [_eq(fk_columns[(a, b)], scans[b].columns[0]) if b <= i and a <= i else None
                     for a, b in edges if max(a, b) == i]
        present = [c for c in conjuncts if c is not None]
        plan = Join("inner", plan, scans[i], conjunction(present) if present else TRUE)
    return Workload(shape, n, plan, stats)


def _eq(a: Column, b: Column) -> Expr:
    return Call("eq", (ColumnRef(a), ColumnRef(b)), T.BOOLEAN)


def _int_column(name: str, distinct: float, domain: float) -> ColumnStats:
    return ColumnStats(name, "number", 0.0, distinct, 1, int(max(domain, 1)), 8.0, 8)
