"""Implementation rules: the physical alternatives of each logical operator, as Spark runs them.

Each rule yields physical expressions: the operator (its inputs possibly swapped), Spark's
strategy for it, and what it requires of each input (``cbo.physical.properties``). The search adds
the exchanges and sorts those requirements call for (enforcers) and costs everything with
``cbo.cost``. What each alternative delivers is in ``cbo.memo.delivery``.

Joins: broadcast hash (build side under the broadcast size limit), shuffled hash, sort-merge,
and broadcast nested loop where no equality links the sides; single-column NOT IN as a
null-aware broadcast hash join. Aggregations: partial and final
aggregation around an exchange, or the final aggregation alone over input already clustered on
the grouping columns (e.g. the output of a join on them).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from cbo.ir.operators import (
    Aggregate,
    CteAnchor,
    CteConsumer,
    Filter,
    Join,
    Limit,
    Plan,
    Project,
    Scan,
    SetOp,
    Sort,
    Values,
    Window,
)
from cbo.memo.memo import Deferred, Group, PhysicalExpr, group_of
from cbo.memo.rules.base import Bounds, ImplementationRule
from cbo.memo.rules.grouping_sets_expand import ExpandGroupingSets
from cbo.memo.rules.grouping_sets_union import UnionGroupingSets
from cbo.memo.rules.window_requirement import window_requirement
from cbo.memo.rules.window_top_k import WindowTopK
from cbo.physical.algorithm import Algorithm
from cbo.physical.properties import ANY, BROADCAST, Required

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext

_ANY_INPUTS = {arity: (ANY,) * arity for arity in range(4)}

# Join kinds a hash join can run with its right input as the build side (Spark: inner, left
# outer, left semi, left anti and existence joins build right; outer joins keep the left as probe).
# Only inner joins are also run with the sides swapped (``orientations``): Spark 4.3 builds the
# left side of a join only for inner and right outer joins (``JoinSelectionHelper``:
# ``canBuildBroadcastLeft`` and ``canBuildShuffledHashJoinLeft``), never for a LEFT SEMI or LEFT
# ANTI join, and has no right semi join; so no semi join building its outer (left) side is
# costed, since Spark could not run it. A small outer side of a semi join is hashed through the
# rewrites to an inner join with a DISTINCT above or below (``semijoin_distinct_above``,
# ``semijoin_distinct_below``), whose inner join builds either side.
BUILD_RIGHT_KINDS = ("inner", "left", "semi", "anti", "mark")
_SHUFFLED_HASH_KINDS = BUILD_RIGHT_KINDS + ("full",)   # Spark builds right for full joins too


def _physical(node: Plan, algorithm: Algorithm, logical: Plan, rule: str,
              needs: tuple[Required, ...] | None = None) -> PhysicalExpr:
    arity = len(node.children)
    return PhysicalExpr(node, algorithm, needs or _ANY_INPUTS.get(arity) or (ANY,) * arity, logical, rule)


def orientations(expr: Join) -> tuple[Join, ...]:
    """The join as written and, for inner joins, with its inputs swapped: R ⋈ S = S ⋈ R as bags
    of rows (columns are found by identity, not position), so either side may be the build side."""
    # The swapped join is made once per join (several rules ask, for alternatives and floors),
    # with the written join's equalities, sides exchanged, instead of finding them again in the
    # condition. (Not the tuple itself: it would hold the join, a cycle for the collector.)
    swapped: Join | bool | None = expr.__dict__.get("_swapped")
    if swapped is None:
        swapped = False
        if expr.kind == "inner":
            swapped = Join("inner", expr.right, expr.left, expr.condition)
            object.__setattr__(swapped, "_equi_keys", tuple((b, a) for a, b in expr.equi_keys))
            object.__setattr__(swapped, "_has_equi_key", expr.has_equi_key)
        object.__setattr__(expr, "_swapped", swapped)
    return (expr, swapped) if isinstance(swapped, Join) else (expr,)


def _sides(join: Join) -> tuple[tuple[Group, Group], ...]:
    """The (left, right) input groups of each of ``orientations(join)``, without making the
    swapped join: a floor reads only the sides' sizes and plans (most joins an enumeration adds
    are never implemented)."""
    # Kept on the join: three rules' floors ask for it (floors are read after exploration, when
    # no group merges any more).
    found: tuple[tuple[Group, Group], ...] | None = join.__dict__.get("_sides")
    if found is None:
        left, right = group_of(join.left).find(), group_of(join.right).find()
        found = ((left, right), (right, left)) if join.kind == "inner" else ((left, right),)
        object.__setattr__(join, "_sides", found)
    return found


def _deferred_sides(record: Deferred) -> tuple[tuple[Group, Group], ...]:
    """``_sides`` of the join a deferred record would make (an inner join: both ways round),
    kept on the record (three rules' floors ask; no group merges once floors are read)."""
    found: tuple[tuple[Group, Group], ...] | None = record.sides
    if found is None:
        left, right = record.inputs[0].find(), record.inputs[1].find()
        found = record.sides = ((left, right), (right, left)) if record.kind == "inner" else ((left, right),)
    return found


def _local(bounds: Bounds, kind: str, algorithm: Algorithm, group: Group, left: Group, right: Group) -> float:
    """The alternative's own cost with ``left`` and ``right`` as its inputs, exactly as the search
    prices it (a join's price reads its kind and the sizes, not which plan is which side)."""
    # (sizes kept on the groups read without a call: every floor of a star's joins asks for them)
    return bounds.cost_model.join_kind_local(kind, algorithm, group.size or bounds.size(group),
                                             left.size or bounds.size(left), right.size or bounds.size(right))


def _broadcast_floor(bounds: Bounds, kind: str, algorithm: Algorithm, group: Group, probe: Group,
                     build: Group) -> float:
    """The floor of a join broadcasting its build input: its own cost, the probe side's cheapest
    plan, and the build side broadcast."""
    return _local(bounds, kind, algorithm, group, probe, build) + bounds.cheapest_cost(probe) \
        + bounds.broadcast_floor(build)


def _fits(context, group: Group, limit: float) -> bool:
    """Whether the group's estimated bytes are at most ``limit`` (the broadcast size limit)."""
    size = group.size   # (read without a call when kept: every floor of a star's joins asks)
    if size is None:
        return context.size_bytes(group) <= limit
    return size[0] * size[1] <= limit


def _partitioned_floor(bounds: Bounds, kind: str, algorithm: Algorithm, group: Group, left: Group,
                       right: Group) -> float:
    """The floor of a join needing both inputs hash-partitioned (and perhaps sorted) on its keys."""
    return _local(bounds, kind, algorithm, group, left, right) + bounds.hash_floor(left) + bounds.hash_floor(right)


class _JoinRule(ImplementationRule):
    """A join strategy: which joins it takes (``takes``: by kind and whether an equality links the
    sides) and its floor over the (left, right) input groups of each orientation it would run
    (``floor_over``, which reads nothing else of the join ``expr`` but its equi-join keys), asked
    alike of a made join and of a deferred one: a deferred join its floors show beaten is never
    made (most of a 12-relation star's)."""

    operator = Join

    def takes(self, kind: str, has_equi_key: bool) -> bool:
        raise NotImplementedError

    def floor_over(self, kind: str, sides: tuple[tuple[Group, Group], ...], expr: Join | Deferred, group: Group,
                   context, bounds: Bounds) -> float:
        raise NotImplementedError

    def matches(self, expr: Plan, group: Group, context: object) -> bool:
        return isinstance(expr, Join) and self.takes(expr.kind, expr.has_equi_key)

    def floor(self, expr: Plan, group: Group, context, bounds: Bounds) -> float:
        assert isinstance(expr, Join)
        return self.floor_over(expr.kind, _sides(expr), expr, group, context, bounds)

    def deferred_floor(self, record: Deferred, group: Group, context, bounds: Bounds) -> float:
        # (what was kept on the record read without a call: every floor of a star's joins asks)
        parts = record.parts
        if not self.takes(record.kind, bool(parts[1] if parts is not None else record.keys())):
            return math.inf
        return self.floor_over(record.kind, record.sides or _deferred_sides(record), record, group, context, bounds)


def _key_needs(join: Join, sorted_: bool, context: SearchContext) -> tuple[Required, Required]:
    """Each input hash-partitioned (and for a merge join sorted) on its join keys, position by
    position: computed once per join (an expression of the search's memo) and form."""
    name = "_sorted_needs" if sorted_ else "_hash_needs"
    found = join.__dict__.get(name)
    if found is None:
        keys = join.equi_keys
        left = tuple(a.id for a, _ in keys)
        right = tuple(r.id for _, r in keys)
        required = context.required
        found = (required("hash", left, left if sorted_ else ()), required("hash", right, right if sorted_ else ()))
        object.__setattr__(join, name, found)
    return found


class ImplementOperator(ImplementationRule):
    """An operator with one way to run: itself (scan, filter, project, sort, limit, ...).

    Pattern: the operator type given at construction. Equivalence: identity.
    """

    required = True

    def __init__(self, operator: type, algorithm: Algorithm):
        self.operator = operator
        self.algorithm = algorithm
        self.name = f"Implement{operator.__name__}"

    @property
    def summary(self) -> str:
        return f"Run a {self.operator.__name__} as itself (its one implementation)."

    def matches(self, expr: Plan, group: Group, context: object) -> bool:
        return isinstance(expr, self.operator)

    def implement(self, expr: Plan, group: Group, context: object) -> Iterable[PhysicalExpr]:
        yield _physical(expr, self.algorithm, expr, self.name)


class BroadcastHashJoin(_JoinRule):
    """Join on equalities by broadcasting the build side to every task and probing it there.

    Pattern: a join with at least one conjunct ``l = r`` across its inputs, of a kind that can
    build its right side (inner joins also with the sides swapped), whose build side's estimated
    size is at most ``broadcast_limit_bytes``. Requires the build side broadcast and nothing of
    the probe side, whose partitioning the join keeps. Equivalence: identity (the strategy only).
    """

    name = "BroadcastHashJoin"

    def takes(self, kind: str, has_equi_key: bool) -> bool:
        return kind in BUILD_RIGHT_KINDS and has_equi_key

    def implement(self, expr: Plan, group: Group, context) -> Iterable[PhysicalExpr]:
        assert isinstance(expr, Join)
        for join in orientations(expr):
            if context.size_bytes(group_of(join.right)) <= context.settings.broadcast_limit_bytes:
                yield _physical(join, Algorithm.BROADCAST_HASH_JOIN, expr, self.name, (ANY, BROADCAST))

    def floor_over(self, kind: str, sides: tuple[tuple[Group, Group], ...], expr: Join | Deferred, group: Group,
                   context, bounds: Bounds) -> float:
        limit = context.settings.broadcast_limit_bytes
        best = math.inf
        for probe, build in sides:
            if _fits(context, build, limit):
                found = _broadcast_floor(bounds, kind, Algorithm.BROADCAST_HASH_JOIN, group, probe, build)
                if found < best:
                    best = found
        return best


class ShuffledHashJoin(_JoinRule):
    """Join on equalities with both inputs hash-partitioned on the join keys; each task hashes its
    partition of the build (right) side and probes it with the left.

    Pattern: a join with a conjunct ``l = r`` across its inputs: build right for inner, left,
    semi, anti and mark joins (inner joins also swapped); Spark builds right for full joins too.
    Requires both inputs hash-partitioned on their keys, position by position.
    """

    name = "ShuffledHashJoin"

    def takes(self, kind: str, has_equi_key: bool) -> bool:
        return kind in _SHUFFLED_HASH_KINDS and has_equi_key

    def implement(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[PhysicalExpr]:
        assert isinstance(expr, Join)
        for join in orientations(expr):
            yield _physical(join, Algorithm.SHUFFLED_HASH_JOIN, expr, self.name, _key_needs(join, False, context))

    def floor_over(self, kind: str, sides: tuple[tuple[Group, Group], ...], expr: Join | Deferred, group: Group,
                   context, bounds: Bounds) -> float:
        best = math.inf
        for left, right in sides:
            found = _partitioned_floor(bounds, kind, Algorithm.SHUFFLED_HASH_JOIN, group, left, right)
            if found < best:
                best = found
        return best


class SortMergeJoin(_JoinRule):
    """Join on equalities by sorting both hash-partitioned inputs on the keys and merging them.

    Pattern: an equi-join of any kind but mark. Requires each input hash-partitioned and sorted
    on its keys; delivers the left keys' partitioning and order, so a second merge join on the
    same keys needs neither a shuffle nor a sort. One orientation is enough: both inputs are
    treated alike.
    """

    name = "SortMergeJoin"

    def takes(self, kind: str, has_equi_key: bool) -> bool:
        return kind not in ("mark", "null_aware_anti") and has_equi_key

    def implement(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[PhysicalExpr]:
        assert isinstance(expr, Join)
        yield _physical(expr, Algorithm.SORT_MERGE_JOIN, expr, self.name, _key_needs(expr, True, context))

    def floor_over(self, kind: str, sides: tuple[tuple[Group, Group], ...], expr: Join | Deferred, group: Group,
                   context, bounds: Bounds) -> float:
        (left, right), *_ = sides
        return _partitioned_floor(bounds, kind, Algorithm.SORT_MERGE_JOIN, group, left, right)


class BroadcastNestedLoopJoin(_JoinRule):
    """A join without an equality between its sides: broadcast one side and compare every pair.

    Pattern: a join whose condition has no ``l = r`` conjunct across its inputs (cross joins,
    inequality joins); inner joins may broadcast either side. No size limit: it is the only
    way to run such a join, and its cost says how bad it is.
    """

    name = "BroadcastNestedLoopJoin"
    required = True

    def takes(self, kind: str, has_equi_key: bool) -> bool:
        return not has_equi_key and kind != "null_aware_anti"

    def implement(self, expr: Plan, group: Group, context: object) -> Iterable[PhysicalExpr]:
        assert isinstance(expr, Join)
        for join in orientations(expr):
            yield _physical(join, Algorithm.BROADCAST_NESTED_LOOP_JOIN, expr, self.name, (ANY, BROADCAST))

    def floor_over(self, kind: str, sides: tuple[tuple[Group, Group], ...], expr: Join | Deferred, group: Group,
                   context, bounds: Bounds) -> float:
        return min(_broadcast_floor(bounds, kind, Algorithm.BROADCAST_NESTED_LOOP_JOIN, group, probe, build)
                   for probe, build in sides)


class NullAwareAntiJoin(_JoinRule):
    """Single-column NOT IN as Spark runs it: broadcast the subquery's side as a hash table on
    its one key, noting while building it whether it is empty and whether it holds a NULL; probe
    it with the left side (keep every row if it was empty, none if it held a NULL, else the rows
    with a non-NULL key it lacks).

    Pattern: a ``null_aware_anti`` join. Requires the right side broadcast and nothing of the
    left side, whose partitioning it keeps. Spark plans this form whatever the right side's
    size (it has no other hashed way to run it), so no size limit here either; where the key is
    not a column pair it is the nested loop Spark falls back to. Equivalence: identity.
    """

    name = "NullAwareAntiJoin"
    required = True

    def takes(self, kind: str, has_equi_key: bool) -> bool:
        return kind == "null_aware_anti"

    def implement(self, expr: Plan, group: Group, context: object) -> Iterable[PhysicalExpr]:
        assert isinstance(expr, Join)
        yield _physical(expr, self._algorithm(len(expr.equi_keys)), expr, self.name, (ANY, BROADCAST))

    def floor_over(self, kind: str, sides: tuple[tuple[Group, Group], ...], expr: Join | Deferred, group: Group,
                   context, bounds: Bounds) -> float:
        (probe, build), = sides
        keys = expr.keys() if isinstance(expr, Deferred) else expr.equi_keys
        return _broadcast_floor(bounds, kind, self._algorithm(len(keys)), group, probe, build)

    @staticmethod
    def _algorithm(key_count: int) -> Algorithm:
        return Algorithm.NULL_AWARE_BROADCAST_HASH_JOIN if key_count == 1 else Algorithm.BROADCAST_NESTED_LOOP_JOIN


class HashAggregate(ImplementationRule):
    """Aggregate by hashing: partial aggregation per input partition, an exchange on the
    grouping columns, final aggregation ("partial_final"); or, over input already clustered on
    a subset of the grouping columns, the final aggregation alone ("final_only").

    Pattern: any aggregation (without grouping columns only the first form; its exchange gathers
    to one partition). Equivalence: identity; the two forms differ only in where rows move.
    """

    name = "HashAggregate"
    required = True
    operator = Aggregate

    def matches(self, expr: Plan, group: Group, context: object) -> bool:
        return isinstance(expr, Aggregate)

    def implement(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[PhysicalExpr]:
        assert isinstance(expr, Aggregate)
        yield _physical(expr, Algorithm.HASH_AGGREGATE, expr, self.name)
        if expr.group_by:
            clustered = context.required("clustered", tuple(c.id for c in expr.group_by))
            yield _physical(expr, Algorithm.FINAL_AGGREGATE, expr, self.name, (clustered,))


class TopN(ImplementationRule):
    """ORDER BY ... LIMIT k as one operator: each partition keeps its best k + offset rows, one
    task merges them (Spark's ``TakeOrderedAndProject``), with no range shuffle and no full sort.

    Pattern: a limit with a count whose input group holds a sort; the top-N reads the sort's
    input directly (one alternative per such sort). Equivalence: the first k rows of the sorted
    input are the k least rows in that order, which each partition's k least rows contain.
    """

    name = "TopN"
    operator = Limit
    reads_below = True

    def matches(self, expr: Plan, group: Group, context: object) -> bool:
        return isinstance(expr, Limit) and expr.count is not None and Sort in group_of(expr.input).find().operator_types

    def implement(self, expr: Plan, group: Group, context: object) -> Iterable[PhysicalExpr]:
        assert isinstance(expr, Limit)
        for sort in group_of(expr.input).find().expressions:
            if isinstance(sort, Sort):
                yield PhysicalExpr(Limit(sort, expr.count, expr.offset), Algorithm.TOP_N, (ANY,), expr, self.name)


class WindowImplementation(ImplementationRule):
    """Window functions as Spark's WindowExec runs them: over input clustered on the partition
    columns (one partition without them) and sorted, within each partition, on the partition
    columns (ascending, NULLs first) and then on the window's order keys, each in its own
    direction and NULL order.

    Pattern: any window. Requires those properties of its input, so the search puts the exchange
    and the sort below it where its input does not deliver them, and shares them: an aggregation
    or a join on the partition columns already clusters its output; a window below on a subset
    of the partition columns, or on the same ones ordered by a longer order, leaves its input's
    partitioning and order as they were (``cbo.memo.rules.transpose_windows``). Equivalence:
    identity.
    """

    name = "ImplementWindow"
    operator = Window

    def matches(self, expr: Plan, group: Group, context: object) -> bool:
        return isinstance(expr, Window)

    def implement(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[PhysicalExpr]:
        assert isinstance(expr, Window)
        yield _physical(expr, Algorithm.WINDOW, expr, self.name, (window_requirement(expr, context.required),))


def implementation_rules() -> list[ImplementationRule]:
    return [ImplementOperator(Scan, Algorithm.SCAN), ImplementOperator(Filter, Algorithm.FILTER),
            ImplementOperator(Project, Algorithm.PROJECT),
            BroadcastHashJoin(), ShuffledHashJoin(), SortMergeJoin(), BroadcastNestedLoopJoin(), NullAwareAntiJoin(),
            HashAggregate(), ExpandGroupingSets(), UnionGroupingSets(),
            ImplementOperator(Sort, Algorithm.GLOBAL_SORT), ImplementOperator(Limit, Algorithm.LIMIT),
            TopN(), ImplementOperator(SetOp, Algorithm.SET_OP), ImplementOperator(Values, Algorithm.VALUES),
            ImplementOperator(CteAnchor, Algorithm.SHARED_SUBPLAN), ImplementOperator(CteConsumer, Algorithm.CTE_SCAN),
            WindowImplementation(), WindowTopK()]
