"""The join graph of a join region: which relations a region joins and by which predicates.

A *region* is a maximal tree of reorderable joins in the memo: inner joins, and left, semi
and anti joins whose right side can move as a unit. Its *relations* are the groups below it
(scans, aggregates, other regions' roots). The graph records

* inner-join conjuncts with the set of relations each reads (``T``). A conjunct is applied at
  the join that first brings all of ``T`` together, whatever the order;
* equivalence classes of columns equated by inner-join equalities (``a = b``, ``b = c``), so
  the enumerator may also join ``a`` with ``c``: the transitive edges. Joining two sets that
  both hold members of a class needs one equality, not all, so a class contributes exactly
  one conjunct per join. A class is only used where each relation holds at most one of its
  columns (two columns of one relation equated only by transitivity would otherwise be lost);
* outer, semi and anti joins as hyperedges from the relations their condition reads on the
  left (the *TES*) to their right side, a relation of its own. Such a join may be applied to
  any connected set holding its TES: (A ⋈ B) ⟕ R = (A ⟕ R) ⋈ B when the outer join's
  condition does not read B and the inner join's does not read R (the same holds for semi
  and anti joins, and these joins commute with each other on their left side under the same
  conditions). A left join whose padded columns are read by another predicate of the
  region cannot move (its NULLs would meet that predicate at a different place); it then
  stays a relation of the region, as full, right and mark joins always do.

Relations are numbered in the order the written tree lists them (left to right), so the
enumeration, and with it the chosen plan, is deterministic.

The graph knows its relations only by their output columns: whoever walks the written tree
(the memo, ``cbo.memo.region``) tells a ``GraphBuilder`` what it finds, each written join with a
key of the walker's own (a memo group's id), and ``pinned_left_joins`` which of those keys to
keep whole when it walks again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from cbo.ir import types as T
from cbo.ir.expressions import TRUE, Call, Column, ColumnRef, Expr, and_of_distinct, columns_of
from cbo.ir.kinds import JoinKind
from cbo.ir.operators import Join, equated_columns
from cbo.joinorder.dphyp import Hypergraph

MOVABLE_KINDS: tuple[JoinKind, ...] = ("left", "semi", "anti")


class Relation(Protocol):
    """A relation of a region, as the graph reads it: its output columns."""

    @property
    def output(self) -> tuple[Column, ...]: ...


R = TypeVar("R", bound=Relation)


@dataclass
class NonInnerEdge:
    kind: JoinKind
    tes: int              # relations on the left that the condition reads
    right: int            # the bit of the right side's relation
    condition: Expr


@dataclass
class EquivalenceClass:
    members: dict[int, Column]   # relation index -> its column in the class
    written: list[tuple[int, int, Expr]] = field(default_factory=list)   # the query's own equalities

    def __post_init__(self) -> None:
        self.mask = sum(1 << i for i in self.members)
        # _pairs' keys: the lowest member bit on the right shifted past every member's bit, or
        # the lowest on the left (one int, not a pair: read for each class of each join pair)
        self.shift = self.mask.bit_length()
        self._equalities: dict[tuple[int, int], Expr] = {}
        self._pairs: dict[int, tuple[Expr, tuple[Column, Column]]] = {}   # by lowest bits (see shift)
        for i, j, conjunct in self.written:
            self._equalities[(i, j)] = self._equalities[(j, i)] = conjunct

    def equality_and_pair(self, left: int, right: int) -> tuple[Expr, tuple[Column, Column]]:
        """``equality`` and the pair (member in ``left``, member in ``right``) it equates."""
        low_left, low_right = left & self.mask, right & self.mask
        lowest_left, lowest_right = low_left & -low_left, low_right & -low_right
        key = (lowest_right << self.shift) | lowest_left
        found = self._pairs.get(key)
        if found is None:
            i, j = lowest_left.bit_length() - 1, lowest_right.bit_length() - 1
            found = self._pairs[key] = (self.equality(left, right), (self.members[i], self.members[j]))
        return found

    def equality(self, left: int, right: int) -> Expr:
        """One equality joining the class's members in ``left`` with those in ``right`` (sets of
        relations): between the lowest member on each side, the query's own conjunct if it
        wrote that one. Any pair would do: all members are equal on both sides already."""
        low_left, low_right = left & self.mask, right & self.mask
        i = (low_left & -low_left).bit_length() - 1
        j = (low_right & -low_right).bit_length() - 1
        found = self._equalities.get((i, j))
        if found is None:
            a, b = self.members[i], self.members[j]
            found = self._equalities[(i, j)] = Call("eq", (ColumnRef(a), ColumnRef(b)), T.BOOLEAN)
        return found


@dataclass
class JoinGraph(Generic[R]):
    root: R
    relations: list[R] = field(default_factory=list)
    predicates: list[tuple[int, Expr]] = field(default_factory=list)   # (T mask, conjunct)
    classes: list[EquivalenceClass] = field(default_factory=list)
    non_inner: dict[int, NonInnerEdge] = field(default_factory=dict)   # by right relation bit
    everywhere: list[Expr] = field(default_factory=list)               # conjuncts reading no relation
    written: dict[int, R] = field(default_factory=dict)                # the written tree's joins by set
    members: set[int] = field(default_factory=set)                     # the written joins' keys
    padded: dict[int, frozenset[Column]] = field(default_factory=dict) # left joins' right columns by bit
    left_join_groups: dict[int, int] = field(default_factory=dict)     # right relation bit -> left join's key
    hypergraph: Hypergraph = field(default_factory=lambda: Hypergraph(0))
    _column_bits: dict[int, int] | None = None   # column id -> its relation's bit (see _equated)
    # condition_and_keys' answers by the identity of the class equalities they join on: a
    # 10-relation clique's 28,501 pairs join on 45 distinct conditions
    _class_rows: list[tuple[int, int, dict, EquivalenceClass]] | None = None   # (mask, shift, _pairs, class)
    _conditions: dict[tuple[int, ...], tuple[Expr, tuple[tuple[Column, Column], ...]]] = \
        field(default_factory=dict)
    # set of relations -> the bits (class indexes) of the classes holding a member in it: the
    # classes spanning two sets are then one AND, not a walk over every class per join pair
    # (a 12-relation star's pairs each span one of its 11 classes)
    _meeting: dict[int, int] = field(default_factory=dict)
    _meeting_classes: int = 0   # how many classes _meeting was found over (the graph is read first)

    @property
    def size(self) -> int:
        return len(self.relations)

    # -- joining two sets ------------------------------------------------------------------------

    def join_kind(self, s1: int, s2: int) -> tuple[JoinKind, bool]:
        """The kind of join between ``s1`` and ``s2`` and whether the sides must be swapped
        (a non-inner join keeps its right side on the right)."""
        edge = self.non_inner.get(s2)
        if edge is not None and edge.tes & s1 == edge.tes:
            return edge.kind, False
        edge = self.non_inner.get(s1)
        if edge is not None and edge.tes & s2 == edge.tes:
            return edge.kind, True
        return "inner", False

    def has_condition(self, left: int, right: int) -> bool:
        """Whether an inner join of ``left`` and ``right`` joins on something (its condition
        from ``condition_and_keys`` is not TRUE): some class or conjunct spans both sides."""
        if self._classes_meeting(left) & self._classes_meeting(right):
            return True
        union = left | right
        for t, _ in self.predicates:
            if t & union == t and t & left and t & right:
                return True
        return False

    def _classes_meeting(self, relations: int) -> int:
        """The bits (by index in ``classes``) of the classes with a member in ``relations``."""
        if self._meeting_classes != len(self.classes):
            self._meeting.clear()
            self._meeting_classes = len(self.classes)
        found = self._meeting.get(relations)
        if found is None:
            found = 0
            for index, cls in enumerate(self.classes):
                if cls.mask & relations:
                    found |= 1 << index
            self._meeting[relations] = found
        return found

    def condition(self, left: int, right: int, kind: JoinKind) -> Expr:
        """The conjuncts that join ``left`` and ``right``: those first covered by their union."""
        return self.condition_and_keys(left, right, kind)[0]

    def condition_and_keys(self, left: int, right: int,
                           kind: JoinKind) -> tuple[Expr, tuple[tuple[Column, Column], ...] | None]:
        """The joining conjuncts and, for an inner join, the pairs (left column, right column)
        its equalities equate, in conjunct order: what ``Join.equi_keys`` would find in the
        condition, known here without reading it again (None for other kinds)."""
        if kind != "inner":
            return self.non_inner[right].condition, None
        union = left | right
        joined = []   # each class's (equality, pair), kept by the class for the graph's life
        rows = self._class_rows
        if rows is None or len(rows) != len(self.classes):
            rows = self._class_rows = [(cls.mask, cls.shift, cls._pairs, cls) for cls in self.classes]
        spanning = self._classes_meeting(left) & self._classes_meeting(right)
        while spanning:   # the spanning classes, in class order (the conjuncts' order)
            low = spanning & -spanning
            spanning ^= low
            mask, shift, known_pairs, cls = rows[low.bit_length() - 1]
            # (equality_and_pair inlined: a 10-relation clique asks 28,501 pairs)
            on_left, on_right = mask & left, mask & right
            known = known_pairs.get(((on_right & -on_right) << shift) | (on_left & -on_left))
            if known is None:
                known = cls.equality_and_pair(left, right)
            joined.append(known)
        placed = False
        for t, _ in self.predicates:
            if t & union == t and t & left and t & right:
                placed = True
                break
        if not placed:
            # Only class equalities: the same ones (by identity) make the same condition.
            key = tuple([id(known) for known in joined])
            answer = self._conditions.get(key)
            if answer is None:
                answer = self._conditions[key] = self._joined_on(joined, None)
            return answer
        return self._joined_on(joined, (left, right))

    def _joined_on(self, joined: list[tuple[Expr, tuple[Column, Column]]],
                   sides: tuple[int, int] | None) -> tuple[Expr, tuple[tuple[Column, Column], ...]]:
        """The condition and keys of ``condition_and_keys``: the classes' equalities, then (for
        ``sides``, the two sets joined, if given) the conjuncts first covered by their union."""
        found = [equality for equality, _ in joined]
        pairs = [pair for _, pair in joined]
        if sides is not None:
            self._place_conjuncts(*sides, found, pairs)
        if not found:
            return TRUE, ()
        # Distinct by construction (each class and conjunct once): no need for conjunction()'s
        # flattening and de-duplication, which would cost more than the rest of a join pair.
        return (found[0] if len(found) == 1 else and_of_distinct(tuple(found))), tuple(pairs)

    def _place_conjuncts(self, left: int, right: int, found: list[Expr], pairs: list[tuple[Column, Column]]) -> None:
        """Add the conjuncts first covered by ``left | right``, and the pairs they equate."""
        union = left | right
        for t, conjunct in self.predicates:
            if t & union == t and t & left and t & right:
                found.append(conjunct)
                placed = self._equated(conjunct)
                if placed is not None:
                    (a, a_bit), (b, b_bit) = placed
                    if a_bit & left and b_bit & right:
                        pairs.append((a, b))
                    elif b_bit & left and a_bit & right:
                        pairs.append((b, a))

    def _equated(self, conjunct: Expr) -> tuple[tuple[Column, int], tuple[Column, int]] | None:
        """``a = b`` as ((a, a's relation bit), (b, b's relation bit)), else None."""
        if self._column_bits is None:
            self._column_bits = {c.id: 1 << i for i, group in enumerate(self.relations) for c in group.output}
        pair = equated_columns(conjunct)
        if pair is None:
            return None
        a, b = pair
        a_bit, b_bit = self._column_bits.get(a.id, 0), self._column_bits.get(b.id, 0)
        return (a, a_bit), (b, b_bit)


def is_region_join(expr: object) -> bool:
    return isinstance(expr, Join) and (expr.kind == "inner" or expr.kind in MOVABLE_KINDS)


class GraphBuilder(Generic[R]):
    """The graph of a region, told by whoever walks its written tree, in the tree's order
    (left to right): each relation, each inner join's conjuncts, each non-inner join, and each
    written join's set with the walker's key for it."""

    def __init__(self, root: R):
        self._graph: JoinGraph[R] = JoinGraph(root)
        self.owner: dict[Column, int] = {}
        self.inner_conjuncts: list[Expr] = []
        self.left_join_padded: dict[int, frozenset[Column]] = {}   # key of the left join -> its right columns
        self.left_join_groups: dict[int, int] = {}                  # right relation bit -> key of the left join

    def relation(self, relation: R) -> int:
        """A relation of the region: its bit."""
        index = len(self._graph.relations)
        self._graph.relations.append(relation)
        for column in relation.output:
            self.owner[column] = index
        return 1 << index

    def mask(self, expr: Expr) -> int:
        """The relations ``expr`` reads."""
        found = 0
        for column in columns_of(expr):
            index = self.owner.get(column)
            if index is not None:
                found |= 1 << index
        return found

    def inner(self, conjuncts: list[Expr]) -> None:
        """An inner join's conjuncts."""
        self.inner_conjuncts.extend(conjuncts)

    def non_inner(self, join: Join, key: int, left: int, right: int) -> None:
        """A left, semi or anti join of the relations ``left`` with the relation ``right``, its
        TES the relations of ``left`` its condition reads (all of them if none: an immovable
        join at the top applies to its whole left side)."""
        tes = (self.mask(join.condition) & left) or left
        self._graph.non_inner[right] = NonInnerEdge(join.kind, tes, right, join.condition)
        if join.kind == "left":
            self.left_join_padded[key] = frozenset(join.right.output)
            self.left_join_groups[right] = key

    def written(self, relations: int, join: R, key: int) -> None:
        """The written tree joins ``relations`` in ``join`` (whose key is ``key``)."""
        self._graph.written[relations] = join
        self._graph.members.add(key)

    def graph(self) -> JoinGraph[R]:
        """The graph told so far, its conjuncts classified (the hypergraph not built yet)."""
        graph = self._graph
        _classify_conjuncts(graph, self)
        graph.padded = {bit: self.left_join_padded[key] for bit, key in self.left_join_groups.items()}
        graph.left_join_groups = self.left_join_groups
        return graph


