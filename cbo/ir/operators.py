"""Logical plan operators: immutable values with structural equality, ready for a memo.

Each node knows its children and output columns, and derives two logical properties from the
catalog's keys and its own semantics:

* ``unique_keys``: sets of output columns whose values are unique across the node's rows;
* ``not_null``: output columns that are never NULL.

Join kinds: inner (a cross join is an inner join on TRUE), left, right, full, semi, anti and
mark. A mark join keeps every left row once and appends a boolean ``mark`` column that is
TRUE when some right row satisfies ``condition`` and ``mark_predicate`` is TRUE for it, NULL
when none does but ``mark_predicate`` is NULL for some such row, and FALSE otherwise: exactly
the three-valued result of ``x IN (subquery)`` and of ``EXISTS`` (whose mark_predicate is TRUE).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from cbo.ir.expressions import (
    TRUE,
    AggregateCall,
    Call,
    Column,
    ColumnRef,
    Constant,
    Expr,
    SpecialForm,
    WindowCall,
    cache_hash,
    columns_of,
    conjuncts,
    uses_row_id,
)
from cbo.ir.expressions import walk as walk_expr
from cbo.ir.kinds import JOIN_KINDS as JOIN_KINDS  # re-exported: the join kinds' tuple, read from here too
from cbo.ir.kinds import Comparison, JoinKind, SetOpKind, SubqueryKind
from cbo.ir.types import BOOLEAN, DataType

MAX_KEYS = 8   # unique keys kept per node

# Joins whose output is their left input's rows (filters of the left side by the right side).
# ``null_aware_anti`` is single-column ``x NOT IN (SELECT y ...)``: its condition is ``x = y``,
# and it keeps no row when the right side has a NULL y, every row when the right side is empty,
# and otherwise the rows whose x is not NULL and equals no y.
FILTERING_KINDS: tuple[JoinKind, ...] = ("semi", "anti", "null_aware_anti")


class Plan:
    """Base of logical operators."""

    def fields_hash(self) -> int:
        """The dataclass's own hash of the node's fields (``cache_hash`` provides it)."""
        raise NotImplementedError

    @property
    def children(self) -> tuple[Plan, ...]:
        return ()

    def with_children(self, children: tuple[Plan, ...]) -> Plan:
        return self

    @property
    def output(self) -> tuple[Column, ...]:
        raise NotImplementedError

    def expressions(self) -> tuple[Expr, ...]:
        """The scalar expressions this node evaluates (for free-column analysis)."""
        return ()

    @property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        return frozenset()

    @property
    def not_null(self) -> frozenset[Column]:
        return frozenset(c for c in self.output if not c.nullable)

    @property
    def foreign_keys(self) -> frozenset[ForeignKeyRef]:
        """Output columns whose non-NULL values all appear in another table's key (declared
        foreign keys, passed up wherever the columns pass unchanged)."""
        return frozenset()


@dataclass(frozen=True)
class ForeignKeyRef:
    """``columns`` reference ``table`` (qualified name) on its columns ``referenced`` (by name):
    every row whose ``columns`` are all non-NULL has exactly those values in some row of
    ``table``. Declared in the catalog; cbo trusts it and never checks it."""

    columns: tuple[Column, ...]
    table: str
    referenced: tuple[str, ...]


class UnaryPlan(Plan):
    """An operator over one input; by default it passes on its input's columns and properties."""

    input: Plan

    @property
    def children(self) -> tuple[Plan, ...]:
        return (self.input,)

    def with_children(self, children: tuple[Plan, ...]) -> Plan:
        return dataclasses.replace(self, input=children[0])  # type: ignore[type-var]

    @property
    def output(self) -> tuple[Column, ...]:
        return self.input.output

    @property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        return self.input.unique_keys

    @property
    def not_null(self) -> frozenset[Column]:
        return self.input.not_null

    @property
    def foreign_keys(self) -> frozenset[ForeignKeyRef]:
        # A subset of the input's rows, or a reordering: the values are the input's.
        return self.input.foreign_keys


