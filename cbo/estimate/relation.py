"""The estimate of an intermediate result: rows, and what is known about each column."""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from cbo.estimate.column import ColumnEstimate
from cbo.estimate.samples import TableSample
from cbo.ir.expressions import Column, Expr
from cbo.ir.operators import ForeignKeyRef

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")

if TYPE_CHECKING:
    def layered(*maps: Mapping[K, V]) -> ChainMap[K, V]:
        """A ChainMap over column maps: lookups read them in order, and writes (where a caller
        makes any, into a fresh dict it puts first) go to the first only; typeshed's ChainMap
        asks every map to be mutable."""
        ...
else:
    layered = ChainMap   # (the class itself: estimates build one per operator)


class DerivedColumns(Mapping[Column, ColumnEstimate]):
    """Column estimates derived from another mapping on first access.

    A join or filter changes every column a little (rows scaled), but the operators above
    read only a few: deriving lazily keeps estimation proportional to the columns used.
    """

    def __init__(self, base: Mapping[Column, Any],
                 derive: Callable[[Column, Any], ColumnEstimate],
                 overrides: Mapping[Column, ColumnEstimate] | None = None):
        self._base = base
        self._derive = derive
        self._overrides = dict(overrides or {})
        self._done: dict[Column, ColumnEstimate] = {}

    def __getitem__(self, column: Column) -> ColumnEstimate:
        found = self._overrides.get(column)
        if found is not None:
            return found
        found = self._done.get(column)
        if found is None:
            found = self._derive(column, self._base[column])
            self._done[column] = found
        return found

    def __contains__(self, column: object) -> bool:
        return column in self._overrides or column in self._base

    def __iter__(self) -> Iterator[Column]:
        yield from self._overrides
        for column in self._base:
            if column not in self._overrides:
                yield column

    def __len__(self) -> int:
        return len(self._overrides) + sum(1 for c in self._base if c not in self._overrides)


@dataclass(frozen=True)
class SampleView:
    """A base table's row sample seen through the filters applied so far.

    ``names`` maps plan columns to sample columns; ``mask`` marks the sample rows that pass
    every filter above the scan (None: all of them).
    """

    sample: TableSample
    names: Mapping[Column, str]
    mask: np.ndarray | None = None

    def arrays(self, column: Column) -> tuple[np.ndarray, np.ndarray] | None:
        name = self.names.get(column)
        return None if name is None else self.sample.column(name)

    def kept(self, column: Column, what: str, make: Callable[[np.ndarray], T]) -> T:
        """``make`` of a sample column's values, kept on the table's sample (by column name)."""
        name = self.names[column]

        def made() -> T:
            found = self.sample.column(name)
            assert found is not None
            return make(found[0])

        return self.sample.kept((what, name), made)

    @cached_property
    def derived(self) -> dict[Hashable, Any]:
        """What derives from the rows passing this view's filters (``mask``), kept on the view:
        it lives as long as the view, whose estimates read it."""
        return {}

    @property
    def passing(self) -> int:
        return self.sample.size if self.mask is None else int(self.mask.sum())


@dataclass(frozen=True)
class Origin:
    """Where a column comes from: a scan, whether it is a key there, and for sample-based join
    corrections its table column name, its unfiltered estimate and the table's sample as last
    filtered (a join result keeps the sample view of each base table it was built from)."""

    scan: object
    unique: bool
    name: str | None = None
    base: ColumnEstimate | None = None
    base_rows: float = 0.0
    sample: SampleView | None = None
    # "min" or "max": the column is that aggregate of the named column (per group), not the
    # column itself (``join_sets`` recognizes ``x = min(x)`` joined back on the grouping key).
    extreme: str | None = None
    # For such an extreme over a join set: what restricted the source's rows there, besides the
    # grouping key (``cbo.estimate.extremes``).
    extreme_over: frozenset | None = None

    def __init__(self, scan: object, unique: bool, name: str | None = None, base: ColumnEstimate | None = None,
                 base_rows: float = 0.0, sample: SampleView | None = None, extreme: str | None = None,
                 extreme_over: frozenset | None = None):
        # The dataclass's constructor, with the fields set at once rather than through a frozen
        # dataclass's setter one by one: a scan makes one origin per column, and a filter
        # re-points every column of its input.
        self.__dict__.update(scan=scan, unique=unique, name=name, base=base, base_rows=base_rows, sample=sample,
                             extreme=extreme, extreme_over=extreme_over)

    @property
    def view(self) -> SampleView:
        """The sample view, where the caller has made sure there is one."""
        assert self.sample is not None, f"column {self.name} has no sample"
        return self.sample

    def seen_through(self, view: SampleView) -> Origin:
        """``replace(self, sample=view)``, field by field: a filter re-points every column of its
        input, and ``dataclasses.replace`` reads the fields' list each time."""
        return Origin(self.scan, self.unique, self.name, self.base, self.base_rows, view, self.extreme,
                      self.extreme_over)


@dataclass(frozen=True, eq=False)
class Leaf:
    """An input of an inner-join set: its output columns (its identity), estimate and unique keys."""

    key: frozenset[Column]
    estimate: RelEstimate
    unique: frozenset[frozenset[Column]]
    # Declared foreign keys of the input (``ForeignKeyRef``): a column that references a whole
    # table's key matches it once per non-NULL row.
    foreign: frozenset[ForeignKeyRef] = frozenset()

    @cached_property
    def single_keys(self) -> frozenset[Column]:
        """The columns that are each a unique key alone (``frozenset([c]) in unique``), kept: the
        classes of a join set ask it of every member, thousands of times per memo."""
        return frozenset(c for key in self.unique if len(key) == 1 for c in key)

    @cached_property
    def order(self) -> int:
        """Where the leaf sorts among a join set's leaves: its least column id (-1 without
        columns), kept (a leaf is sorted again in every set holding it)."""
        return min((c.id for c in self.key), default=-1)


@dataclass(frozen=True, eq=False)
class JoinSet:
    """A tree of inner joins as a set: its leaves (in a canonical order) and join conjuncts."""

    leaves: tuple[Leaf, ...]
    conjuncts: frozenset[Expr]


@dataclass(frozen=True)
class RelEstimate:
    rows: float
    columns: Mapping[Column, ColumnEstimate]
    # Domain sizes of column groups (multi-column keys and foreign keys): distinct combinations.
    groups: Mapping[frozenset[Column], float] = field(default_factory=dict)
    origins: Mapping[Column, Origin] = field(default_factory=dict)
    sample: SampleView | None = None
    notes: frozenset[str] = frozenset()   # defaults this estimate rests on
    # An inner-join result: the set it joins, so the next inner join is estimated from the
    # whole set rather than from this estimate's columns (``cbo.estimate.join_sets``).
    join_set: JoinSet | None = None
    # A scan of one table under filters (and projections): the filters' predicates, in order
    # (empty for the scan alone); None for anything else. What an extreme joined back compares
    # (``cbo.estimate.extremes``).
    conditions: tuple[Expr, ...] | None = None
    # A left or right join's result: its matched rows, the inner join of its two sides, as a
    # set (the inner joins above are never estimated below the same joins as inner).
    matched: JoinSet | None = None
    # A left or right join's result: its preserved side, as a set. Each of its rows is among
    # the join's at least once, so an inner join above that reads only that side's columns is
    # never estimated below the same join over that side.
    preserved: JoinSet | None = None

    def column(self, column: Column) -> ColumnEstimate:
        found = self.columns.get(column)
        if found is None:
            return ColumnEstimate.unknown(self.rows)
        return found