def _classify_conjuncts(graph: JoinGraph[R], reader: GraphBuilder[R]) -> None:
    equalities: list[tuple[int, int, Column, Column, Expr]] = []
    for conjunct in reader.inner_conjuncts:
        if conjunct == TRUE:
            continue
        t = reader.mask(conjunct)
        pair = equated_columns(conjunct)
        if pair is not None and bin(t).count("1") == 2:
            a, b = pair
            equalities.append((reader.owner[a], reader.owner[b], a, b, conjunct))
            continue
        if t == 0:
            graph.everywhere.append(conjunct)
        else:
            graph.predicates.append((t, conjunct))
    # Union-find over the equated columns.
    parent: dict[Column, Column] = {}

    def find(c: Column) -> Column:
        while parent.get(c, c) != c:
            c = parent[c]
        return c

    for _, _, a, b, _ in equalities:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb, key=lambda c: c.id)] = min(ra, rb, key=lambda c: c.id)
    members: dict[Column, dict[int, list[Column]]] = {}
    for i, j, a, b, _ in equalities:
        root = find(a)
        members.setdefault(root, {}).setdefault(i, [])
        members[root].setdefault(j, [])
        for index, column in ((i, a), (j, b)):
            if column not in members[root][index]:
                members[root][index].append(column)
    usable = {root for root, by_relation in members.items() if all(len(cs) == 1 for cs in by_relation.values())}
    for root in sorted(usable, key=lambda c: c.id):
        written = [(i, j, conjunct) for i, j, a, _, conjunct in equalities if find(a) == root]
        graph.classes.append(EquivalenceClass({i: cs[0] for i, cs in sorted(members[root].items())}, written))
    for i, j, a, _, conjunct in equalities:
        if find(a) not in usable:
            graph.predicates.append(((1 << i) | (1 << j), conjunct))


