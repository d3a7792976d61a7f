"""EagerAggregation (Yan and Larson, VLDB 1995, "eager group-by"): a grouped aggregation over an
inner join, with a partial aggregation pushed below the join onto the side its aggregates read.

Pattern: ``Aggregate[G; a_i := f_i(e_i)](J)`` or ``Aggregate[...](Project[P](J))``, ``G`` not
empty, ``J = InnerJoin[C](L, R)`` with ``C`` not TRUE. For a side ``S`` of ``J`` (``O`` the
other): every ``e_i`` reads only ``S`` (through ``P``), every ``f_i`` is ``sum``, ``count``,
``count(*)``, ``min`` or ``max`` (``min``/``max`` also DISTINCT), and every grouping column
reads only ``S`` or only ``O``.

Result (``G_S``: the grouping columns read from ``S``; ``K_S``: the columns of ``S`` that ``C``
reads)::

    Aggregate[G; a_i := F_i(p_i)](
        [Project[G from O as P computes them, G_S, p_i]](
            InnerJoin[C](Aggregate[G_S ∪ K_S; p_i := f_i(e_i)]([Project[G_S, K_S, e_i](S)]), O)))

with ``F_i`` the function combining partial results: ``sum`` for ``sum``, ``count`` and
``count(*)``, ``min`` for ``min``, ``max`` for ``max`` (sides kept in their order). A second
moment (``var_samp``, ``var_pop``, ``stddev_samp``, ``stddev_pop``; ``cbo.ir.moments``) splits
into three partial sums (``count(x)``, ``sum(x)``, ``sum(x * x)``), each combined by ``sum``,
and a Project above the combining aggregation computes the moment from them (``finish``).

Equivalence: the rows of ``S`` that the partial aggregation puts in one group agree on every
column ``C`` reads (``K_S``), so the join matches each of them with the same rows of ``O``:
every pair (row of ``S``, row of ``O``) of the original join becomes exactly one pair (its
group, that row of ``O``). They also agree on ``G_S``, and ``G``'s other columns come from the
row of ``O``, so all rows of one partial group paired with one row of ``O`` fall in the same
final group. Each final group therefore receives, for each original row, exactly one partial
result containing it, and sums of sums (counts), minima of minima and maxima of maxima are the
aggregates over the original rows; so are a moment's three sums, from which it follows. This
holds whatever duplicates ``O`` has (a row of ``O`` meeting a partial group counts its rows once
per match, as the original join counted each row once per match). NULLs: a partial
``sum``/``min``/``max`` over only NULLs is NULL and the combining function skips it as the
original skipped the rows; a ``count`` is 0, never NULL, and a final group is never empty, so
the sum of counts is a number. ``G`` must not be empty: a scalar ``count`` over an empty join is
0, but a sum over no partial counts is NULL (the COUNT bug), so scalar aggregations are refused.

Refused: ``avg`` (it would need a sum and a count and a division above), DISTINCT ``sum`` /
``count`` (a value in two partial groups would be counted twice), ``any_value`` (kept simple),
aggregates reading both sides or the other side, grouping columns computed from both sides,
the aggregations this rule made, combining or partial (pushing them again would nest partial
aggregations without end as the joins below reorder or table pushdown moves them),
outer, semi and anti joins (rows without a match, or matches not counted), and a side already
grouped on ``G_S ∪ K_S`` or finer (its group holds such an aggregation: nothing to reduce, and
the rule would otherwise apply to its own result again).

The byte-reduction threshold (``push_aggregation_below_join_byte_reduction_threshold``, as for
the DISTINCT below a semi join's inner join): the partial aggregation enters the memo only when
the join is not byte-reducing, i.e. its estimated output bytes times the threshold exceed the
bytes of ``S``, the input the aggregation is pushed onto (0 never pushes, infinity always does).
The decision is noted at the aggregation's group where it pushes, and for the join as written.
Cost then picks between the aggregation above the join and the one below: a revenue per customer
over lineitem ⋈ orders, say, summed per ``o_custkey`` before customer and nation join it,
instead of grouping the join's rows by seven customer columns, two of them long strings.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from cbo.ir.expressions import AggregateCall, Column, ColumnRef, Expr, columns_of
from cbo.ir.kinds import AggregateName
from cbo.ir.moments import split
from cbo.ir.operators import Aggregate, Join, Plan, Project
from cbo.memo.memo import Group, group_of
from cbo.memo.pattern import GROUPED, Joins, Pattern
from cbo.memo.rules.base import TransformationRule
from cbo.memo.rules.semijoin_distinct_below import _bytes

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext

# partial function -> the function combining partial results
COMBINE: dict[AggregateName, AggregateName] = {"sum": "sum", "count": "sum", "count_star": "sum", "min": "min",
                                               "max": "max"}

_INNER = Pattern(Join, where=Joins(frozenset({"inner"}), conditioned=True))


class EagerAggregation(TransformationRule):
    """A partial aggregation below an inner join, on the side the aggregates read (eager group-by)."""

    name = "EagerAggregation"
    patterns = (Pattern(Aggregate, (_INNER,), GROUPED),
                Pattern(Aggregate, (Pattern(Project, (_INNER,)),), GROUPED))

    def apply(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[Plan]:
        assert isinstance(expr, Aggregate)
        child = expr.input
        project = child if isinstance(child, Project) else None
        join = project.input if project is not None else child
        assert isinstance(join, Join)
        reading = self._reading(expr, project, context)
        if reading.calls is None:
            return
        condition_reads = columns_of(join.condition)
        for side, other in ((join.left, join.right), (join.right, join.left)):
            pushed = _push(expr, reading, join, condition_reads, side, other, group, context)
            if pushed is not None:
                yield pushed

    def _reading(self, aggregate: Aggregate, project: Project | None, context: SearchContext) -> _Reading:
        """What the aggregation asks of any join below it, kept for this search by the identity
        of its fields: the rule gets one binding per join order of the group below (a six-table
        join has dozens) and would read the same aggregates again for each."""
        assignments = project.assignments if project is not None else None
        key = (id(aggregate.group_by), id(aggregate.aggregates), id(assignments))
        readings: dict[tuple[int, int, int], _Reading] = context.state((self.name, "readings"), dict)
        found = readings.get(key)
        if found is None:
            # (the reading holds the fields it was read from: their ids stay theirs)
            found = readings[key] = _Reading(aggregate, assignments)
        return found


class _Reading:
    """An aggregation read through the projection below it (if any), as every join below it
    sees it: each aggregate's function and arguments over the join's columns with the columns
    they read (``calls`` None: some function cannot be split), and each grouping column's
    expression over the join's columns with the columns it reads."""

    __slots__ = ("group_by", "aggregates", "assignments", "calls", "grouping")

    def __init__(self, aggregate: Aggregate, assignments: tuple[tuple[Column, Expr], ...] | None):
        self.group_by, self.aggregates, self.assignments = aggregate.group_by, aggregate.aggregates, assignments
        computed: dict[Column, Expr] = dict(assignments) if assignments is not None else {}
        calls: list[tuple[Column, AggregateCall, frozenset[Column]]] = []
        for column, call in aggregate.aggregates:
            if (call.name not in COMBINE and split(call) is None) or \
                    (call.distinct and call.name not in ("min", "max")):
                self.calls = None
                break
            args = tuple(_through(a, computed) for a in call.args)
            read: frozenset[Column] = frozenset().union(*[columns_of(a) for a in args])
            calls.append((column, AggregateCall(call.name, args, call.distinct, call.type), read))
        else:
            self.calls = calls
        self.grouping: list[tuple[Column, Expr, frozenset[Column]]] = []
        for g in aggregate.group_by:
            e = computed[g] if assignments is not None else ColumnRef(g)
            self.grouping.append((g, e, columns_of(e)))


