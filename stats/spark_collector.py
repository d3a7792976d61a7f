"""Collecting statistics with Spark: one aggregate scan plus one row sample.

The scan computes, for every column at once: non-NULL counts, distinct counts (HyperLogLog++,
``approx_count_distinct`` with 1% relative standard deviation), min and max, string widths,
and the most frequent values (``approx_top_k``, a frequent-items sketch that is exact for the
heavy hitters of skewed columns), plus distinct counts of the given column groups. A sample of
at most ``sample_rows`` rows then gives equi-depth histograms for every column type, strings
included, with the MCVs kept apart (see ``stats.histogram``).

With ``fraction`` < 1 the scan itself reads a Bernoulli sample: counts are scaled by 1/fraction
and distinct counts are estimated from the sample (Duj1) instead of read from the sketch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from stats.histogram import BUCKETS, MCV_SIZE, build_histogram, choose_mcv, duj1
from stats.model import ColumnStats, TableStats, now_utc

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

SAMPLE_ROWS = 100_000
TOP_K_TRACKED = 10_000
SEED = 20261122

FIXED_WIDTH = {"boolean": 1, "tinyint": 1, "smallint": 2, "int": 4, "bigint": 8, "float": 4, "double": 8, "date": 4,
               "timestamp": 8, "timestamp_ntz": 8}


def _fixed_width(spark_type: str) -> int:
    if spark_type.startswith("decimal"):
        precision = int(spark_type[len("decimal("):].split(",")[0])
        return 8 if precision <= 18 else 16
    return FIXED_WIDTH.get(spark_type, 8)


def _kind(spark_type: str) -> str | None:
    if spark_type.startswith(("decimal", "int", "bigint", "smallint", "tinyint", "double", "float")):
        return "number"
    if spark_type.startswith(("string", "varchar", "char")):
        return "string"
    if spark_type == "date":
        return "date"
    if spark_type.startswith("timestamp"):
        return "timestamp"
    if spark_type == "boolean":
        return "boolean"
    return None


def collect(frame: "DataFrame", table: str, fingerprint: str, *, size_bytes: float | None = None,
            fraction: float = 1.0, column_groups: Iterable[tuple[str, ...]] = (), buckets: int = BUCKETS,
            mcv_size: int = MCV_SIZE, sample_rows: int = SAMPLE_ROWS) -> TableStats:
    from pyspark.sql import functions as F

    if not 0 < fraction <= 1:
        raise ValueError(f"sample fraction must be in (0, 1], got {fraction}")
    kinds = {name: _kind(type_) for name, type_ in frame.dtypes}
    columns = [n for n, k in kinds.items() if k is not None]
    source = frame.sample(fraction=fraction, seed=SEED) if fraction < 1 else frame
    groups = [tuple(g) for g in column_groups if len(g) > 1 and all(c in kinds for c in g)]

    aggregates = [F.count(F.lit(1)).alias("rows")]
    for i, name in enumerate(columns):
        col = F.col(f"`{name}`")
        aggregates += [F.count(col).alias(f"n{i}"), F.approx_count_distinct(col, 0.01).alias(f"d{i}"),
                       F.min(col).alias(f"lo{i}"), F.max(col).alias(f"hi{i}"),
                       F.expr(f"approx_top_k(`{name}`, {mcv_size}, {TOP_K_TRACKED})").alias(f"top{i}")]
        if kinds[name] == "string":
            aggregates += [F.avg(F.length(col)).alias(f"w{i}"), F.max(F.length(col)).alias(f"mw{i}")]
    for j, group in enumerate(groups):
        parts = [F.coalesce(F.col(f"`{c}`").cast("string"), F.lit("\u0000")) for c in group]
        aggregates.append(F.approx_count_distinct(F.concat_ws("\u0001", *parts), 0.01).alias(f"g{j}"))
    summary = source.agg(*aggregates).collect()[0]
    scale = 1.0 / fraction
    rows = summary["rows"] * scale

    sample = _sample(frame if fraction >= 1 else source, rows, sample_rows, columns, fraction)
    sample_fraction = min(1.0, len(sample[columns[0]]) / rows) if columns and rows else 1.0

    candidates = {name: [item["item"] for item in (summary[f"top{i}"] or []) if item["item"] is not None]
                  for i, name in enumerate(columns)}
    exact_counts = _exact_counts(source, sample, candidates, scale, sample_fraction >= 1.0 and fraction >= 1.0)

    stats: dict[str, ColumnStats] = {}
    dtypes = dict(frame.dtypes)
    for i, name in enumerate(columns):
        kind = kinds[name]
        assert kind is not None
        non_null = summary[f"n{i}"] * scale
        values = sample[name]
        if fraction < 1:
            present = [v for v in values if v is not None]
            counts: dict[Any, int] = {}
            for v in present:
                counts[v] = counts.get(v, 0) + 1
            distinct = duj1(len(present), len(counts), sum(1 for c in counts.values() if c == 1), non_null)
        else:
            distinct = float(min(summary[f"d{i}"], non_null))
        mcv = choose_mcv(list(exact_counts[name].items()), distinct, non_null, rows, mcv_size)
        mcv_values = {v for v, _ in mcv}
        represented = max(non_null - sum(f for _, f in mcv) * rows, 0.0)
        histogram = build_histogram(values, mcv_values, represented, sample_fraction, buckets) \
            if represented > 0 else ()
        width = summary[f"w{i}"] if kind == "string" else _fixed_width(dtypes[name])
        stats[name] = ColumnStats(
            name=name, kind=kind, null_fraction=(1 - non_null / rows) if rows else 0.0, distinct=distinct,
            min=summary[f"lo{i}"], max=summary[f"hi{i}"], avg_width=float(width or 0),
            max_width=int(summary[f"mw{i}"] or 0) if kind == "string" else int(width or 0),
            mcv=mcv, histogram=histogram)
    group_stats = {",".join(g): float(min(summary[f"g{j}"], rows)) for j, g in enumerate(groups)}
    return TableStats(table=table, row_count=rows, size_bytes=size_bytes, collected_at=now_utc(),
                      fingerprint=fingerprint, collector="spark", sampled_fraction=fraction, columns=stats,
                      column_groups=group_stats)


def _exact_counts(source: "DataFrame", sample: dict[str, list[Any]], candidates: dict[str, list[Any]], scale: float,
                  sample_is_table: bool) -> dict[str, dict[Any, float]]:
    """Exact row counts of the MCV candidates: the sketch's counts are estimates.

    From the sample when it is the whole table; otherwise one more scan of conditional counts.
    """
    if sample_is_table:
        result = {}
        for name, values in candidates.items():
            wanted = set(values)
            counts: dict[Any, float] = {}
            for v in sample[name]:
                if v in wanted:
                    counts[v] = counts.get(v, 0) + 1
            result[name] = counts
        return result
    from pyspark.sql import functions as F

    expressions, keys = [], []
    for name, values in candidates.items():
        for j, value in enumerate(values):
            expressions.append(F.count(F.when(F.col(f"`{name}`") == F.lit(value), 1)).alias(f"c{len(keys)}"))
            keys.append((name, value))
    result = {name: {} for name in candidates}
    if expressions:
        row = source.agg(*expressions).collect()[0]
        for index, (name, value) in enumerate(keys):
            result[name][value] = row[f"c{index}"] * scale
    return result


def _sample(frame: "DataFrame", rows: float, sample_rows: int, columns: list[str],
            fraction: float) -> dict[str, list[Any]]:
    """Column values of a sample of at most about ``sample_rows`` rows, collected as Arrow."""
    take = 1.0 if rows <= sample_rows else sample_rows / rows
    selected = frame.select(*[f"`{c}`" for c in columns])
    if take < 1.0:
        selected = selected.sample(fraction=take, seed=SEED + 1)
    table = selected.toArrow()
    return {name: table.column(name).to_pylist() for name in columns}