def pinned_left_joins(graph: JoinGraph[R]) -> set[int]:
    """The keys of the left joins whose padded columns another predicate of the region reads:
    they cannot move, and the region is read again with them kept whole."""
    padded = graph.padded
    if not padded:
        return set()
    read: list[tuple[Expr, int | None]] = [(p, None) for _, p in graph.predicates]
    read += [(p, None) for p in graph.everywhere]
    for cls in graph.classes:
        read += [(ColumnRef(c), None) for c in cls.members.values()]
    read += [(edge.condition, bit) for bit, edge in graph.non_inner.items()]
    blocked = set()
    for bit, columns in padded.items():
        for expr, owner in read:
            if owner != bit and columns_of(expr) & columns:
                blocked.add(graph.left_join_groups[bit])
    return blocked


def build_hypergraph(graph: JoinGraph[R]) -> None:
    """The graph's hypergraph: its edges, and cross products between the parts they leave apart."""
    h = Hypergraph(graph.size)
    for t, _ in graph.predicates:
        low = t & -t
        h.add_edge(low, t ^ low)
    for cls in graph.classes:
        indexes = list(cls.members)
        for x in range(len(indexes)):
            for y in range(x + 1, len(indexes)):
                h.add_edge(1 << indexes[x], 1 << indexes[y])
    for bit, edge in graph.non_inner.items():
        h.add_edge(edge.tes, bit)
    # Parts the predicates do not connect are joined by cross products between whole parts.
    parts = _components(h, graph)
    for x in range(len(parts)):
        for y in range(x + 1, len(parts)):
            h.add_edge(parts[x], parts[y])
    graph.hypergraph = h


def _components(h: Hypergraph, graph: JoinGraph[R]) -> list[int]:
    parts = [1 << i for i in range(h.n) if (1 << i) not in graph.non_inner]
    right_sides = [bit for bit in graph.non_inner]
    changed = True
    while changed:
        changed = False
        for x in range(len(parts)):
            for y in range(x + 1, len(parts)):
                if h.connected(parts[x], parts[y]) or _linked_by_hyperedge(h, parts[x], parts[y]):
                    parts[x] |= parts[y]
                    del parts[y]
                    changed = True
                    break
            if changed:
                break
    # A movable join's right side belongs to the part holding the lowest relation of its TES.
    for bit in right_sides:
        tes = graph.non_inner[bit].tes
        for index, part in enumerate(parts):
            if part & (tes & -tes):
                parts[index] |= bit
    return parts


def _linked_by_hyperedge(h: Hypergraph, a: int, b: int) -> bool:
    for u, v in h.hyperedges:
        both = u | v
        if both & a and both & b and not both & ~(a | b):
            return True
    return False

