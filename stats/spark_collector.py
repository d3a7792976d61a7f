"""Collecting statistics with Spark: a row sample, then one aggregate scan.

1. A Bernoulli sample of at most ``sample_rows`` rows is collected as Arrow. It yields the
   candidates for most-common values (the most frequent values of the sample) and the
   equi-depth histograms of every column type, strings included, with MCVs kept apart (see
   ``stats.histogram``). When the table is no larger than the sample, the sample *is* the table
   and every statistic is computed exactly from it: no second pass.
2. Otherwise one aggregate scan computes, for all columns at once, non-NULL counts, distinct
   counts (DataSketches HLL, ``hll_sketch_agg`` with lgK=14: about 0.8% standard error; much
   faster here than ``approx_count_distinct`` at a comparable error), min and max, string
   widths, and distinct counts of column groups. MCV frequencies are then the sample's,
   noise-tested against the sample size (``stats.histogram.choose_mcv``), as PostgreSQL's
   are; ``exact_mcv=True`` recounts the candidates exactly in one more job (one branch per
   column reading only that column). Histogram buckets' distinct counts follow the sketch's.
3. A uniform subset of ``row_sample_size`` rows of that sample is kept with the statistics
   (``stats.sample``) for estimating conjunctions over correlated columns.

With ``fraction`` < 1 the scan reads a Bernoulli sample of that fraction instead of the table:
counts are scaled by 1/fraction and distinct counts are estimated with Duj1 from the sample.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from stats.histogram import BUCKETS, MCV_SIZE, build_histogram, choose_mcv, duj1, with_distinct
from stats.model import ColumnStats, TableStats, now_utc
from stats.sample import SAMPLE_SIZE, RowSample, choose_rows

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

SAMPLE_ROWS = 100_000
HLL_LG_K = 14
SEED = 20261122

FIXED_WIDTH = {"boolean": 1, "tinyint": 1, "smallint": 2, "int": 4, "bigint": 8, "float": 4, "double": 8, "date": 4,
               "timestamp": 8, "timestamp_ntz": 8}


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


def _fixed_width(spark_type: str) -> int:
    if spark_type.startswith("decimal"):
        precision = int(spark_type[len("decimal("):].split(",")[0])
        return 8 if precision <= 18 else 16
    return FIXED_WIDTH.get(spark_type, 8)


def collect(frame: DataFrame, table: str, fingerprint: str, *, size_bytes: float | None = None,
            fraction: float = 1.0, column_groups: Iterable[tuple[str, ...]] = (), buckets: int = BUCKETS,
            mcv_size: int = MCV_SIZE, sample_rows: int = SAMPLE_ROWS, exact_mcv: bool = False,
            row_sample_size: int = SAMPLE_SIZE) -> TableStats:
    if not 0 < fraction <= 1:
        raise ValueError(f"sample fraction must be in (0, 1], got {fraction}")
    dtypes = dict(frame.dtypes)
    kinds = {name: _kind(type_) for name, type_ in dtypes.items()}
    columns = [n for n, k in kinds.items() if k is not None]
    groups = [tuple(g) for g in column_groups if len(g) > 1 and all(c in columns for c in g)]
    source = frame.sample(fraction=fraction, seed=SEED) if fraction < 1 else frame

    sample, whole = _sample(source, columns, sample_rows)
    sample_size = len(sample[columns[0]]) if columns else 0
    if whole:
        summary = _summary_from_sample(sample, columns, groups, kinds)
    else:
        candidates = {name: _candidates(sample[name], mcv_size) for name in columns}
        summary = _summary_from_scan(source, columns, groups, kinds, dtypes)
        for name in columns:
            if exact_mcv:
                continue
            counts = Counter(v for v in sample[name] if v is not None)
            summary["columns"][name]["counts"] = {v: float(counts[v]) for v in candidates[name]}
        if exact_mcv:
            for name, exact in _exact_counts(source, candidates).items():
                summary["columns"][name]["counts"] = exact
    scale = 1.0 / fraction
    rows = summary["rows"] * scale
    sample_fraction = 1.0 if whole and fraction >= 1 else min(1.0, sample_size / rows) if rows else 1.0

    stats: dict[str, ColumnStats] = {}
    for name in columns:
        kind = kinds[name]
        assert kind is not None
        column = summary["columns"][name]
        non_null = column["non_null"] * scale
        if fraction < 1:
            present = [v for v in sample[name] if v is not None]
            counts = Counter(present)
            distinct = duj1(len(present), len(counts), sum(1 for c in counts.values() if c == 1), non_null)
        else:
            distinct = float(min(column["distinct"], non_null))
        # MCV counts are the sample's (noise-tested against its size, see stats.histogram),
        # the exact ones of the scanned rows (exact_mcv), or the whole table's.
        counted = rows if whole and fraction >= 1 else summary["rows"] if exact_mcv else sample_size
        mcv = choose_mcv(list(column["counts"].items()), distinct, non_null, rows, mcv_size, sample_rows=counted)
        represented = max(non_null - sum(f for _, f in mcv) * rows, 0.0)
        histogram = build_histogram(sample[name], {v for v, _ in mcv}, represented, sample_fraction, buckets) \
            if represented > 0 else ()
        if sample_fraction < 1:    # the sketch's distinct count over the table, not the sample's guesses
            histogram = with_distinct(histogram, max(distinct - len(mcv), 0.0))
        width = column["avg_width"] if kind == "string" else _fixed_width(dtypes[name])
        stats[name] = ColumnStats(
            name=name, kind=kind, null_fraction=(1 - non_null / rows) if rows else 0.0, distinct=distinct,
            min=column["min"], max=column["max"], avg_width=float(width or 0),
            max_width=int(column["max_width"] or 0) if kind == "string" else int(width or 0),
            mcv=mcv, histogram=histogram, distinct_exact=whole and fraction >= 1)
    group_stats = {",".join(g): float(min(summary["groups"][g] * (scale if fraction < 1 else 1), rows))
                   for g in groups}
    keep = choose_rows(sample_size, row_sample_size)
    row_sample = RowSample({name: [sample[name][i] for i in keep] for name in columns},
                           {name: kind for name, kind in kinds.items() if kind is not None}, rows)
    return TableStats(table=table, row_count=rows, size_bytes=size_bytes, collected_at=now_utc(),
                      fingerprint=fingerprint, collector="spark", sampled_fraction=fraction, columns=stats,
                      column_groups=group_stats, sample=row_sample if row_sample_size > 0 else None)


def _sample(frame: DataFrame, columns: list[str], sample_rows: int) -> tuple[dict[str, list[Any]], bool]:
    """Values of a sample of about ``sample_rows`` rows, and whether it is the whole input."""
    selected = frame.select(*[f"`{c}`" for c in columns])
    head = selected.limit(sample_rows + 1).toArrow()
    if head.num_rows <= sample_rows:
        return {name: head.column(name).to_pylist() for name in columns}, True
    total = selected.count()
    table = selected.sample(fraction=min(1.0, sample_rows / total), seed=SEED + 1).toArrow()
    return {name: table.column(name).to_pylist() for name in columns}, False


def _candidates(values: list[Any], size: int) -> list[Any]:
    """The sample's most frequent values: candidates whose exact counts the scan computes."""
    counts = Counter(v for v in values if v is not None)
    return [v for v, n in counts.most_common(size) if n > 1]