def _push(aggregate: Aggregate, reading: _Reading, join: Join, condition_reads: frozenset[Column], side: Plan,
          other: Plan, group: Group, context: SearchContext) -> Plan | None:
    mine, theirs = frozenset(side.output), frozenset(other.output)
    made = partial_columns(context)
    calls: list[tuple[Column, AggregateCall]] = []
    for column, call, read in reading.calls or ():
        # Neither the combining aggregation this rule made nor a partial one (which table
        # pushdown may move above another join) is pushed again: each level would make new
        # columns, without end.
        if not read <= mine or read & made or column in made:
            return None
        calls.append((column, call))
    if not calls:
        return None   # a DISTINCT: the DISTINCT-below rewrite and table pushdown place those
    computed: dict[Column, Expr] = {}   # the grouping columns' expressions over the join's columns
    grouped_here, grouped_there = [], []
    for g, e, grouping in reading.grouping:
        computed[g] = e
        if grouping <= mine:
            grouped_here.append(g)
        elif grouping <= theirs:
            grouped_there.append(g)
        else:
            return None
    keys = [c for c in side.output if c in condition_reads]
    # The partial aggregation's grouping columns: G_S (as computed from S) and the join's columns of S.
    below_columns: dict[Column, Expr] = {g: computed[g] for g in grouped_here}
    for k in keys:
        below_columns.setdefault(k, ColumnRef(k))
    by = tuple(below_columns)
    if _already_grouped(side, frozenset(by)) or not _pushes(aggregate, join, side, group, context):
        return None
    partials = []
    # per aggregate: its partial calls (one, or a moment's three) and the columns they fill
    pieces: list[tuple[Column, AggregateCall, list[Column]]] = []
    arguments: dict[Column, Expr] = dict(below_columns)
    for column, call in calls:
        moment = split(call)
        made_here: list[Column] = []
        for piece in (moment.partials if moment is not None else (call,)):
            inputs: list[Expr] = []
            for a in piece.args:
                if isinstance(a, ColumnRef):
                    inputs.append(a)
                    arguments.setdefault(a.column, a)
                else:   # computed below the partial aggregation, in the projection over S
                    fresh = _fresh(context, column, a, "arg")
                    arguments[fresh] = a
                    inputs.append(ColumnRef(fresh))
            partial = _fresh(context, column, piece, "partial")
            partials.append((partial, AggregateCall(piece.name, tuple(inputs), piece.distinct, piece.type)))
            made_here.append(partial)
        pieces.append((column, call, made_here))
    body: Plan = side
    if any(not _is_column(e, c) for c, e in arguments.items()):
        body = Project(side, tuple(arguments.items()))
    partial_aggregate = Aggregate(body, by, tuple(partials))
    if side is join.left:
        below = Join("inner", partial_aggregate, other, join.condition)
    else:
        below = Join("inner", other, partial_aggregate, join.condition)
    top: Plan = below
    if any(not _is_column(computed[g], g) for g in grouped_there):
        passed = [(c, ColumnRef(c)) for c in grouped_here] + [(p, ColumnRef(p)) for p, _ in partials]
        top = Project(below, tuple((g, computed[g]) for g in grouped_there) + tuple(passed))
    finals: list[tuple[Column, AggregateCall]] = []
    finished: list[tuple[Column, Expr]] = []   # the moments, computed above the combining aggregation
    by_partial = dict(partials)
    for column, call, made_here in pieces:
        moment = split(call)
        if len(made_here) == 1 and moment is None:
            finals.append((column, AggregateCall(COMBINE[call.name], (ColumnRef(made_here[0]),), False, call.type)))
            continue
        combined = []
        for partial in made_here:
            total = _fresh(context, column, AggregateCall("sum", (ColumnRef(partial),), False,
                                                          by_partial[partial].type), "combined")
            finals.append((total, AggregateCall("sum", (ColumnRef(partial),), False, total.type)))
            combined.append(ColumnRef(total))
        assert moment is not None   # (only a second moment is combined from several partials)
        finished.append((column, moment.finish(tuple(combined))))
    combining = Aggregate(top, aggregate.group_by, tuple(finals))
    if not finished:
        return combining
    values = dict(finished)
    return Project(combining, tuple((c, values.get(c, ColumnRef(c))) for c in aggregate.output))


