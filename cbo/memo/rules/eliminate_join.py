"""EliminateForeignKeyJoin: drop an inner join whose only effect is to check a foreign key.

Pattern: ``Project[P](Join[inner, E](L, Scan R))``, or with the scan on the left, where

* ``P`` reads no column of ``R``;
* ``E`` is exactly the equalities ``l_i = r_i`` of a foreign key of ``L`` (columns ``l_1..l_n``
  referencing table ``R`` on ``r_1..r_n``), in any order, and nothing else;
* ``r_1..r_n`` is a unique key of ``R``;
* ``R`` is the whole table (a plain scan: a filter on it could remove the referenced row).

Result: ``Project[P](Filter[l_1 IS NOT NULL AND ...](L))``, without the filter for the columns
``L`` never has NULL in.

Equivalence: the foreign key says that each row of ``L`` whose ``l`` columns are all non-NULL
has those values in some row of ``R``; the unique key, in at most one. Such a row therefore
matches exactly one row of ``R`` and the join emits it once, with ``R``'s columns added, which
``P`` never reads; a row with a NULL ``l`` column matches no row (``NULL = r`` is never TRUE),
hence the filter. It holds only when the declared keys are true of the data: cbo trusts
declared keys (Parquet cannot enforce them), as Presto's ``exploit_constraints`` does.

An inner join on a foreign key to an unfiltered dimension whose columns are unused is common
in generated SQL (views that always join their lookup tables).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from cbo.ir.expressions import ColumnRef, Expr, columns_of, conjunction, conjuncts, is_null, negate
from cbo.ir.operators import Filter, Join, Plan, Project, Scan, equated_columns
from cbo.memo.memo import Group
from cbo.memo.pattern import Joins, Pattern
from cbo.memo.rules.base import TransformationRule

if TYPE_CHECKING:
    from cbo.memo.context import SearchContext


_TABLE = Pattern(Scan)
_INNER = Joins(frozenset({"inner"}))


class EliminateForeignKeyJoin(TransformationRule):
    """Drop an inner join to a whole table that only checks a foreign key of the other side."""

    name = "EliminateForeignKeyJoin"
    patterns = (Pattern(Project, (Pattern(Join, (None, _TABLE), _INNER),)),
                Pattern(Project, (Pattern(Join, (_TABLE, None), _INNER),)))

    def matches(self, expr: Plan, group: Group, context: SearchContext) -> bool:
        return context.settings.exploit_constraints   # declared keys are trusted only then

    def apply(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[Plan]:
        assert isinstance(expr, Project) and isinstance(expr.input, Join)
        join = expr.input
        table, other = (join.right, join.left) if isinstance(join.right, Scan) else (join.left, join.right)
        assert isinstance(table, Scan)
        read = set().union(*(columns_of(e) for _, e in expr.assignments))
        if read & set(table.output):
            return
        pairs = _equalities(join.condition, set(other.output), set(table.output))
        if pairs is None:
            return
        by_name = {name.lower(): column for name, column in zip(table.column_names, table.columns)}
        for fk in other.foreign_keys:
            if fk.table != table.table or not all(n.lower() in by_name for n in fk.referenced):
                continue
            referenced = tuple(by_name[n.lower()] for n in fk.referenced)
            if set(zip(fk.columns, referenced)) != pairs or frozenset(referenced) not in table.unique_keys:
                continue
            nullable = [c for c in fk.columns if c not in other.not_null]
            body: Plan = other
            if nullable:
                body = Filter(other, conjunction(negate(is_null(ColumnRef(c))) for c in nullable))
            yield Project(body, expr.assignments)
            return


def _equalities(condition: Expr, left: set, right: set) -> set | None:
    """The condition's conjuncts as (left column, right column) pairs, or None when one is not
    such an equality."""
    found = set()
    for conjunct in conjuncts(condition):
        pair = equated_columns(conjunct)
        if pair is None:
            return None
        a, b = pair
        if a in left and b in right:
            found.add((a, b))
        elif b in left and a in right:
            found.add((b, a))
        else:
            return None
    return found or None