def _kept_foreign_keys(keys: frozenset[ForeignKeyRef], renamed: dict[Column, Column]) -> frozenset[ForeignKeyRef]:
    """The foreign keys whose columns all pass through (under their new names)."""
    return frozenset(ForeignKeyRef(tuple(renamed[c] for c in fk.columns), fk.table, fk.referenced)
                     for fk in keys if all(c in renamed for c in fk.columns))


_cache_hash = cache_hash


@dataclass(frozen=True)
class AssumedKey:
    """A unique key the catalog does not declare, and what vouches for it: ``"hint"`` (the
    query's ``#distinct@`` hint, ``cbo.frontend.hints``) or ``"statistics"`` (an exact distinct
    count equal to the non-NULL row count). As a declared UNIQUE key: non-NULL values are
    unique; it says nothing about NULLs."""

    columns: tuple[Column, ...]
    source: str


@_cache_hash
@dataclass(frozen=True)
class Scan(Plan):
    """Read a catalog table. ``columns[i]`` holds the table's column ``column_names[i]``."""

    table: str                       # the catalog's qualified name, e.g. "lake.lineitem"
    columns: tuple[Column, ...]
    column_names: tuple[str, ...]
    keys: tuple[tuple[Column, ...], ...] = ()   # unique keys from the catalog (primary, unique)
    references: tuple[ForeignKeyRef, ...] = ()   # foreign keys from the catalog
    # Unique keys from a hint or from exact statistics: in ``unique_keys`` (so rules use them),
    # never in ``not_null`` (``keys[0]``, the primary key, is also NOT NULL).
    assumed_keys: tuple[AssumedKey, ...] = ()

    @property
    def output(self) -> tuple[Column, ...]:
        return self.columns

    @property
    def foreign_keys(self) -> frozenset[ForeignKeyRef]:
        return frozenset(self.references)

    @property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        return frozenset(frozenset(k) for k in self.keys) | frozenset(frozenset(k.columns) for k in self.assumed_keys)

    @property
    def not_null(self) -> frozenset[Column]:
        primary = self.keys[0] if self.keys else ()
        return frozenset(c for c in self.columns if not c.nullable) | frozenset(primary)


@_cache_hash
@dataclass(frozen=True)
class Filter(UnaryPlan):
    input: Plan
    predicate: Expr

    def expressions(self) -> tuple[Expr, ...]:
        return (self.predicate,)

    @property
    def not_null(self) -> frozenset[Column]:
        # A conjunct that rejects NULL inputs (comparisons, IS NOT NULL) makes its columns non-null.
        strict = set()
        for conjunct in conjuncts(self.predicate):
            strict |= null_rejected_columns(conjunct)
        return self.input.not_null | (frozenset(strict) & frozenset(self.output))


@_cache_hash
@dataclass(frozen=True)
class Project(UnaryPlan):
    input: Plan
    assignments: tuple[tuple[Column, Expr], ...]

    @property
    def output(self) -> tuple[Column, ...]:
        return tuple(c for c, _ in self.assignments)

    def expressions(self) -> tuple[Expr, ...]:
        return tuple(e for _, e in self.assignments)

    def _renames(self) -> dict[Column, Column]:
        return {e.column: c for c, e in self.assignments if isinstance(e, ColumnRef)}

    @property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        renames = self._renames()
        kept = frozenset(frozenset(renames[c] for c in key) for key in self.input.unique_keys
                         if all(c in renames for c in key))
        # A numbered row (row_id()) is a key by construction.
        numbered = frozenset(frozenset({c}) for c, e in self.assignments if uses_row_id(e) and not e.children())
        return kept | numbered if numbered else kept

    @property
    def not_null(self) -> frozenset[Column]:
        inner = self.input.not_null
        out = set()
        for column, expr in self.assignments:
            if isinstance(expr, ColumnRef):
                # (the input decides: a column declared NOT NULL is NULL where an outer join
                # below padded it, and keeps its declaration)
                if expr.column in inner:
                    out.add(column)
            elif isinstance(expr, Constant) and expr.value is not None:
                out.add(column)
            elif not column.nullable and columns_of(expr) <= inner:
                out.add(column)
        return frozenset(out)

    @property
    def foreign_keys(self) -> frozenset[ForeignKeyRef]:
        return _kept_foreign_keys(self.input.foreign_keys, self._renames())