def partial_columns(context: SearchContext) -> frozenset[Column]:
    """The columns this rule made in this search: partial results and computed arguments."""
    return frozenset(_partials(context).values())


def _partials(context: SearchContext) -> dict[tuple[int, Expr], Column]:
    """The column made for each (aggregate column, expression) in this search (``_fresh``)."""
    return context.state((EagerAggregation.name, "partials"), dict)


def _is_column(e: Expr, column: Column) -> bool:
    return isinstance(e, ColumnRef) and e.column == column


def _through(e: Expr, computed: dict[Column, Expr]) -> Expr:
    """``e`` over the join's columns: each column the Project computes replaced by its expression."""
    if isinstance(e, ColumnRef):
        return computed.get(e.column, e)
    children = e.children()
    if not children:
        return e
    return e.with_children(tuple(_through(c, computed) for c in children))


def _already_grouped(side: Plan, by: frozenset[Column]) -> bool:
    """Whether the side's group already holds an aggregation grouped on ``by`` or a subset of it.
    (Read from the group's entries: a deferred entry is a join, so none need be made to answer;
    a join region's group holds no aggregation, and is answered without reading its entries.)"""
    group = group_of(side).find()
    return group.holds(Aggregate) and any(isinstance(e, Aggregate) and e.group_by and set(e.group_by) <= by
                                          for e in group.entries)


