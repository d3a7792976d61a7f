"""SemiJoinToInnerDistinctAbove: a semi join as an inner join with a DISTINCT above it (an
*early-out* join whose duplicates are removed after the join; the first of the early-out join
design's rewrites of existential subqueries).

Pattern: ``SemiJoin[p](A, B)`` with ``p`` not TRUE.

Result, when ``A`` has a unique key ``K`` (a set of its output columns, none of them nullable:
a UNIQUE constraint lets several rows be NULL there; keys are used only with
``exploit_constraints``)::

    Aggregate[group by A's columns](InnerJoin[p](A, B))

otherwise, with ``r`` a fresh column numbering ``A``'s rows (``row_id()``: Spark's
``monotonically_increasing_id()``, ``row_number() OVER ()`` elsewhere)::

    Project[A's columns](Aggregate[group by r, A's columns](
        InnerJoin[p](Project[A's columns, r := row_id()](A), B)))

Equivalence: the semi join emits each row of ``A`` once if ``p`` is TRUE for at least one row
of ``B``. The inner join emits that row once per such row of ``B`` (and no row for which ``p``
is never TRUE: NULL comparisons match nothing in both), with ``A``'s values unchanged. Every
copy of one row of ``A`` has the same key (``K`` or ``r``), and two different rows of ``A``
never do, so grouping by the key together with ``A``'s other columns (which the key
determines) leaves exactly one copy of each matching row, duplicates of ``A`` included: they
differ in ``K`` or ``r`` (neither is ever NULL). It holds for any ``p``, equi or not.

The row id only has to be unique within one run of the query, and is computed once, in the
projection below the join (a database that numbers rows per partition must not compute it:
``cbo.exec.remote`` never ships it to a JDBC source). Spark treats it as non-deterministic and
so never moves or duplicates it.

Refused: anti joins (an inner join cannot emit rows without a match), null-aware NOT IN (an
anti join), mark joins (they keep every row of ``A``), and a semi join without a condition
(``EXISTS`` of an uncorrelated subquery: the inner join would be a cross product).

The inner join is a new group whose first expression is that join: ``ReorderJoins`` reads it as
a join region, reading through ``A``'s group when ``A`` is itself a join of the region the semi
join was in, so the early-out join reorders with the rest of the query (bushy), and the
DISTINCT sits above the region it heads. Whether it pays (a selective outer side, a join that
reduces rows) is the cost model's call; the semi join stays as an alternative.
The row-id reorder limitation: without a key, the numbering projection sits over all of ``A``.
When ``A`` is one table (or any single relation) this costs nothing: the projection is a leaf
of the early-out join's region. ``ReorderJoins`` also moves semi joins, so a semi join whose
condition reads one table of a region is placed on that table alone too, and this rewrite of
that placement numbers the table and reorders with the rest (``tests/testdata/rules/
semijoin_distinct_above.test``). But when ``p`` reads two or more tables of ``A`` (``EXISTS
(... WHERE o.x = c.x AND o.y > n.y)`` over ``c JOIN n``), ``A`` is their join, the projection
numbers its rows, and ``B`` meets only the finished ``A``: the region below the projection is
closed. Lifting it needs a row id per leaf instead of one per ``A``: a row of an inner-join
tree is identified by the tuple of its leaves' row identities (a leaf's key, or its own
``row_id()``), so the numbering can go on the leaves, below the joins, and ``B`` could join any
of them first. What that takes: a second copy of ``A``'s region over numbered leaves in the memo
(its groups have more columns, so they cannot share ``A``'s), and an estimate for a grouping by
several leaves' row ids (``group_count`` multiplies them, capped by the join's rows: it would
count the early-out join's rows, not ``A``'s), before cost could weigh it fairly. With keys (the
default, ``exploit_constraints``), the DISTINCT groups by ``A``'s columns, which hold the
keys, and nothing is numbered: the early-out join reorders freely.
This is also how a small outer side gets hashed: Spark 4.3 builds only the right (filtering)
side of a LEFT SEMI join, broadcast or shuffled (``cbo.memo.rules.implement``), while the inner
join here may build either side.
Enabled by ``in_predicates_as_inner_joins_enabled``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from cbo.ir import types as T
from cbo.ir.expressions import Column, ColumnRef, row_id
from cbo.ir.operators import Aggregate, Join, Plan, Project
from cbo.memo.memo import Group, group_of
from cbo.memo.pattern import Joins, Pattern
from cbo.memo.rules.base import TransformationRule

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext


class SemiJoinToInnerDistinctAbove(TransformationRule):
    """A semi join as an inner join with a DISTINCT on the left side's key above (an early-out join)."""

    name = "SemiJoinToInnerDistinctAbove"
    patterns = (Pattern(Join, where=Joins(frozenset({"semi"}), conditioned=True)),)

    def matches(self, expr: Plan, group: Group, context: SearchContext) -> bool:
        settings = context.settings
        return settings.in_predicates_as_inner_joins_enabled and settings.existential_form != "SEMI_JOIN"

    def apply(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[Plan]:
        assert isinstance(expr, Join) and expr.kind == "semi"
        left = expr.left
        columns = left.output
        identity = tuple((c, ColumnRef(c)) for c in columns)
        # A key whose columns may be NULL could be a UNIQUE constraint, which lets several rows
        # share NULL there: grouping would merge them. Only non-null keys are used.
        keyed = any(key <= set(columns) and key <= left.not_null for key in left.unique_keys)
        if context.settings.exploit_constraints and keyed:
            yield Aggregate(Join("inner", left, expr.right, expr.condition), columns)
            return
        number = self._row_id(context, group_of(left))
        numbered = Project(left, identity + ((number, row_id()),))
        joined = Join("inner", numbered, expr.right, expr.condition)
        yield Project(Aggregate(joined, (number,) + columns), identity)

    def _row_id(self, context: SearchContext, left: Group) -> Column:
        """The row-id column of a left group: one per group in a search, so the numbered
        projection of a group is one expression however many semi joins read it."""
        known: dict[int, Column] = context.state((self.name, "row ids"), dict)
        gid = left.find().id
        found = known.get(gid)
        if found is None:
            found = known[gid] = context.memo.new_column(f"row_id_g{gid}", T.BIGINT, nullable=False)
        return found