@_cache_hash
@dataclass(frozen=True)
class Join(Plan):
    kind: JoinKind
    left: Plan
    right: Plan
    condition: Expr = TRUE
    mark: Column | None = None            # mark joins only: the boolean output column
    mark_predicate: Expr | None = None    # mark joins only: the three-valued comparison

    def __init__(self, kind: JoinKind, left: Plan, right: Plan, condition: Expr = TRUE, mark: Column | None = None,
                 mark_predicate: Expr | None = None):
        # The dataclass's constructor, with the fields set at once rather than through a frozen
        # dataclass's setter one by one, and its hash taken at once (``cache_hash``): a join
        # enumeration builds tens of thousands of joins, and the memo hashes each.
        if kind not in JOIN_KINDS:
            raise ValueError(f"unknown join kind {kind}")
        fields = self.__dict__
        fields.update(kind=kind, left=left, right=right, condition=condition, mark=mark,
                      mark_predicate=mark_predicate)
        fields["_hash"] = self.fields_hash()

    @property
    def children(self) -> tuple[Plan, ...]:
        return (self.left, self.right)

    def with_children(self, children: tuple[Plan, ...]) -> Plan:
        return Join(self.kind, children[0], children[1], self.condition, self.mark, self.mark_predicate)

    @property
    def output(self) -> tuple[Column, ...]:
        if self.kind in FILTERING_KINDS:
            return self.left.output
        if self.kind == "mark":
            assert self.mark is not None
            return self.left.output + (self.mark,)
        return self.left.output + self.right.output

    def expressions(self) -> tuple[Expr, ...]:
        return (self.condition,) + ((self.mark_predicate,) if self.mark_predicate is not None else ())

    @property
    def equi_keys(self) -> tuple[tuple[Column, Column], ...]:
        """Pairs (left column, right column) equated by the condition's conjuncts (``=`` or
        ``IS NOT DISTINCT FROM``: ``key_columns``): the keys a hash join hashes."""
        found = self.__dict__.get("_equi_keys")
        if found is None:
            found = self._equi_keys()
            object.__setattr__(self, "_equi_keys", found)
        return found

    @property
    def has_equi_key(self) -> bool:
        """Whether some conjunct equates a left column with a right one (stops at the first)."""
        found = self.__dict__.get("_has_equi_key")
        if found is None:
            known = self.__dict__.get("_equi_keys")
            found = bool(known) if known is not None else self._find_equi_key()
            object.__setattr__(self, "_has_equi_key", found)
        return found

    def _find_equi_key(self) -> bool:
        left = right = None
        for conjunct in conjuncts(self.condition):
            pair = key_columns(conjunct)
            if pair is None:
                continue
            if left is None:
                left = {c.id for c in self.left.output}
                right = {c.id for c in self.right.output}
            a, b = pair
            if (a.id in left and b.id in right) or (b.id in left and a.id in right):  # type: ignore[operator]
                return True
        return False

    def _equi_keys(self) -> tuple[tuple[Column, Column], ...]:
        left = {c.id for c in self.left.output}
        right = {c.id for c in self.right.output}
        pairs = []
        for conjunct in conjuncts(self.condition):
            pair = key_columns(conjunct)
            if pair is None:
                continue
            a, b = pair
            if a.id in left and b.id in right:
                pairs.append((a, b))
            elif b.id in left and a.id in right:
                pairs.append((b, a))
        return tuple(pairs)

    @property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        if self.kind in FILTERING_KINDS or self.kind == "mark":
            return self.left.unique_keys
        # Each side's keys read once: a plan's keys are derived anew on each read, so reading
        # them three times per join made a tree of d joins derive its leaves' keys 3^d times.
        left_keys, right_keys = self.left.unique_keys, self.right.unique_keys
        keys = set()
        right_cols = {b for _, b in self.equi_keys}
        left_cols = {a for a, _ in self.equi_keys}
        # Each left row matches at most one right row when the right side's join columns are unique.
        right_unique = any(k <= right_cols for k in right_keys)
        left_unique = any(k <= left_cols for k in left_keys)
        if right_unique and self.kind in ("inner", "left"):
            keys |= set(left_keys)
        if left_unique and self.kind in ("inner", "right"):
            keys |= set(right_keys)
        if self.kind == "inner" and not keys:
            for a in left_keys:
                for b in right_keys:
                    keys.add(a | b)
        # Keys multiply along a chain of joins; the smallest few are the useful ones.
        return frozenset(sorted(keys, key=lambda k: (len(k), sorted(c.id for c in k)))[:MAX_KEYS])

    @property
    def not_null(self) -> frozenset[Column]:
        left, right = self.left.not_null, self.right.not_null
        # (a null-aware anti join keeps NULL x rows when its right side is empty: x may be NULL)
        if self.kind in FILTERING_KINDS:
            return left
        if self.kind == "mark":
            return left
        if self.kind == "inner":
            strict = set()
            for conjunct in conjuncts(self.condition):
                strict |= null_rejected_columns(conjunct)
            return left | right | (frozenset(strict) & frozenset(self.output))
        if self.kind == "left":
            return left
        if self.kind == "right":
            return right
        return frozenset()

    @property
    def foreign_keys(self) -> frozenset[ForeignKeyRef]:
        # A join passes values through unchanged; padded NULLs break no foreign key.
        if self.kind in FILTERING_KINDS or self.kind == "mark":
            return self.left.foreign_keys
        return self.left.foreign_keys | self.right.foreign_keys


