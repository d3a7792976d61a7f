"""DPhyp: every connected bushy join tree of a join hypergraph, each pair once.

After Moerkotte & Neumann, "Dynamic Programming Strikes Back" (SIGMOD 2008). Relations are
bits 0..n-1 of an integer; an edge joins two sets of relations (``u``, ``v``): a simple edge
has one relation on each side, a hyperedge more (a predicate over three relations, or an outer
or semi join whose right side must join as a whole with all the relations its condition reads).

The enumeration emits every *csg-cmp pair* (S1, S2): S1 and S2 disjoint, each connected, and
some edge between them. Each unordered pair is emitted exactly once and only after every pair
that builds S1 and S2 themselves, so a caller that records a plan per emitted set always finds
plans for both sides. No pair joins sets without an edge (no cross products); callers that
must join disconnected parts add edges between them first.

The algorithm grows connected subgraphs from each relation towards higher-numbered neighbours
only (``EnumerateCsgRec``) and for each one grows complements from neighbours excluded from
that growth (``EmitCsg``/``EnumerateCmpRec``), so neither a set nor a pair is met twice. For
hypergraphs a grown set is only used when some earlier pair produced it (``in self.built``):
adding a hyperedge's representative relation alone does not make a set connected.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

PairCallback = Callable[[int, int], None]


def bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def subsets(mask: int) -> Iterator[int]:
    """Non-empty subsets of ``mask``, smaller ones first (by value)."""
    sub = 0
    while True:
        sub = (sub - mask) & mask
        if sub == 0:
            return
        yield sub


class Hypergraph:
    def __init__(self, n: int):
        self.n = n
        self.neighbors = [0] * n                  # simple edges
        self.hyperedges: list[tuple[int, int]] = []
        self._adjacent: dict[int, int] = {}       # set -> its relations' simple neighbours, see adjacent

    def add_edge(self, u: int, v: int) -> None:
        """An edge between relation sets ``u`` and ``v`` (bitmasks, disjoint, non-empty)."""
        if u & v or not u or not v:
            raise ValueError("an edge joins two disjoint non-empty sets")
        self._adjacent.clear()
        if u & (u - 1) == 0 and v & (v - 1) == 0:
            i, j = u.bit_length() - 1, v.bit_length() - 1
            self.neighbors[i] |= v
            self.neighbors[j] |= u
        elif (u, v) not in self.hyperedges and (v, u) not in self.hyperedges:
            self.hyperedges.append((u, v))

    def adjacent(self, s: int) -> int:
        """The relations a simple edge links to some relation of ``s`` (``s``'s own included):
        kept per set, since the enumeration asks for the same sets again and again."""
        found = self._adjacent.get(s)
        if found is None:
            found = 0
            for i in bits(s):
                found |= self.neighbors[i]
            self._adjacent[s] = found
        return found

    def neighborhood(self, s: int, excluded: int) -> int:
        found = self.adjacent(s)
        forbidden = s | excluded
        found &= ~forbidden
        for u, v in self.hyperedges:
            if u & s == u and not v & forbidden:
                found |= v & -v
            elif v & s == v and not u & forbidden:
                found |= u & -u
        return found

    def connected(self, s1: int, s2: int) -> bool:
        if self.adjacent(s1) & s2:
            return True
        for u, v in self.hyperedges:
            if (u & s1 == u and v & s2 == v) or (v & s1 == v and u & s2 == u):
                return True
        return False

    def is_connected(self, s: int) -> bool:
        """Whether the relations of ``s`` form one connected part (for checks and tests)."""
        low = s & -s
        reached = low
        while True:
            grown = reached
            for i in bits(reached):
                grown |= self.neighbors[i] & s
            for u, v in self.hyperedges:
                if (u | v) & ~s:
                    continue
                if u & grown == u:
                    grown |= v
                elif v & grown == v:
                    grown |= u
            if grown == reached:
                return reached == s
            reached = grown


class DPhyp:
    """Runs the enumeration; ``on_pair(S1, S2)`` is called once per csg-cmp pair."""

    def __init__(self, graph: Hypergraph, on_pair: PairCallback, should_stop: Callable[[], bool] | None = None):
        self.graph = graph
        self.on_pair = on_pair
        self.should_stop = should_stop or (lambda: False)
        self.built: set[int] = {1 << i for i in range(graph.n)}
        self.pairs = 0
        self.stopped = False

    def run(self) -> None:
        for i in range(self.graph.n - 1, -1, -1):
            start = 1 << i
            self._emit_csg(start)
            self._enumerate_csg_rec(start, (1 << (i + 1)) - 1)
            if self.stopped:
                return

    def _enumerate_csg_rec(self, s1: int, excluded: int) -> None:
        neighbors = self.graph.neighborhood(s1, excluded)
        if not neighbors or self.stopped:
            return
        for n in subsets(neighbors):
            if s1 | n in self.built:
                self._emit_csg(s1 | n)
        wider = excluded | neighbors
        for n in subsets(neighbors):
            self._enumerate_csg_rec(s1 | n, wider)

    def _emit_csg(self, s1: int) -> None:
        low = s1 & -s1
        excluded = s1 | (low - 1)
        neighbors = self.graph.neighborhood(s1, excluded)
        near = self.graph.adjacent(s1)   # (connected's first test, read once for every s2)
        for v in sorted(bits(neighbors), reverse=True):
            s2 = 1 << v
            if near & s2 or self.graph.connected(s1, s2):
                self._emit_pair(s1, s2)
            below_v = neighbors & ((s2 << 1) - 1)
            self._enumerate_cmp_rec(s1, s2, excluded | below_v)

    def _enumerate_cmp_rec(self, s1: int, s2: int, excluded: int) -> None:
        neighbors = self.graph.neighborhood(s2, excluded)
        if not neighbors or self.stopped:
            return
        near, built = self.graph.adjacent(s1), self.built   # (near: connected's first test, read once)
        for n in subsets(neighbors):
            grown = s2 | n
            if grown in built and (near & grown or self.graph.connected(s1, grown)):
                self._emit_pair(s1, grown)
        wider = excluded | neighbors
        for n in subsets(neighbors):
            self._enumerate_cmp_rec(s1, s2 | n, wider)

    def _emit_pair(self, s1: int, s2: int) -> None:
        if self.stopped:
            return
        if self.should_stop():
            self.stopped = True
            return
        self.pairs += 1
        self.built.add(s1 | s2)
        self.on_pair(s1, s2)


def count_pairs(graph: Hypergraph) -> int:
    """How many csg-cmp pairs the graph has (runs the enumeration without building plans)."""
    run = DPhyp(graph, lambda a, b: None)
    run.run()
    return run.pairs
