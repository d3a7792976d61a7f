"""MCV lists and equi-depth histograms built from a sample of a column's values.

MCVs: when the column has no more distinct values than the list holds, all of them are kept
(the distribution is then exact). Otherwise a value is kept when it is clearly more common
than average (at least 1.25 times the average frequency, PostgreSQL's rule), most common first.

Histogram: over the non-NULL values that are not MCVs, cut at distinct-value boundaries
closest to equal row counts, so a value never straddles two buckets; a bucket holds the
values ``lower <= v <= upper`` (its smallest and largest value) and buckets do not overlap. Bucket rows are scaled from the
sample to the table; bucket distinct counts are exact when the sample is the whole table and
estimated with Haas and Stokes' Duj1 estimator otherwise.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Sequence

from stats.model import Bucket

MCV_SIZE = 25
BUCKETS = 100
MCV_RATIO = 1.25


def choose_mcv(candidates: Sequence[tuple[Any, float]], distinct: float, non_null_rows: float,
               total_rows: float, size: int = MCV_SIZE) -> tuple[tuple[Any, float], ...]:
    """From (value, count) candidates, most common first, the MCVs as (value, share of all rows)."""
    if total_rows <= 0:
        return ()
    ordered = sorted(((v, c) for v, c in candidates if v is not None), key=lambda vc: (-vc[1], str(vc[0])))
    if distinct <= size and len(ordered) >= round(distinct):
        chosen = ordered[:size]
    else:
        average = non_null_rows / max(distinct, 1.0)
        chosen = [(v, c) for v, c in ordered[:size] if c >= MCV_RATIO * average and c > 1]
    return tuple((v, c / total_rows) for v, c in chosen)


def duj1(sample_rows: int, sample_distinct: int, singletons: int, population_rows: float) -> float:
    """Haas & Stokes' Duj1 distinct-count estimator: n d / (n - f1 + f1 n / N)."""
    n, d, f1, big_n = sample_rows, sample_distinct, singletons, max(population_rows, 1.0)
    if n == 0:
        return 0.0
    if n >= big_n:
        return float(d)
    denominator = n - f1 + f1 * n / big_n
    return min(max(n * d / denominator if denominator > 0 else d, d), big_n)


def build_histogram(values: Iterable[Any], exclude: set[Any], rows_represented: float,
                    sample_fraction: float, buckets: int = BUCKETS) -> tuple[Bucket, ...]:
    """Buckets over ``values`` (non-NULL, from the sample) minus ``exclude`` (the MCVs).

    ``rows_represented``: how many table rows these non-MCV values stand for.
    """
    counts = Counter(v for v in values if v is not None and v not in exclude)
    if not counts:
        return ()
    distinct_values = sorted(counts)
    sample_total = sum(counts.values())
    target = max(1, min(buckets, len(distinct_values)))
    per_bucket = sample_total / target
    result = []
    start = 0
    running = 0
    boundary = per_bucket
    for index, value in enumerate(distinct_values):
        running += counts[value]
        last = index == len(distinct_values) - 1
        if running >= boundary or last:
            chunk = distinct_values[start:index + 1]
            chunk_rows = sum(counts[v] for v in chunk)
            singles = sum(1 for v in chunk if counts[v] == 1)
            scale = rows_represented / sample_total
            distinct = float(len(chunk)) if sample_fraction >= 1.0 else duj1(chunk_rows, len(chunk), singles,
                                                                             chunk_rows * scale)
            result.append(Bucket(chunk[0], chunk[-1], chunk_rows * scale, distinct))
            start = index + 1
            while boundary <= running:
                boundary += per_bucket
    return tuple(result)