@dataclass(frozen=True)
class SortKey:
    column: Column
    ascending: bool = True
    nulls_first: bool = False

    def __str__(self) -> str:
        return f"{self.column} {'ASC' if self.ascending else 'DESC'} NULLS {'FIRST' if self.nulls_first else 'LAST'}"


@_cache_hash
@dataclass(frozen=True)
class Aggregate(UnaryPlan):
    """Group by columns and compute aggregates; no grouping columns means one row (even for no input)."""

    input: Plan
    group_by: tuple[Column, ...]
    aggregates: tuple[tuple[Column, AggregateCall], ...] = ()

    @property
    def output(self) -> tuple[Column, ...]:
        return self.group_by + tuple(c for c, _ in self.aggregates)

    def expressions(self) -> tuple[Expr, ...]:
        return tuple(a for _, a in self.aggregates) + tuple(ColumnRef(c) for c in self.group_by)

    @property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        if not self.group_by:
            return frozenset({frozenset()})  # at most one row: the empty key is unique
        return frozenset({frozenset(self.group_by)}) | frozenset(
            k for k in self.input.unique_keys if k <= set(self.group_by))

    @property
    def not_null(self) -> frozenset[Column]:
        grouped = self.input.not_null & frozenset(self.group_by)
        counts = {c for c, a in self.aggregates if a.name in ("count", "count_star")}
        return grouped | frozenset(counts)

    @property
    def foreign_keys(self) -> frozenset[ForeignKeyRef]:
        return _kept_foreign_keys(self.input.foreign_keys, {c: c for c in self.group_by})


