"""CopyTableIntoAggregate: aggregate the outer side's own join, so a source computes it once.

A correlated average per part, decorrelated, joins ``lineitem ⋈ part`` (part filtered to a few
hundred rows) with ``Aggregate[l_partkey](lineitem)`` on ``l_partkey = p_partkey``: only the groups of the
parts that survive the filter are read, yet every lineitem row is aggregated. Table pushdown
(``PushTableIntoAggregate``) moves part below the aggregation, but then the outer lineitem is
read in full a second time. Here a *copy* of part goes below the aggregation and part stays in
the outer join, so the aggregation's input is the very join the outer side reads: a source
that shares repeated subtrees (PostgreSQL, ``Capabilities.shares_repeated``) computes it once
as a materialized CTE that both the aggregation and the outer join read (``cbo.sqlgen``), and
Spark aggregates thousands of rows instead of millions. It is magic decorrelation (Seshadri et al., SIGMOD
1996) where the magic set's supplementary table is the aggregation's own input, restricted.

Pattern: ``InnerJoin[E ∧ R](X, A)`` (A on either side) where ``A`` is ``Aggregate[G](Y)``,
possibly under a Project over it; ``Y`` is a ``[Filter] Scan``; ``X``'s group holds an inner
join ``InnerJoin[K](Y₂, T)`` (either order) with ``Y₂`` the same ``[Filter] Scan`` of the same
table as ``Y`` (equal filter, every column ``Y`` reads also read by ``Y₂``; ``μ`` maps ``Y``'s
columns to ``Y₂``'s by name), and:

* ``K`` reads of ``Y₂`` only columns ``μ(g)`` of grouping columns ``g ∈ G``, and equates them
  (``=``) with columns of ``T`` that contain a unique key of ``T``;
* ``E`` equates (``=``) each such ``g`` with a column of ``X`` equal to ``μ(g)`` on every row of
  ``X`` (``μ(g)`` itself, or a column ``K`` equates with it); ``R`` is the rest.

Result: ``InnerJoin[E ∧ R](X, Project[g := μ'(g), the rest as A computes it](Aggregate[μ'(G),
a := f(μ'(args))](X')))`` with ``X'`` a copy of ``InnerJoin[K](Y₂, T)`` under fresh column ids
(``cbo.ir.shape.fresh_copy``) and ``μ'`` ``μ`` followed by the copy's renaming. The Project
gives the grouping columns their old ids, so ``E`` and ``R`` read what they read before.

Equivalence: a row ``x`` of X joins the groups of ``A`` whose values of the ``E``-equated
grouping columns are ``x``'s partners; ``x`` came from a row of ``Y₂`` with ``μ(g)`` equal to
those values and a row of ``T`` satisfying ``K``. ``K`` reads nothing of ``Y₂`` but those
``μ(g)``, so for such a group every row of ``Y`` (each is a row of ``Y₂``: same table, same
filter) satisfies ``K`` with ``x``'s row of ``T``, and with no other (a unique key of ``T``):
the group of ``X'`` holds exactly one row per row of the group of ``Y``, with the same values
in the columns the aggregates read. Every group that some ``x`` joins thus aggregates the same
rows in both forms, for every aggregate function (DISTINCT and ``count(*)`` included); groups
no ``x`` joins are dropped by the join in both. It needs ``=`` (a NULL key joins nothing either
way; ``IS NOT DISTINCT FROM`` could match several NULL keys of a unique column) and a grouped
aggregation.

Whether it pays is the cost model's call: the memo keeps every form. Off with
``push_table_through_subquery`` (it is table pushdown's variant).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from cbo.ir.expressions import AggregateCall, Column, ColumnRef, Expr, columns_of, conjuncts, substitute
from cbo.ir.operators import Aggregate, Filter, Join, Plan, Project, Scan, equated_columns
from cbo.ir.shape import fresh_copy
from cbo.memo.memo import Group, GroupRef, group_of
from cbo.memo.pattern import Pattern
from cbo.memo.rules.base import TransformationRule
from cbo.memo.rules.table_pushdown import _AGGREGATED, CONDITIONED_INNER, _aggregation

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext


class CopyTableIntoAggregate(TransformationRule):
    """Aggregate a copy of the outer side's join instead of the whole table (magic decorrelation
    of a correlated aggregate over the outer join's table), so both read one join that a source
    can compute once."""

    name = "CopyTableIntoAggregate"
    patterns = tuple(Pattern(Join, sides, CONDITIONED_INNER)
                     for side in _AGGREGATED for sides in ((side, None), (None, side)))

    def matches(self, expr: Plan, group: Group, context: SearchContext) -> bool:
        return context.settings.push_table_through_subquery

    def apply(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[Plan]:
        assert isinstance(expr, Join)
        aggregated_left = not isinstance(expr.left, GroupRef)
        aggregated, outer = (expr.left, expr.right) if aggregated_left else (expr.right, expr.left)
        found = _aggregation(aggregated)
        if found is None or not found[1].group_by or not isinstance(found[1].input, GroupRef):
            return
        project, aggregate = found
        read = _filtered_scan(group_of(aggregate.input))
        if read is None:
            return
        # A side column -> the grouping column it passes through (the Project may rename it).
        grouping = {c: c for c in aggregate.group_by}
        if project is not None:
            grouping = {c: e.column for c, e in project.assignments
                        if isinstance(e, ColumnRef) and e.column in aggregate.group_by}
        outer_columns = set(outer.output)
        partners: dict[Column, set[Column]] = {}   # grouping column -> X columns E equates it with
        for conjunct in conjuncts(expr.condition):
            pair = equated_columns(conjunct)
            if pair is None:
                continue
            for a, b in (pair, pair[::-1]):
                if a in grouping and b in outer_columns:
                    partners.setdefault(grouping[a], set()).add(b)
        if not partners:
            return
        for candidate in group_of(outer).find().expressions:
            if not (isinstance(candidate, Join) and candidate.kind == "inner"):
                continue
            for y2, table in ((candidate.left, candidate.right), (candidate.right, candidate.left)):
                names = _same_rows(read, _filtered_scan(group_of(y2)))
                if names is not None and _restricts(candidate.condition, aggregate, names, partners, group_of(table)):
                    copied, renamed = _copy(context, candidate)
                    yield _rewritten(expr, aggregated_left, project, aggregate,
                                     {c: renamed[names[c]] for c in names}, copied)
                    return


def _filtered_scan(group: Group) -> tuple[Scan, Expr | None] | None:
    """The group as ``[Filter] Scan`` (the scan and the filter's predicate), else None."""
    for expr in group.find().expressions:
        if isinstance(expr, Scan):
            return expr, None
        if isinstance(expr, Filter) and isinstance(expr.input, GroupRef):
            below = group_of(expr.input).find()
            if isinstance(below.first, Scan):
                return below.first, expr.predicate
    return None


def _same_rows(read: tuple[Scan, Expr | None], other: tuple[Scan, Expr | None] | None) -> dict[Column, Column] | None:
    """``read``'s columns -> ``other``'s columns of the same name, when ``other`` reads the same
    table with the same filter and every column ``read`` reads (its rows are ``read``'s)."""
    if other is None:
        return None
    (scan, predicate), (scan2, predicate2) = read, other
    if scan.table != scan2.table:
        return None
    by_name = dict(zip(scan2.column_names, scan2.columns))
    if not all(n in by_name for n in scan.column_names):
        return None
    names = {c: by_name[n] for c, n in zip(scan.columns, scan.column_names)}
    if (predicate is None) != (predicate2 is None):
        return None
    if predicate is not None and substitute(predicate, {c: ColumnRef(m) for c, m in names.items()}) != predicate2:
        return None
    return names


def _restricts(condition: Expr, aggregate: Aggregate, names: dict[Column, Column],
               partners: dict[Column, set[Column]], table: Group) -> bool:
    """Whether the outer join's ``condition`` (``K``) reads of the aggregated table's copy only
    grouping columns that the join above equates with their values, and equates them with a
    unique key of ``table``."""
    grouped = {names[g]: g for g in aggregate.group_by if g in names}
    table_columns = set(table.output)
    keyed: set[Column] = set()
    equal: dict[Column, set[Column]] = {}    # a copy's grouping column -> columns K equates with it
    for conjunct in conjuncts(condition):
        read = columns_of(conjunct) - table_columns
        if not read <= set(grouped):
            return False   # K reads a column of the copy that is no grouping column (or of elsewhere)
        pair = equated_columns(conjunct)
        if pair is None:
            continue
        for a, b in (pair, pair[::-1]):
            if a in grouped and b in table_columns:
                keyed.add(b)
                equal.setdefault(a, set()).add(b)
    if not any(key and key <= keyed for key in table.unique_keys):
        return False
    # Each grouping column K reads: the join above equates it with its value in X.
    for copy_column, g in grouped.items():
        if copy_column not in equal:
            continue
        if not partners.get(g, set()) & ({copy_column} | equal[copy_column]):
            return False
    return True


def _plan_of(group: Group) -> Plan:
    """The group's first expression as a plan, its inputs' likewise (the form it was written in)."""
    first = group.find().first
    if not first.children:
        return first
    return first.with_children(tuple(_plan_of(group_of(c)) for c in first.children))


def _copy(context: SearchContext, join: Join) -> tuple[Plan, dict[Column, Column]]:
    """The join under fresh column ids: one copy per join in a memo, so applying the rule again
    (another binding, another aggregation over the same table) yields the same expressions."""
    copies: dict[Join, tuple[Plan, dict[Column, Column]]] = context.state((CopyTableIntoAggregate.name, "copies"), dict)
    found = copies.get(join)
    if found is None:
        plan = join.with_children(tuple(_plan_of(group_of(c)) for c in join.children))
        found = copies[join] = fresh_copy(plan, context.memo.new_column)
    return found


def _rewritten(join: Join, aggregated_left: bool, project: Project | None, aggregate: Aggregate,
               mapping: dict[Column, Column], copied: Plan) -> Plan:
    refs: dict[Column, Expr] = {c: ColumnRef(m) for c, m in mapping.items()}
    aggregates = []
    for c, a in aggregate.aggregates:
        renamed = substitute(a, refs)
        assert isinstance(renamed, AggregateCall)
        aggregates.append((c, renamed))
    regrouped = Aggregate(copied, tuple(mapping[g] for g in aggregate.group_by), tuple(aggregates))
    # The grouping columns under their old ids: the join's condition and everything above read them.
    grouped = {g: refs[g] for g in aggregate.group_by}
    if project is not None:
        assignments = tuple((c, substitute(e, grouped)) for c, e in project.assignments)
    else:
        assignments = tuple((c, grouped.get(c, ColumnRef(c))) for c in aggregate.output)
    side: Plan = Project(regrouped, assignments)
    left, right = (side, join.right) if aggregated_left else (join.left, side)
    return Join(join.kind, left, right, join.condition)
