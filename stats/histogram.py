"""MCV lists and equi-depth histograms built from a sample of a column's values.

MCVs: when the column has no more distinct values than the list holds, all of them are kept
(the distribution is then exact). Otherwise a value is kept when it is clearly more common
than average (at least 1.25 times the average frequency), most common first. When the counts
come from a sample of the table, a count is also noise-tested as PostgreSQL (11 and later,
``analyze_mcv_list``) does: a value seen k times in an n-row sample of N rows is extrapolated to
k N / n rows, and with k small that is chance. A value is kept only if seen at least twice and
k exceeds what a value of average frequency would show by two standard deviations of the
(hypergeometric) sample count, plus one half; and, since the candidates are the largest of
many counts, only if fewer than half a value among the others would reach k by chance
(a Poisson tail times their number). The values dropped are described by the histogram and
the distinct count instead. Without the test, a key such as TPC-H's
``l_orderkey`` (at most 7 rows a value) got MCVs of a few hundred rows each out of a 100,000-row
sample of 6 million rows.

Histogram: over the non-NULL values that are not MCVs, cut at distinct-value boundaries
closest to equal row counts, so a value never straddles two buckets; a bucket holds the
values ``lower <= v <= upper`` (its smallest and largest value) and buckets do not overlap.
Bucket rows are scaled from the sample to the table; bucket distinct counts are exact when the
sample is the whole table and estimated with Haas and Stokes' Duj1 estimator otherwise.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from stats.model import Bucket

MCV_SIZE = 25
BUCKETS = 100
MCV_RATIO = 1.25
SKETCH_ERROR = 0.03   # about four standard errors of the collectors' HLL sketch (lgK 14)


def choose_mcv(candidates: Sequence[tuple[Any, float]], distinct: float, non_null_rows: float,
               total_rows: float, size: int = MCV_SIZE,
               sample_rows: float | None = None) -> tuple[tuple[Any, float], ...]:
    """From (value, count) candidates, most common first, the MCVs as (value, share of all rows).

    Counts are over ``sample_rows`` rows drawn uniformly from the table's ``total_rows`` rows
    (``non_null_rows`` of them not NULL); ``sample_rows`` None means the whole table was counted.
    ``distinct`` is the table's distinct non-NULL count.
    """
    if total_rows <= 0:
        return ()
    counted = total_rows if sample_rows is None else min(float(sample_rows), total_rows)
    if counted <= 0:
        return ()
    ordered = sorted(((v, c) for v, c in candidates if v is not None), key=lambda vc: (-vc[1], str(vc[0])))
    if distinct <= size and len(ordered) >= round(distinct):
        chosen = ordered[:size]
    else:
        average = non_null_rows / max(distinct, 1.0) * counted / total_rows
        chosen = [(v, c) for v, c in ordered[:size] if c >= MCV_RATIO * average and c > 1]
        if counted < total_rows:
            chosen = chosen[:significant(chosen, distinct, non_null_rows / total_rows, counted, total_rows)]
    return tuple((v, c / counted) for v, c in chosen)


def significant(ordered: Sequence[tuple[Any, float]], distinct: float, non_null_share: float,
                sample_rows: float, total_rows: float) -> int:
    """How many of ``ordered`` (sample counts, most common first) are more common than chance.

    PostgreSQL's ``analyze_mcv_list``: drop the least common candidate while its sample count
    is not above the count a non-MCV value would average (``selectivity * n``) by two standard
    deviations of a hypergeometric count, plus 0.5; or while that many of the other values
    would reach its count by chance (the largest of 200,000 counts averaging 0.5 is about 6).
    """
    n, big_n = sample_rows, total_rows
    keep = len(ordered)
    above = sum(c for _, c in ordered[:keep - 1])
    while keep > 0:
        count = ordered[keep - 1][1]
        selectivity = min(max(non_null_share - above / n, 0.0), 1.0)
        others = distinct - (keep - 1)
        if others > 1:
            selectivity /= others
        k = big_n * count / n
        variance = n * k * (big_n - k) * (big_n - n) / (big_n * big_n * max(big_n - 1, 1.0))
        average = selectivity * n
        if count > average + 2 * math.sqrt(max(variance, 0.0)) + 0.5 \
                and poisson_tail(count, average) * max(others, 1.0) < 0.5:
            break
        keep -= 1
        if keep > 0:
            above -= ordered[keep - 1][1]
    return keep


def poisson_tail(k: float, mean: float) -> float:
    """P(X >= k) for X Poisson with ``mean``, summed from its k-th term (exact for small tails)."""
    k = math.ceil(k)
    if k <= 0:
        return 1.0
    if mean <= 0:
        return 0.0
    term = math.exp(-mean + k * math.log(mean) - math.lgamma(k + 1))
    total, i = 0.0, k
    while i < k + 10 * mean + 100:
        total += term
        i += 1
        term *= mean / i
        if term <= total * 1e-12:
            break
    return min(total, 1.0)


def duj1(sample_rows: int, sample_distinct: int, singletons: int, population_rows: float) -> float:
    """Haas & Stokes' Duj1 distinct-count estimator: n d / (n - f1 + f1 n / N)."""
    n, d, f1, big_n = sample_rows, sample_distinct, singletons, max(population_rows, 1.0)
    if n == 0:
        return 0.0
    if n >= big_n:
        return float(d)
    denominator = n - f1 + f1 * n / big_n
    return min(max(n * d / denominator if denominator > 0 else d, d), big_n)


def with_distinct(buckets: Sequence[Bucket], distinct: float) -> tuple[Bucket, ...]:
    """Buckets whose distinct counts sum to ``distinct`` (the column's distinct values outside
    the MCVs, counted over the whole table by a sketch), each scaled alike and kept between 1
    and its rows. Per-bucket Duj1 estimates from a sample undercount a key-like column (TPC-H's
    ``l_orderkey``: 1.22 million against 1.5 million), and a grouping on it then finds groups
    too few and too large. Left as they are within ``SKETCH_ERROR`` of the sketch, which is
    no more exact than that."""
    total = sum(b.distinct for b in buckets)
    if total <= 0 or distinct <= 0 or abs(total - distinct) <= SKETCH_ERROR * distinct:
        return tuple(buckets)
    scale = distinct / total
    return tuple(Bucket(b.lower, b.upper, b.rows, min(max(b.distinct * scale, 1.0), max(b.rows, 1.0)))
                 for b in buckets)


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