@_cache_hash
@dataclass(frozen=True)
class GroupingSets(UnaryPlan):
    """Aggregate once per grouping set and stack the results: ``GROUP BY ROLLUP``, ``CUBE`` and
    ``GROUPING SETS``.

    ``keys`` are the input columns some set groups by, each output as ``outputs[i]``; each set
    of ``sets`` lists the positions (in ``keys``, ascending) of the keys it groups by. The
    result is, for each set ``s`` in order (a set listed twice counts twice), the rows of
    ``Aggregate[keys of s; aggregates](input)`` with every key outside ``s`` output as NULL,
    all stacked (UNION ALL). So the empty set ``()`` gives one row even over no input, as a
    scalar aggregation does. A ``groupings`` column is SQL's ``GROUPING(k_1, ..., k_n)`` for
    the keys at the positions it lists: bit ``n - j`` (the first key the highest bit) is 1 in
    the rows of sets without ``k_j``; it tells a rolled-up key's NULL from a NULL in the data.

    Output: ``outputs``, the aggregates' columns, the groupings' columns. The outputs are
    columns of their own, not the keys: a key is NULL in the rows of sets without it.
    """

    input: Plan
    keys: tuple[Column, ...]
    outputs: tuple[Column, ...]
    sets: tuple[tuple[int, ...], ...]
    aggregates: tuple[tuple[Column, AggregateCall], ...] = ()
    groupings: tuple[tuple[Column, tuple[int, ...]], ...] = ()

    @property
    def output(self) -> tuple[Column, ...]:
        return self.outputs + tuple(c for c, _ in self.aggregates) + tuple(c for c, _ in self.groupings)

    def expressions(self) -> tuple[Expr, ...]:
        return tuple(a for _, a in self.aggregates) + tuple(ColumnRef(c) for c in self.keys)

    @property
    def in_every_set(self) -> frozenset[int]:
        """Positions of the keys every set groups by (never NULLed by the rollup)."""
        found = set(range(len(self.keys)))
        for grouping_set in self.sets:
            found &= set(grouping_set)
        return frozenset(found)

    def grouping_value(self, positions: tuple[int, ...], grouping_set: tuple[int, ...]) -> int:
        """``GROUPING`` of the keys at ``positions`` in the rows of ``grouping_set``."""
        value = 0
        for position in positions:
            value = value * 2 + (0 if position in grouping_set else 1)
        return value

    @property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        # The key outputs with a GROUPING of every key are unique when no set is listed twice:
        # the grouping names the set, the outputs the group within it.
        everything = tuple(range(len(self.keys)))
        if len(set(self.sets)) == len(self.sets):
            for column, positions in self.groupings:
                if tuple(sorted(positions)) == everything:
                    return frozenset({frozenset(self.outputs) | {column}})
        return frozenset()

    @property
    def not_null(self) -> frozenset[Column]:
        inner = self.input.not_null
        kept = {self.outputs[i] for i in self.in_every_set if self.keys[i] in inner}
        counts = {c for c, a in self.aggregates if a.name in ("count", "count_star")}
        return frozenset(kept | counts | {c for c, _ in self.groupings})

    @property
    def foreign_keys(self) -> frozenset[ForeignKeyRef]:
        # A rolled-up key is NULL, which no foreign key constrains.
        return _kept_foreign_keys(self.input.foreign_keys, dict(zip(self.keys, self.outputs)))


@_cache_hash
@dataclass(frozen=True)
class Sort(UnaryPlan):
    input: Plan
    keys: tuple[SortKey, ...]

    def expressions(self) -> tuple[Expr, ...]:
        return tuple(ColumnRef(k.column) for k in self.keys)


