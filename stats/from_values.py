"""Exact statistics of columns given as Python lists: for tests, notebooks and small data.

The same model the collectors produce (MCVs apart from an equi-depth histogram, distinct
counts, widths, a row sample), computed exactly from the values, no engine needed.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from stats.histogram import BUCKETS, MCV_SIZE, build_histogram, choose_mcv
from stats.model import ColumnStats, TableStats, now_utc, to_json_value
from stats.sample import SAMPLE_SIZE, RowSample, choose_rows


def kind_of(values: Sequence[Any]) -> str:
    present = next((v for v in values if v is not None), None)
    if isinstance(present, bool):
        return "boolean"
    if isinstance(present, dt.datetime):
        return "timestamp"
    if isinstance(present, dt.date):
        return "date"
    if isinstance(present, str):
        return "string"
    return "number"


def table_stats(table: str, columns: Mapping[str, Sequence[Any]], *, sample_size: int = SAMPLE_SIZE,
                buckets: int = BUCKETS, mcv_size: int = MCV_SIZE,
                column_groups: Sequence[tuple[str, ...]] = ()) -> TableStats:
    names = list(columns)
    rows = len(columns[names[0]]) if names else 0
    result: dict[str, ColumnStats] = {}
    kinds = {name: kind_of(values) for name, values in columns.items()}
    # Decimals as the collectors store them (``to_json_value``: floats, integral ones ints), so
    # that the estimator meets one kind of number whichever made the statistics.
    columns = {name: [to_json_value(v, "number") if isinstance(v, decimal.Decimal) else v for v in values]
               if kinds[name] == "number" else values for name, values in columns.items()}
    for name, values in columns.items():
        present = [v for v in values if v is not None]
        counts = Counter(present)
        mcv = choose_mcv(list(counts.most_common(mcv_size * 4)), len(counts), len(present), rows, mcv_size)
        represented = len(present) - sum(f for _, f in mcv) * rows
        histogram = (build_histogram(present, {v for v, _ in mcv}, represented, 1.0, buckets)
                     if represented > 0.5 else ())
        widths = [len(v) for v in present] if kinds[name] == "string" else []
        result[name] = ColumnStats(name=name, kind=kinds[name], null_fraction=1 - len(present) / rows if rows else 0.0,
                                   distinct=float(len(counts)), min=min(present) if present else None,
                                   max=max(present) if present else None,
                                   avg_width=sum(widths) / len(widths) if widths else 8.0,
                                   max_width=max(widths) if widths else 8, mcv=mcv, histogram=histogram,
                                   distinct_exact=True)
    groups = {",".join(g): float(len(set(zip(*[columns[c] for c in g])))) for g in column_groups}
    keep = choose_rows(rows, sample_size)
    sample = RowSample({n: [columns[n][i] for i in keep] for n in names}, kinds, rows) if sample_size > 0 else None
    return TableStats(table=table, row_count=float(rows), size_bytes=None, collected_at=now_utc(),
                      fingerprint="values", collector="values", columns=result, column_groups=groups, sample=sample)
