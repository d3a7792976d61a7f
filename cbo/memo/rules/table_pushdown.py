"""PushTableIntoAggregate: move a table joined on its unique key into the GROUP BY it joins.

Table pushdown (the table pushdown design): a decorrelated subquery is an aggregation
grouped by the correlation columns, joined back to the outer table on them. When the outer
table is small after its own filters, joining it *below* the aggregation means aggregating only
the rows of the groups that survive the join, instead of every group of the inner table.

Pattern: ``InnerJoin[E ∧ R](A, T)`` (A on either side) where ``A`` is ``Aggregate[G](X)``
computing at least one aggregate (not a DISTINCT: see ``_GROUPED``), possibly under a Project
that passes grouping columns through; ``E`` are equalities ``g = t``
between grouping columns ``g ∈ G`` and columns ``t`` of ``T`` whose ``t`` columns contain a unique
key of ``T``; ``R`` is the rest of the condition.

Result: ``Filter[R](Project[A's columns, T's columns](Aggregate[G ∪ U, t := any_value(t) for the
other columns t of T](InnerJoin[E](X, T))))`` with ``E`` rewritten to the grouping columns as ``X``
produces them, and ``U`` the columns of ``T`` that something above the join reads.

Equivalence: because ``E`` covers a unique key of ``T``, each row of ``X`` matches at most one row
of ``T``, and which one depends only on the row's values of ``G``: the join keeps or drops whole
groups of ``X`` and duplicates no row, so every kept group aggregates exactly the rows it
aggregated before. ``T``'s columns are the same on all rows of a group (they come from its one
matching row), so grouping by them as well splits no group, and ``any_value`` of one of them is
its value. ``R`` may read aggregates; it is
applied to the same combined rows as before, after the aggregation. It holds for every
aggregate function (the rows of a group are unchanged, not only their set), for ``=`` only
(``IS NOT DISTINCT FROM`` could match several NULL keys of a UNIQUE column), and needs a
grouped aggregation: ``E`` must equate at least one grouping column.

Which columns of ``T`` are grouped by is a question of speed, not of answers: grouping by a
wide column nobody reads (part's ``p_brand``, ``p_container``, read only by a filter below the
join) hashes it for nothing, and Spark prunes an ``any_value`` nobody reads but never a grouping
column; yet Spark aggregates a string in an aggregation buffer by sorting, so a column that is
read above is grouped by. What is read above comes from the expressions that read the join's
group, up to the query's root (``_read_above``); a reader added later may read a column given by
``any_value``, which stays right.

Whether it pays is the cost model's call: the memo keeps both forms.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from cbo.ir.expressions import (
    AggregateCall,
    Column,
    ColumnRef,
    Expr,
    columns_of,
    compare,
    conjunction,
    conjuncts,
)
from cbo.ir.operators import Aggregate, Filter, Join, Plan, Project, equated_columns
from cbo.memo.memo import Group, GroupRef, Memo
from cbo.memo.pattern import Grouped, Joins, Pattern
from cbo.memo.rules.base import TransformationRule
from cbo.memo.rules.eager_aggregation import partial_columns

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext


# A grouped aggregation that computes aggregates (a subquery's), not a DISTINCT: pushing tables
# into DISTINCTs cascades. A nested IN rewritten to a join over a DISTINCT is a DISTINCT per
# level, every level's key in one equivalence class, so each outer table could be pushed into
# each DISTINCT below it: a DISTINCT (and a join region to enumerate) for every subset of the
# outer tables, 2^N of them for N levels. A DISTINCT's pushdown also adds nothing the semi join
# and its inner-join forms do not already offer: filtering its input by the table first.
_GROUPED = Pattern(Aggregate, where=Grouped(aggregating=True))
_AGGREGATED = (_GROUPED, Pattern(Project, (_GROUPED,)))
CONDITIONED_INNER = Joins(frozenset({"inner"}), conditioned=True)


class PushTableIntoAggregate(TransformationRule):
    """Join a table on its unique key below the aggregation it joins (table pushdown)."""

    name = "PushTableIntoAggregate"
    # The aggregation (or the Project over it) on either side, bound to every such expression
    # of the side's group; the other side is any plan of its group.
    patterns = tuple(Pattern(Join, sides, CONDITIONED_INNER)
                     for side in _AGGREGATED for sides in ((side, None), (None, side)))

    def matches(self, expr: Plan, group: Group, context: SearchContext) -> bool:
        return context.settings.push_table_through_subquery   # Presto's push_table_through_subquery

    def apply(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[Plan]:
        assert isinstance(expr, Join)
        aggregated, table = (expr.right, expr.left) if isinstance(expr.left, GroupRef) else (expr.left, expr.right)
        found = _aggregation(aggregated)
        if found is not None and partial_columns(context) & set(found[1].output):
            # A partial aggregation of eager aggregation: moving a table into it would remake,
            # one join lower, the aggregation eager aggregation started from, and the memo
            # would merge a group into its own input.
            return
        memo = context.memo
        # The columns each expression's own expressions read, for this search: ``_read_above``
        # asks it of every reader of every group up to the root, for each binding it pushes
        # (expressions never change, so each is read once).
        reads: dict[int, tuple[Plan, frozenset[Column]]] = context.state((self.name, "reads"), dict)
        pushed = _push(expr, aggregated, table, lambda: _read_above(memo, group, reads))
        if pushed is not None:
            yield pushed


def _aggregation(side: Plan) -> tuple[Project | None, Aggregate] | None:
    """The bound side's Aggregate (and the Project over it)."""
    if isinstance(side, Aggregate):
        return None, side
    if isinstance(side, Project) and isinstance(side.input, Aggregate):
        return side, side.input
    return None


