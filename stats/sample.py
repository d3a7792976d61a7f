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
        self._table: pa.Table | None = None   # a stored sample, read once, converted per column
        self._size = size

    @property
    def size(self) -> int:
        if self._size is None:
            self._size = len(next(iter(self._raw.values()))) if self._raw else self._stored().num_rows
        return self._size

    @property
    def is_whole_table(self) -> bool:
        return self.size >= self.population

    def column(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(values, is_null) of a column, or None when the sample lacks it. A stored sample's
        columns are converted one at a time, as an estimate first reads each: a query touches
        a few of a fact table's columns, and converting all of them made a session's first
        planning of each table the slowest part of it."""
        if self._arrays is None:
            self._arrays = {}
        found = self._arrays.get(name)
        if found is not None or name not in self.kinds:
            return found
        if self._raw is not None:
            if name not in self._raw:
                return None
            found = to_array(self._raw[name], self.kinds[name])
        else:
            table = self._stored()
            if name not in table.column_names:
                return None
            found = arrow_to_array(table.column(name), self.kinds[name])
        self._arrays[name] = found
        return found

    def _stored(self) -> pa.Table:
        if self._table is None:
            self._table = self._load_table()
            if self._size is None:
                self._size = self._table.num_rows
        return self._table

    def _load_table(self) -> pa.Table:
        import pyarrow.parquet as pq

        assert self.path is not None
        return pq.read_table(self.path)

    def to_arrow(self) -> pa.Table:
        import pyarrow as pa

        if self._raw is not None:
            return pa.table({name: pa.array(values) for name, values in self._raw.items()})
        return self._stored()


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


def arrow_to_array(column: pa.ChunkedArray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """``to_array`` of an Arrow column's values, converted by Arrow where the result is the same
    value for value: integers and floats as numbers (a float64 rounds an integer as Python's
    ``float`` does), dates, booleans and strings. Decimals (whose conversion by Arrow may differ
    from Python's correctly rounded one in the last bit) and the rest go through Python."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind_of = column.type
    nulls = column.is_null().to_numpy(zero_copy_only=False).astype(bool)
    if kind == "number" and (pa.types.is_integer(kind_of) or pa.types.is_floating(kind_of)):
        data = pc.cast(column, pa.float64(), safe=False).to_numpy(zero_copy_only=False).astype(np.float64)
        data[nulls] = np.nan
    elif kind == "date" and pa.types.is_date(kind_of):
        data = column.to_numpy(zero_copy_only=False).astype("datetime64[D]")
    elif kind == "boolean" and pa.types.is_boolean(kind_of):
        data = pc.fill_null(column, False).to_numpy(zero_copy_only=False).astype(bool)
    elif kind == "string" and (pa.types.is_string(kind_of) or pa.types.is_large_string(kind_of)):
        data = pc.fill_null(column, "").to_numpy(zero_copy_only=False).astype(object)
    else:
        return to_array(column.to_pylist(), kind)
    return data, nulls


__all__ = ["RowSample", "SAMPLE_SIZE", "arrow_to_array", "choose_rows", "to_array"]
