"""ReorderJoins: every valid join order of a join region, as groups and expressions of the memo.

Pattern: the top join of a region (an inner, left, semi or anti join not itself inside a region
already read; see ``cbo.joinorder.graph``). The rule reads the region's join graph and adds,
for every pair of connected sets of its relations (S1, S2), the expression S1 ⋈ S2 to the
group of S1 ∪ S2, creating that group the first time. The written tree's groups are the groups
of their sets, so its joins gain the alternatives too, and the enumeration builds nothing twice:
DPhyp meets each pair once (``join_pairs`` in the counters equals the number of csg-cmp pairs).
Most pairs are deferred (``RegionBuilder``): their join is made only when the search reads it.

Equivalence: inner joins are commutative and associative as bags of rows when each conjunct
is applied at the first join holding all the relations it reads; equalities are transitive
(an inner join only keeps rows where all of them are TRUE); left, semi and anti joins move
along their left side as the graph module explains.

Regions with more than ``max_reordered_joins`` relations, or more than ``max_join_pairs`` pairs
(counted first by an enumeration that builds nothing), get the greedy order instead
(``cbo.joinorder.greedy``), with the written order still in the memo. With
``join_reordering_strategy = NONE`` the rule does not run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from cbo.ir.expressions import Column, Expr, conjunction
from cbo.ir.kinds import JoinKind
from cbo.ir.operators import Filter, Join, Plan, enumerated_join
from cbo.joinorder.dphyp import DPhyp
from cbo.joinorder.graph import MOVABLE_KINDS, JoinGraph
from cbo.joinorder.greedy import greedy_order
from cbo.memo.memo import Group, Memo, group_of
from cbo.memo.pattern import Joins, Pattern
from cbo.memo.region import region_of
from cbo.memo.rules.base import TransformationRule

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext


class ReorderJoins(TransformationRule):
    """Enumerate the bushy join trees of a join region (DPhyp; greedy above the limit)."""

    name = "ReorderJoins"
    written_only = True   # matches a group's first expression only (see matches)
    patterns = (Pattern(Join, where=Joins(frozenset({"inner", *MOVABLE_KINDS}))),)

    def matches(self, expr: Plan, group: Group, context: SearchContext) -> bool:
        # The region is the written join tree, read from each group's first expression; the
        # enumeration adds every other order itself.
        return (context.settings.join_reordering_strategy == "AUTOMATIC" and expr is group.first
                and group.id not in _enumerated(context))

    def apply(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[Plan]:
        graph = region_of(group)
        members = _enumerated(context)
        members |= graph.members
        builder = RegionBuilder(context.memo, graph, context, members)
        settings = context.settings
        exhaustive = graph.size <= settings.max_reordered_joins and self._pairs_within(graph, settings.max_join_pairs)
        if exhaustive:
            DPhyp(graph.hypergraph, builder.join, context.out_of_budget).run()
        else:
            context.counters.heuristic_regions += 1
            greedy_order(graph.hypergraph, builder.rows_of, builder.join)
        return ()

    @staticmethod
    def _pairs_within(graph: JoinGraph[Group], limit: int) -> bool:
        """Whether the region has at most ``limit`` join pairs: counted by running the
        enumeration without building anything, and stopped at the limit.
        No count is needed when even a clique of that many relations stays within the limit."""
        n = graph.size
        if (3 ** n - 2 ** (n + 1) + 1) // 2 <= limit:
            return True
        counter = DPhyp(graph.hypergraph, lambda a, b: None)
        counter.should_stop = lambda: counter.pairs >= limit
        counter.run()
        return not counter.stopped


def _enumerated(context: SearchContext) -> set[int]:
    """The groups already inside an enumerated region, in this search (a region is read once,
    from its top join)."""
    return context.state((ReorderJoins.name, "enumerated groups"), set)


class RegionBuilder:
    """Turns the pairs of sets an enumerator picks into memo expressions and groups.

    The one place a rule adds to the memo itself: every join set needs one group that all its
    join pairs go to, found by the set (as CockroachDB's join order builder does), which a
    rule returning plans could not express. A set's first pair is made at once (it makes the
    set's group); its further inner pairs are deferred (``Memo.defer``): recorded by their
    input groups, their condition and keys computed only when the search reads the join.
    """

    # False: every pair made as the enumeration meets it (tests compare the two)
    deferred: ClassVar[bool] = True

    def __init__(self, memo: Memo, graph: JoinGraph[Group], context: SearchContext, members: set[int]):
        self.memo = memo
        self.graph = graph
        self.context = context
        self.members = members
        self.sets: dict[int, Group] = {}
        for index, relation in enumerate(graph.relations):
            self.sets[1 << index] = self._with_local_filters(index, relation)
        for mask, written in graph.written.items():
            self.sets[mask] = written

    def _with_local_filters(self, index: int, relation: Group) -> Group:
        """A relation with the region's conjuncts that read only it (or nothing, for the first)."""
        bit = 1 << index
        local = [p for t, p in self.graph.predicates if t == bit]
        if index == 0:
            local += self.graph.everywhere
        if not local:
            return relation
        group = self.memo.insert(Filter(relation.ref, conjunction(local)))
        self.members.add(group.id)
        return group

    def expression(self, a: int, b: int) -> Join:
        kind, swap = self.graph.join_kind(a, b)
        left, right = (b, a) if swap else (a, b)
        return self.make_join(kind, left, right)

    # -- making the joins of deferred pairs (``cbo.memo.memo.JoinSource``) --

    def make_join(self, kind: JoinKind, left: int, right: int,
                  parts: tuple[Expr, tuple[tuple[Column, Column], ...]] | None = None) -> Join:
        """The join, from its ``join_parts`` when already known (most are asked for first)."""
        condition, keys = parts or self.graph.condition_and_keys(left, right, kind)
        # (keys known from the graph: the search would read them from the condition)
        return enumerated_join(kind, self.sets[left].ref, self.sets[right].ref, condition, keys)

    def join_parts(self, kind: JoinKind, left: int, right: int) -> tuple[Expr, tuple[tuple[Column, Column], ...]]:
        """An inner join's condition and equi-join keys (the keys are what the search asks of
        deferred joins the most)."""
        condition, keys = self.graph.condition_and_keys(left, right, kind)
        assert keys is not None, "a deferred join is an inner join"
        return condition, keys

    def has_condition(self, kind: JoinKind, left: int, right: int) -> bool:
        """Whether the join has a condition (what patterns of conditioned joins ask first)."""
        return self.graph.has_condition(left, right)

    def join(self, a: int, b: int) -> None:
        context = self.context
        context.counters.join_pairs += 1
        context.spend()
        sets = self.sets
        group = sets.get(a | b)
        if group is not None and self.deferred:
            # A further pair of a set: deferred (``Memo.defer``), made only if the search reads
            # more than its input groups (a 10-relation clique's search makes 1 in 20 or so).
            # The first pair of a set is made at once: it makes the group, whose logical
            # properties are read from it; non-inner joins (few) are made at once too.
            # (a region of inner joins only, the common case, asks no edge)
            kind: JoinKind
            if not self.graph.non_inner:
                left, right, kind = a, b, "inner"
            else:
                kind, swap = self.graph.join_kind(a, b)
                left, right = (b, a) if swap else (a, b)
            if kind == "inner":
                # (an enumeration's groups are merged only by other rules, later: find() is
                # asked only of a group merged away)
                left_group, right_group = sets[left], sets[right]
                if left_group.merged_into is not None:
                    left_group = left_group.find()
                if right_group.merged_into is not None:
                    right_group = right_group.find()
                if self.memo.defer(group, kind, (left_group, right_group), self, (kind, left, right), "ReorderJoins"):
                    return
        group, _ = self.memo.add(self.expression(a, b), group, "ReorderJoins")
        sets[a | b] = group
        self.members.add(group.id)

    def rows_of(self, a: int, b: int) -> float:
        """Estimated rows of joining two built sets, without adding the join to the memo."""
        known = self.sets.get(a | b)
        if known is not None:
            return known.rows
        expr = self.expression(a, b)
        inputs = [group_of(child).estimate for child in expr.children]
        return self.memo.estimator.estimate_node(expr, inputs).rows