def _read_above(memo: Memo, group: Group, reads: dict[int, tuple[Plan, frozenset[Column]]] | None = None
                ) -> frozenset[Column]:
    """The columns of ``group`` that the expressions reading it read or pass up to a reader that
    does; all of them for a group nothing reads (the query's root). ``reads``: what each reader's
    own expressions read, kept by the caller across calls (by identity; the reader is kept with
    it, so an id is not reused while it is known)."""
    known: dict[int, frozenset[Column]] = {}
    own = reads if reads is not None else {}

    def read_by(parent: Plan) -> frozenset[Column]:
        found = own.get(id(parent))
        if found is None:
            found = own[id(parent)] = (parent, frozenset().union(*[columns_of(e) for e in parent.expressions()]))
        return found[1]

    def read(g: Group) -> frozenset[Column]:
        g = g.find()
        if g.id in known:
            return known[g.id]
        known[g.id] = frozenset(g.output)   # while it is worked out (a cycle): everything
        outputs = frozenset(g.output)
        parents = [(p, owner.find()) for p in memo.parents(g) if (owner := memo.owner(p)) is not None]
        if not parents:
            return known[g.id]
        found: set[Column] = set()
        for parent, owner in parents:
            found |= read_by(parent) & outputs
            found |= read(owner) & set(parent.output) & outputs
        known[g.id] = frozenset(found)
        return known[g.id]

    return read(group)


def _push(join: Join, aggregated: Plan, table: Plan,
          read_above: Callable[[], frozenset[Column]] = lambda: frozenset()) -> Plan | None:
    found = _aggregation(aggregated)
    if found is None:
        return None
    project, aggregate = found
    if not aggregate.group_by:
        return None
    # A side column -> the grouping column it passes through (the Project may rename it).
    grouping = {c: c for c in aggregate.group_by}
    if project is not None:
        grouping = {c: e.column for c, e in project.assignments
                    if isinstance(e, ColumnRef) and e.column in aggregate.group_by}
    table_columns = set(table.output)
    equalities, rest = [], []
    for conjunct in conjuncts(join.condition):
        pair = equated_columns(conjunct)
        if pair is not None:
            a, b = pair
            if a in grouping and b in table_columns:
                equalities.append((grouping[a], b))
                continue
            if b in grouping and a in table_columns:
                equalities.append((grouping[b], a))
                continue
        rest.append(conjunct)
    if not equalities:
        return None
    keyed = frozenset(t for _, t in equalities)
    if not any(key and key <= keyed for key in table.unique_keys):
        return None
    below = Join("inner", aggregate.input, table, conjunction(compare("eq", ColumnRef(g), ColumnRef(t))
                                                               for g, t in equalities))
    # Read above the join, or by the rest of its condition, applied above the aggregation.
    read = read_above() | set().union(*[columns_of(c) for c in rest])
    extra = tuple(c for c in table.output if c not in aggregate.group_by and c in read)
    carried = tuple((c, AggregateCall("any_value", (ColumnRef(c),), False, c.type))
                    for c in table.output if c not in aggregate.group_by and c not in read)
    regrouped = Aggregate(below, aggregate.group_by + extra, aggregate.aggregates + carried)
    # The join's columns, in the join's order: the aggregated side's as it computed them, the table's as they are.
    computed: dict[Column, Expr] = {c: ColumnRef(c) for c in aggregate.output}
    if project is not None:
        computed = dict(project.assignments)
    assignments = tuple((c, computed[c] if c in computed else ColumnRef(c)) for c in join.output)
    result: Plan = Project(regrouped, assignments)
    if rest:
        result = Filter(result, conjunction(rest))
    return result
