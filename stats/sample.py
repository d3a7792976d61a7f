"""A uniform row sample kept with a table's statistics.

Histograms and MCVs describe one column at a time; the sample keeps whole rows, so an
estimator can evaluate a conjunction over several columns of one table on it and see the
correlation between them (Leis et al.'s "index-based sampling" idea, here per table). The
default size, 10,000 rows, is a third of what PostgreSQL's ANALYZE reads at its default
statistics target: when the table is no larger, the sample is the whole table.

Columns are held as NumPy arrays for vectorized evaluation, with a separate NULL mask:
numbers as float64, strings as objects, dates as ``datetime64[D]``, timestamps as
``datetime64[us]``, booleans as bool. On disk the sample is a Parquet file beside the
table's JSON (see ``stats.store``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

SAMPLE_SIZE = 10_000
SEED = 20261122


def choose_rows(available: int, size: int = SAMPLE_SIZE, seed: int = SEED) -> list[int]:
    """Indices of a uniform random subset of ``size`` rows out of ``available`` (all if fewer)."""
    if available <= size:
        return list(range(available))
    return sorted(random.Random(seed).sample(range(available), size))


class RowSample:
    """Rows of a table drawn uniformly at random; ``population`` is the table's row count."""

    def __init__(self, columns: Mapping[str, Sequence[Any]] | None, kinds: Mapping[str, str], population: float,
                 path: Path | None = None, size: int | None = None):
        self.kinds = dict(kinds)
        self.population = float(population)
        self.path = path
        self._raw = dict(columns) if columns is not None else None
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
        self._size = size

    @property
    def size(self) -> int:
        if self._size is None:
            self._size = len(next(iter(self._raw.values()))) if self._raw else len(self._load_table())
        return self._size

    @property
    def is_whole_table(self) -> bool:
        return self.size >= self.population

    def column(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(values, is_null) of a column, or None when the sample lacks it."""
        arrays = self._columns()
        return arrays.get(name)

    def _columns(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        if self._arrays is None:
            raw = self._raw
            if raw is None:
                table = self._load_table()
                raw = {name: table.column(name).to_pylist() for name in table.column_names}
            self._arrays = {name: to_array(values, self.kinds.get(name, "string")) for name, values in raw.items()
                            if name in self.kinds}
            if self._size is None:   # the raw values go: remember how many rows they held
                self._size = len(next(iter(raw.values()))) if raw else 0
            self._raw = None
        return self._arrays

    def _load_table(self) -> pa.Table:
        import pyarrow.parquet as pq

        assert self.path is not None
        return pq.read_table(self.path)

    def to_arrow(self) -> pa.Table:
        import pyarrow as pa

        if self._raw is not None:
            return pa.table({name: pa.array(values) for name, values in self._raw.items()})
        return self._load_table() if self._arrays is None else pa.table(
            {name: pa.array(from_array(values, nulls)) for name, (values, nulls) in self._arrays.items()})


def to_array(values: Sequence[Any], kind: str) -> tuple[np.ndarray, np.ndarray]:
    nulls = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
    if kind == "number":
        data = np.array([float(v) if v is not None else np.nan for v in values], dtype=np.float64)
    elif kind == "date":
        data = np.array([v if v is not None else np.datetime64("NaT") for v in values], dtype="datetime64[D]")
    elif kind == "timestamp":
        data = np.array([v if v is not None else np.datetime64("NaT") for v in values], dtype="datetime64[us]")
    elif kind == "boolean":
        data = np.array([bool(v) if v is not None else False for v in values], dtype=bool)
    else:
        data = np.array(["" if v is None else str(v) for v in values], dtype=object)
    return data, nulls


def from_array(values: np.ndarray, nulls: np.ndarray) -> list[Any]:
    items = values.tolist()
    return [None if null else item for item, null in zip(items, nulls)]


__all__ = ["RowSample", "SAMPLE_SIZE", "choose_rows", "to_array"]