@_cache_hash
@dataclass(frozen=True)
class Window(UnaryPlan):
    """Window functions over the input's rows (``cbo.ir.windows``): every input row passes
    through once, unchanged, and gains one column per function, computed over the rows of its
    partition (equal ``partition_by`` values, NULLs equal) in ``order_by``'s order. No partition
    columns: the input is one partition. The functions share the partition and the order; each
    has its own frame."""

    input: Plan
    partition_by: tuple[Column, ...]
    order_by: tuple[SortKey, ...]
    functions: tuple[tuple[Column, WindowCall], ...]

    @property
    def output(self) -> tuple[Column, ...]:
        return self.input.output + tuple(c for c, _ in self.functions)

    def expressions(self) -> tuple[Expr, ...]:
        return (tuple(f for _, f in self.functions) + tuple(ColumnRef(c) for c in self.partition_by)
                + tuple(ColumnRef(k.column) for k in self.order_by))

    @property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        # row_number() numbers the rows of each partition 1, 2, 3 ...: with the partition
        # columns it is a key.
        numbered = frozenset(frozenset(self.partition_by) | {c} for c, f in self.functions if f.name == "row_number")
        return self.input.unique_keys | numbered if numbered else self.input.unique_keys

    @property
    def not_null(self) -> frozenset[Column]:
        # Ranks and counts are never NULL; the other functions are NULL for an empty frame, a
        # missing offset row or NULL values.
        counted = frozenset(c for c, f in self.functions if f.name in NEVER_NULL_WINDOW_FUNCTIONS)
        return self.input.not_null | counted


NEVER_NULL_WINDOW_FUNCTIONS = ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile",
                               "count", "count_star")


@_cache_hash
@dataclass(frozen=True)
class Limit(UnaryPlan):
    input: Plan
    count: int | None
    offset: int = 0

    @property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        if self.count is not None and self.count <= 1:
            return frozenset({frozenset()})
        return self.input.unique_keys


@_cache_hash
@dataclass(frozen=True)
class SetOp(Plan):
    """UNION / INTERSECT / EXCEPT, ALL or DISTINCT. ``inputs_columns[i]`` maps input i to ``columns``."""

    kind: SetOpKind
    distinct: bool
    inputs: tuple[Plan, ...]
    columns: tuple[Column, ...]
    inputs_columns: tuple[tuple[Column, ...], ...]

    @property
    def children(self) -> tuple[Plan, ...]:
        return self.inputs

    def with_children(self, children: tuple[Plan, ...]) -> Plan:
        return SetOp(self.kind, self.distinct, children, self.columns, self.inputs_columns)

    @property
    def output(self) -> tuple[Column, ...]:
        return self.columns

    def expressions(self) -> tuple[Expr, ...]:
        return tuple(ColumnRef(c) for cols in self.inputs_columns for c in cols)

    @property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        return frozenset({frozenset(self.columns)}) if self.distinct else frozenset()

    @property
    def not_null(self) -> frozenset[Column]:
        per_input = [frozenset(self.columns[i] for i, c in enumerate(cols) if c in child.not_null)
                     for child, cols in zip(self.inputs, self.inputs_columns)]
        if self.kind == "union":
            return frozenset.intersection(*per_input)
        return per_input[0]  # INTERSECT/EXCEPT rows come from the first input


@_cache_hash
@dataclass(frozen=True)
class Values(Plan):
    columns: tuple[Column, ...]
    rows: tuple[tuple[Expr, ...], ...]

    @property
    def output(self) -> tuple[Column, ...]:
        return self.columns

    def expressions(self) -> tuple[Expr, ...]:
        return tuple(e for row in self.rows for e in row)

    @property
    def not_null(self) -> frozenset[Column]:
        def constant(e: Expr) -> bool:
            return isinstance(e, Constant) and e.value is not None

        return frozenset(c for i, c in enumerate(self.columns) if all(constant(r[i]) for r in self.rows))