def _summary_from_sample(sample: dict[str, list[Any]], columns: list[str], groups: list[tuple[str, ...]],
                         kinds: dict[str, str | None]) -> dict[str, Any]:
    rows = len(sample[columns[0]]) if columns else 0
    result: dict[str, Any] = {"rows": rows, "columns": {}, "groups": {}}
    for name in columns:
        present = [v for v in sample[name] if v is not None]
        counts = Counter(present)
        widths = [len(v) for v in present] if kinds[name] == "string" else []
        result["columns"][name] = {
            "non_null": len(present), "distinct": len(counts), "min": min(present) if present else None,
            "max": max(present) if present else None,
            "avg_width": sum(widths) / len(widths) if widths else 0.0, "max_width": max(widths) if widths else 0,
            "counts": dict(counts.most_common(len(counts))),
        }
    for group in groups:
        result["groups"][group] = len(set(zip(*[sample[c] for c in group])))
    return result


def _summary_from_scan(source: DataFrame, columns: list[str], groups: list[tuple[str, ...]],
                       kinds: dict[str, str | None], dtypes: dict[str, str]) -> dict[str, Any]:
    from pyspark.sql import functions as F

    def sketchable(name: str) -> Column:
        col = F.col(f"`{name}`")
        return col if dtypes[name] in ("bigint", "int", "string") else col.cast("string")

    aggregates = [F.count(F.lit(1)).alias("rows")]
    for i, name in enumerate(columns):
        col = F.col(f"`{name}`")
        aggregates += [F.count(col).alias(f"n{i}"),
                       F.hll_sketch_estimate(F.hll_sketch_agg(sketchable(name), HLL_LG_K)).alias(f"d{i}"),
                       F.min(col).alias(f"lo{i}"), F.max(col).alias(f"hi{i}")]
        if kinds[name] == "string":
            aggregates += [F.avg(F.length(col)).alias(f"w{i}"), F.max(F.length(col)).alias(f"mw{i}")]
    for j, group in enumerate(groups):
        parts = [F.coalesce(F.col(f"`{c}`").cast("string"), F.lit("\u0000")) for c in group]
        aggregates.append(F.hll_sketch_estimate(F.hll_sketch_agg(F.concat_ws("\u0001", *parts), HLL_LG_K))
                          .alias(f"g{j}"))
    row = source.agg(*aggregates).collect()[0]
    result: dict[str, Any] = {"rows": row["rows"], "columns": {}, "groups": {}}
    for i, name in enumerate(columns):
        result["columns"][name] = {
            "non_null": row[f"n{i}"], "distinct": row[f"d{i}"], "min": row[f"lo{i}"], "max": row[f"hi{i}"],
            "avg_width": row[f"w{i}"] if kinds[name] == "string" else 0.0,
            "max_width": row[f"mw{i}"] if kinds[name] == "string" else 0,
            "counts": {},
        }
    for j, group in enumerate(groups):
        result["groups"][group] = row[f"g{j}"]
    return result


