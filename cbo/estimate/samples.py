"""A table's row sample as one estimator reads it, with what derives from the sample alone.

Joins and filters read a table's sample column by column: the values' counts, the pairs of a
key's and a foreign key's sampled rows, a join class's index over several samples, a string
column's integer codes. Each of these depends on the samples and the statistics alone, never on
a plan, so it is computed once and kept on the :class:`TableSample`, by column names (and, for
what spans two tables, the other table's and column's names). The estimator owns one
``TableSample`` per table it has statistics for, for as long as it lives: the statistics do
not change under it, so nothing kept can go stale, and an estimator made for other statistics
shares none of it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

from stats.sample import RowSample

T = TypeVar("T")


class TableSample:
    """The sample of table ``table`` (its rows: ``RowSample``) and what derives from it."""

    __slots__ = ("table", "rows", "population", "column", "_kept")

    def __init__(self, table: str, rows: RowSample):
        self.table = table
        self.rows = rows
        self.population = rows.population
        # (values, is_null) of a column by name, or None when the sample lacks it
        self.column: Callable[[str], tuple[np.ndarray, np.ndarray] | None] = rows.column
        self._kept: dict[Hashable, Any] = {}

    @property
    def size(self) -> int:
        return self.rows.size

    @property
    def is_whole_table(self) -> bool:
        return self.rows.is_whole_table

    def kept(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, computed once for ``key``: a tuple naming what is computed and the
        columns (this table's by name, another's by table and name) it derives from."""
        found = self._kept.get(key, _MISSING)
        if found is _MISSING:
            found = self._kept[key] = compute()
        return found

    def __repr__(self) -> str:
        return f"TableSample({self.table}, {self.rows.size} rows)"


_MISSING = object()