@_cache_hash
@dataclass(frozen=True)
class CteConsumer(Plan):
    """A read of common table expression ``cte``'s rows, computed once by the ``CteAnchor`` of
    the same number above it (Orca's CTEConsumer): ``columns[i]`` holds the producer's output
    column ``i``. ``producer`` is the producer's plan, for estimation and keys only: a consumer
    is a leaf, never a parent of the producer (it is not compared, so equal reads are equal)."""

    cte: int
    name: str                            # the CTE's name in the query, for EXPLAIN
    columns: tuple[Column, ...]
    producer: Plan = field(compare=False, repr=False)

    @property
    def output(self) -> tuple[Column, ...]:
        return self.columns

    def _renamed(self) -> dict[Column, Column]:
        return dict(zip(self.producer.output, self.columns))

    @property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        renamed = self._renamed()
        return frozenset(frozenset(renamed[c] for c in key) for key in self.producer.unique_keys
                         if all(c in renamed for c in key))

    @property
    def not_null(self) -> frozenset[Column]:
        # (the producer decides: its columns' declarations do not see an outer join's padding)
        renamed = self._renamed()
        return frozenset(renamed[c] for c in self.producer.not_null if c in renamed)

    @property
    def foreign_keys(self) -> frozenset[ForeignKeyRef]:
        return _kept_foreign_keys(self.producer.foreign_keys, self._renamed())


@_cache_hash
@dataclass(frozen=True)
class CteAnchor(Plan):
    """Compute ``producer`` once and run ``body``, whose ``CteConsumer`` nodes numbered ``cte``
    read its rows (Orca's CTEAnchor and Sequence in one node). The output is ``body``'s; the
    producer's columns are seen only through the consumers. ``cbo.memo.rules.inline_cte`` puts
    the body with each consumer replaced by a copy of the producer beside it in the memo."""

    cte: int
    name: str
    producer: Plan
    body: Plan

    @property
    def children(self) -> tuple[Plan, ...]:
        return (self.producer, self.body)

    def with_children(self, children: tuple[Plan, ...]) -> Plan:
        return CteAnchor(self.cte, self.name, children[0], children[1])

    @property
    def output(self) -> tuple[Column, ...]:
        return self.body.output

    @property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        return self.body.unique_keys

    @property
    def not_null(self) -> frozenset[Column]:
        return self.body.not_null

    @property
    def foreign_keys(self) -> frozenset[ForeignKeyRef]:
        return self.body.foreign_keys


def consumers_of(plan: Plan, cte: int) -> list[CteConsumer]:
    """The consumers of CTE ``cte`` in ``plan`` (in subquery expressions too)."""
    found = []
    for node in walk(plan):
        if isinstance(node, CteConsumer) and node.cte == cte:
            found.append(node)
        for expr in node.expressions():
            for e in walk_expr(expr):
                if isinstance(e, SubqueryExpr):
                    found.extend(consumers_of(e.plan, cte))
    return found


# --------------------------------------------------------------------------------------------
# Analysis helpers


def enumerated_join(kind: JoinKind, left: Plan, right: Plan, condition: Expr,
                    equi_keys: tuple[tuple[Column, Column], ...] | None) -> Join:
    """``Join(kind, left, right, condition)`` with its ``equi_keys`` known, when not None: a join
    enumeration knows the keys of each join it builds, which the join would find again in its
    condition."""
    join = Join(kind, left, right, condition)
    if equi_keys is not None:
        object.__setattr__(join, "_equi_keys", equi_keys)
    return join


def walk(plan: Plan) -> Iterator[Plan]:
    stack = [plan]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def free_columns(plan: Plan) -> frozenset[Column]:
    """Columns the plan reads but does not produce: its outer references (correlation)."""
    produced: set[Column] = set()
    used: set[Column] = set()
    for node in walk(plan):
        produced.update(node.output)
        if isinstance(node, Scan):
            continue
        for expr in node.expressions():
            used |= columns_of(expr)
        if isinstance(node, Join) and node.mark is not None:
            produced.add(node.mark)
    return frozenset(used - produced)