def _exact_counts(source: DataFrame, candidates: dict[str, list[Any]]) -> dict[str, dict[Any, int]]:
    """Exact row counts of each column's MCV candidates, in one job.

    One branch per column reads only that column, keeps the candidate values (an IN-set
    filter) and counts them; the branches are unioned. Values travel as strings and are
    mapped back to the candidates' own Python values.
    """
    from functools import reduce

    from pyspark.sql import functions as F

    branches = []
    for index, (name, values) in enumerate(candidates.items()):
        if not values:
            continue
        col = F.col(f"`{name}`")
        branches.append(source.select(F.lit(index).alias("c"), col.cast("string").alias("v"))
                        .where(col.isin(values)))
    result: dict[str, dict[Any, int]] = {name: {} for name in candidates}
    if not branches:
        return result
    names = list(candidates)
    counted = reduce(lambda a, b: a.unionAll(b), branches).groupBy("c", "v").count().collect()
    by_text = {}
    for name, values in candidates.items():
        by_text[name] = {_as_spark_string(v): v for v in values}
    for row in counted:
        name = names[row["c"]]
        value = by_text[name].get(row["v"])
        if value is not None:
            result[name][value] = row["count"]
    return result


def _as_spark_string(value: Any) -> str:
    """How Spark casts a value to string (for matching counted values back to candidates)."""
    import datetime as dt
    import decimal

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    return str(value)
