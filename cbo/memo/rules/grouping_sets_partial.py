"""PartialAggregateBelowGroupingSets: the coarser grouping sets computed from the finest set's
aggregate (an aggregation of aggregates).

Pattern: ``GroupingSets[K; sets S; a_i := f_i(e_i); g_j := GROUPING(...)](X)`` with ``K`` not
empty and every ``f_i`` decomposable: ``sum``, ``count``, ``count(*)``, ``min``, ``max``
(``min`` and ``max`` also DISTINCT), ``any_value``, ``avg``, and the second moments
(``var_samp``, ``var_pop``, ``stddev_samp``, ``stddev_pop``: ``cbo.ir.moments``).

Result::

    Project[a_i := finish_i(...), the rest passed](
        GroupingSets[K; sets S; c_ik := F_ik(p_ik); g_j := GROUPING(...)](
            Aggregate[K; p_ik := f_ik(e_ik)]([Project[K, e_ik](X)])))

The partial aggregation groups ``X`` by every key (the finest grouping: each set's groups are
unions of its groups), computing per aggregate its partial results ``p_ik``: ``sum``, ``count``,
``min``, ``max``, ``any_value`` themselves; ``avg`` a ``sum`` and a ``count``; a moment its three
sums (``count(x)``, ``sum(x)``, ``sum(x * x)`` in DOUBLE). The grouping sets then combine them
(``F``: ``sum`` of sums and counts, ``min`` of minima, ``max`` of maxima, ``any_value`` of
values), and a Project finishes what is not a combination alone: a count is ``coalesce(c, 0)``
(the empty set over no input combines no partial count, where a count is 0), ``avg`` is
``S / N`` (NULL where ``N`` is 0 or NULL), a moment follows from its three sums. Where nothing
needs finishing, the grouping sets give the columns themselves and no Project is added.

Equivalence: every group of every set ``s`` is a union of groups of the partial aggregation
(the rows of one partial group agree on every key, so on ``s``'s keys), and each row of ``X``
is in exactly one partial group; so sums of partial sums and counts, minima of minima and
maxima of maxima are the aggregates over the group's rows, and so are the moments' sums from
which each moment follows. NULLs: a partial sum, minimum or maximum over only NULLs is NULL,
and the combination skips it as the original skipped the rows; a partial count is 0. A group
of a set holds at least one partial group, so combined counts are numbers, except the empty
set's row over no input (no partial group at all), which the Project's ``coalesce`` gives 0 and
where ``avg`` and the moments are NULL as over no rows. The keys are the partial aggregation's
grouping columns themselves, so the GROUPING values and the rolled-up NULLs are those of the
original. It does not hold for DISTINCT ``sum``, ``count``, ``avg`` or moments (a value in two
partial groups would count twice): refused.

Refused besides: grouping sets without keys (every set empty: nothing to group by first), and
grouping sets whose input is unique on the keys or a subset of them, as an aggregation grouped
by them is (nothing to reduce; it is also how the rule's own result is not rewritten again).

Cost decides between the two: the partial aggregation reads ``X``'s rows once and hands the
sets its groups, which pays when they are much fewer than the rows (and more so with many
sets: Expand copies every row once per set, a union of aggregations reads the input once per
set). Implemented as a union of aggregations (``cbo.memo.rules.grouping_sets_union``), the
coarser sets are aggregations of the finest set's aggregate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cbo.ir import types as T
from cbo.ir.expressions import AggregateCall, Call, Column, ColumnRef, Constant, Expr, SpecialForm
from cbo.ir.kinds import AggregateName
from cbo.ir.moments import split
from cbo.ir.operators import Aggregate, GroupingSets, Plan, Project
from cbo.memo.memo import Group, group_of
from cbo.memo.pattern import Pattern
from cbo.memo.rules.base import TransformationRule

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext
    from cbo.memo.memo import Deferred

# partial function -> the function combining partial results
COMBINE: dict[AggregateName, AggregateName] = {"sum": "sum", "count": "sum", "count_star": "sum", "min": "min",
                                               "max": "max", "any_value": "any_value"}
DECOMPOSABLE = frozenset(COMBINE) | {"avg"}
_STATE = "PartialAggregateBelowGroupingSets"


@dataclass(frozen=True)
class Keyed:
    """Grouping sets with keys (some set groups by something)."""

    label = "keyed"
    kinds = None

    def test(self) -> Callable[[Any], bool]:
        return _keyed

    def deferred_test(self) -> Callable[[Deferred], bool] | None:
        return None


def _keyed(expr: Any) -> bool:
    return bool(expr.keys)


class PartialAggregateBelowGroupingSets(TransformationRule):
    """Aggregate the input by every key first; the grouping sets combine those partial
    aggregates (sums of sums, minima of minima, an average from a sum and a count)."""

    name = "PartialAggregateBelowGroupingSets"
    patterns = (Pattern(GroupingSets, (None,), Keyed()),)

    def apply(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[Plan]:
        assert isinstance(expr, GroupingSets)
        if not all(_decomposable(call) for _, call in expr.aggregates):
            return
        keys = frozenset(expr.keys)
        if any(unique <= keys for unique in group_of(expr.input).find().unique_keys):
            return   # the input has one row per key already (an aggregation by them, say)
        yield _rewritten(expr, context)


def _decomposable(call: AggregateCall) -> bool:
    if split(call) is not None:
        return True
    return call.name in DECOMPOSABLE and (not call.distinct or call.name in ("min", "max"))


def _rewritten(expr: GroupingSets, context: SearchContext) -> Plan:
    arguments: dict[Column, Expr] = {k: ColumnRef(k) for k in expr.keys}
    partials: list[tuple[Column, AggregateCall]] = []
    combined: list[tuple[Column, AggregateCall]] = []
    finished: dict[Column, Expr] = {}
    empty_set = any(not s for s in expr.sets)
    for column, call in expr.aggregates:
        pieces = _pieces(call)
        totals = []
        for piece in pieces:
            args = []
            for a in piece.args:
                if isinstance(a, (ColumnRef, Constant)):
                    args.append(a)
                    if isinstance(a, ColumnRef):
                        arguments.setdefault(a.column, a)
                else:   # a moment's computed argument, projected below the partial aggregation
                    computed = _fresh(context, column, a, "arg")
                    arguments[computed] = a
                    args.append(ColumnRef(computed))
            partial = _fresh(context, column, piece, "partial")
            partials.append((partial, AggregateCall(piece.name, tuple(args), piece.distinct and piece.name in
                                                    ("min", "max"), piece.type)))
            total = column if len(pieces) == 1 and not (empty_set and piece.name in ("count", "count_star")) \
                else _fresh(context, column, piece, "combined")
            combiner = COMBINE[piece.name]
            combined.append((total, AggregateCall(combiner, (ColumnRef(partial),), False,
                                                  total.type if total is column else piece.type)))
            totals.append(ColumnRef(total))
        if len(pieces) == 1 and totals[0].column is not column:
            finished[column] = SpecialForm("COALESCE", (totals[0], Constant(0, T.BIGINT)), T.BIGINT)
        elif len(pieces) > 1:
            finished[column] = _finish(call, totals)
    body: Plan = expr.input
    if any(not (isinstance(e, ColumnRef) and e.column == c) for c, e in arguments.items()):
        body = Project(expr.input, tuple(arguments.items()))
    partial_aggregate = Aggregate(body, expr.keys, tuple(partials))
    grouping = GroupingSets(partial_aggregate, expr.keys, expr.outputs, expr.sets, tuple(combined), expr.groupings)
    if not finished:
        return grouping
    return Project(grouping, tuple((c, finished.get(c, ColumnRef(c))) for c in expr.output))


def _pieces(call: AggregateCall) -> tuple[AggregateCall, ...]:
    """The partial aggregates ``call`` is computed from."""
    moment = split(call)
    if moment is not None:
        return moment.partials
    if call.name == "avg":
        x = call.args[0]
        total_type = T.decimal(38, x.type.scale or 0) if x.type.name == "decimal" else \
            T.DOUBLE if x.type == T.DOUBLE else T.BIGINT
        return (AggregateCall("sum", (x,), False, total_type), AggregateCall("count", (x,), False, T.BIGINT))
    return (call,)


def _finish(call: AggregateCall, totals: list[ColumnRef]) -> Expr:
    """``call``'s value from its combined partial results."""
    moment = split(call)
    if moment is not None:
        return moment.finish(tuple(totals))
    total, count = totals   # avg: the sum over the count of non-NULL values, NULL where none
    quotient = Call("divide", (SpecialForm("CAST", (total,), T.DOUBLE), SpecialForm("CAST", (count,), T.DOUBLE)),
                    T.DOUBLE)
    value = quotient if call.type == T.DOUBLE else SpecialForm("CAST", (quotient,), call.type)
    return SpecialForm("CASE", (Call("gt", (count, Constant(0, T.BIGINT)), T.BOOLEAN), value,
                                Constant(None, call.type)), call.type)


def _fresh(context: SearchContext, column: Column, e: Expr, kind: str) -> Column:
    """A new column for a partial or combined result (or computed argument) of ``column``'s
    aggregate: one per (aggregate column, expression, kind) in a search, so applying the rule
    twice to the same grouping sets makes the same expressions (the memo deduplicates them)."""
    known: dict[tuple[int, Expr, str], Column] = context.state(_STATE, dict)
    found = known.get((column.id, e, kind))
    if found is None:
        found = known[(column.id, e, kind)] = context.memo.new_column(f"{kind}_{column.name}", e.type,
                                                                      nullable=True)
    return found