@dataclass(frozen=True)
class SubqueryExpr(Expr):
    """A subquery inside an expression, as bound; decorrelation replaces it with joins.

    kind: ``scalar`` (value of the single column), ``exists``, ``in`` (operand IN subquery),
    ``any`` / ``all`` (operand <comparison> ANY/ALL subquery).
    """

    kind: SubqueryKind
    plan: Plan
    operand: Expr | None = None
    comparison: Comparison | None = None
    type: DataType = field(default=BOOLEAN)
    # Where the subquery is in the SQL text ("line L, column C: ", or ""), for an error raised
    # while decorrelating it; not part of the expression's identity.
    where: str = field(default="", compare=False, repr=False)
    holds_plan: ClassVar[bool] = True

    def children(self) -> tuple[Expr, ...]:
        return (self.operand,) if self.operand is not None else ()

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return SubqueryExpr(self.kind, self.plan, children[0] if children else None, self.comparison, self.type,
                            self.where)

    def outer_columns(self) -> frozenset[Column]:
        return free_columns(self.plan)

    def __str__(self) -> str:
        head = f"{self.operand} {self.comparison or ''} " if self.operand is not None else ""
        return f"{head}{self.kind.upper()}(<subquery>)"


def contains_subquery(expr: Expr) -> bool:
    return any(isinstance(node, SubqueryExpr) for node in walk_expr(expr))


def equated_columns(expr: Expr) -> tuple[Column, Column] | None:
    """The two columns of ``a = b``, else None."""
    if isinstance(expr, Call) and expr.name == "eq":
        a, b = expr.args
        if isinstance(a, ColumnRef) and isinstance(b, ColumnRef):
            return a.column, b.column
    return None


def key_columns(expr: Expr) -> tuple[Column, Column] | None:
    """The two columns of ``a = b`` or ``a IS NOT DISTINCT FROM b``: a pair a hash join can key
    on (Spark and DuckDB hash both; the null-safe form also matches NULL with NULL), else None.
    Only hash-join keys read this; rules that rebuild or chain equalities read
    ``equated_columns``, which is ``=`` alone."""
    if isinstance(expr, Call) and expr.name == "is_not_distinct_from":
        a, b = expr.args
        if isinstance(a, ColumnRef) and isinstance(b, ColumnRef):
            return a.column, b.column
    return equated_columns(expr)


def null_rejected_columns(expr: Expr) -> set[Column]:
    """Columns that cannot be NULL in rows where ``expr`` is TRUE."""
    if isinstance(expr, Call) and expr.name in ("eq", "neq", "lt", "lte", "gt", "gte", "like"):
        return {a.column for a in expr.args if isinstance(a, ColumnRef)}
    if isinstance(expr, SpecialForm):
        if expr.form == "NOT" and isinstance(expr.args[0], SpecialForm) and expr.args[0].form == "IS_NULL":
            inner = expr.args[0].args[0]
            return {inner.column} if isinstance(inner, ColumnRef) else set()
        if expr.form in ("IN", "BETWEEN") and isinstance(expr.args[0], ColumnRef):
            return {expr.args[0].column}
        if expr.form == "AND":
            found: set[Column] = set()
            for arg in expr.args:
                found |= null_rejected_columns(arg)
            return found
    return set()


def operator_name(plan: Plan) -> str:
    """How EXPLAIN and the drawings name an operator (a join by its kind, DISTINCT, UNION ALL)."""
    if isinstance(plan, Join):
        if plan.kind == "inner" and plan.condition == TRUE:
            return "CrossJoin"
        return {"inner": "InnerJoin", "left": "LeftJoin", "right": "RightJoin", "full": "FullJoin",
                "semi": "SemiJoin", "anti": "AntiJoin", "null_aware_anti": "NullAwareAntiJoin",
                "mark": "MarkJoin"}[plan.kind]
    if isinstance(plan, Aggregate) and not plan.aggregates:
        return "Distinct"
    if isinstance(plan, SetOp):
        return plan.kind.capitalize() + ("" if plan.distinct else "All")
    return type(plan).__name__