def _fresh(context: SearchContext, column: Column, e: Expr, kind: str) -> Column:
    """A new column for the partial result (or computed argument) of ``column``'s aggregate:
    one per (aggregate column, expression) in a memo, so applying the rule twice to the same
    aggregation makes the same expressions (the memo deduplicates them)."""
    known = _partials(context)
    found = known.get((column.id, e))
    if found is None:
        found = known[(column.id, e)] = context.memo.new_column(f"{kind}_{column.name}", e.type, nullable=True)
    return found


def _pushes(aggregate: Aggregate, join: Join, side: Plan, group: Group, context: SearchContext) -> bool:
    """Whether the join is *not* byte-reducing relative to ``side``, so the aggregation may go
    below it; the decision is noted at the aggregation's group."""
    owner = context.memo.owner(join)   # the join is an expression of the memo: its group's estimate
    if owner is None:
        return False
    output_bytes = context.size_bytes(owner)
    side_bytes = context.size_bytes(group_of(side))
    threshold = context.settings.push_aggregation_below_join_byte_reduction_threshold
    reducing = not math.isinf(threshold) and threshold * output_bytes <= side_bytes
    ratio = output_bytes / side_bytes if side_bytes > 0 else float("inf")
    scaled = ratio * threshold if ratio and threshold else 0.0
    # Noted where it pushes, and for the join as written; not for every order the join takes
    # (a five-table join would note dozens of refusals).
    if reducing and owner.first != join:
        return False
    names = ", ".join(str(c) for c in side.output[:3]) + (", ..." if len(side.output) > 3 else "")
    context.memo.note(group, f"eager aggregation onto [{names}]: join {_bytes(output_bytes)} / that side "
                             f"{_bytes(side_bytes)} = {ratio:.3g}, x threshold {threshold:g} = {scaled:.3g} "
                             f"(pushed above 1): "
                             + ("byte-reducing, not pushed" if reducing else "not byte-reducing, pushed"))
    return not reducing
