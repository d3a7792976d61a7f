"""Statistics from both collectors against exact values computed by DuckDB.

Tolerances (each stated once, here): distinct counts within 5% relative error; NULL fractions
within 0.005; every reported MCV frequency within 0.5% (relative) of the true one, and on the
skewed STATS columns the five most common values exactly DuckDB's five; every histogram
bucket's true share of the table's rows within 0.01 of its nominal share. The two collectors
must agree with each other within the same tolerances (distinct counts within 10%).
"""

from __future__ import annotations

import decimal

import duckdb
import pytest

from cbo.sources.catalog import load_catalog
from cbo.connectors.postgres.server import LocalPostgres
from cbo.paths import cache_dir
from cbo.sources.statistics import analyze, load_all
from cbo.workloads import stats_data
from stats.model import in_bucket

SKEWED = {"badges": ["UserId"], "posts": ["OwnerUserId", "PostTypeId", "Score"], "postLinks": ["LinkTypeId"],
          "users": ["UpVotes"], "tags": ["Count"]}
TPCH_TABLES = ["lineitem", "orders", "part", "customer"]


@pytest.fixture(scope="module")
def stats_catalogs(tpch_catalogs):
    if not stats_data.source_directory().exists():
        pytest.skip(f"STATS data not found at {stats_data.source_directory()}")
    return stats_data.prepare(cache_dir() / "stats-data", LocalPostgres().start())


def collected(catalog_path, tables=None):
    catalog = load_catalog(catalog_path)
    analyze(catalog, tables, analyze_source=True, force=True)
    found, problems = load_all(catalog)
    assert not problems
    return {name.split(".", 1)[1]: stats for name, stats in found.items()}


@pytest.fixture(scope="module")
def stats_results(spark, stats_catalogs):
    return {"spark": collected(stats_catalogs["spark"]), "postgres": collected(stats_catalogs["postgres"])}


@pytest.fixture(scope="module")
def tpch_results(spark, tpch_catalogs):
    return {"spark": collected(tpch_catalogs["all-spark"], TPCH_TABLES),
            "postgres": collected(tpch_catalogs["all-postgres"], TPCH_TABLES)}


def truth(parquet: str, column: str) -> dict:
    con = duckdb.connect()
    q = f"read_parquet('{parquet}')"
    rows, non_null, distinct = con.execute(f'select count(*), count("{column}"), count(distinct "{column}") from {q}').fetchone()
    counts = {(float(v) if isinstance(v, decimal.Decimal) else v): n for v, n in con.execute(
        f'select "{column}", count(*) from {q} where "{column}" is not null group by 1').fetchall()}
    return {"rows": rows, "null_fraction": 1 - non_null / rows if rows else 0.0, "distinct": distinct, "counts": counts}


def check_column(stats, column_name: str, exact: dict, skewed: bool) -> None:
    c = stats.columns[column_name]
    where = f"{stats.table}.{column_name} ({stats.collector})"
    assert abs(c.null_fraction - exact["null_fraction"]) <= 0.005, where
    if exact["distinct"]:
        assert abs(c.distinct - exact["distinct"]) <= 0.05 * exact["distinct"], \
            f"{where}: distinct {c.distinct:.0f}, true {exact['distinct']}"
    rows = exact["rows"]
    for value, frequency in c.mcv:
        true_frequency = exact["counts"].get(value, 0) / rows
        assert abs(frequency - true_frequency) <= max(0.005 * true_frequency, 1 / rows), \
            f"{where}: MCV {value!r} at {frequency:.5f}, true {true_frequency:.5f}"
    if skewed:
        ranked = sorted(exact["counts"].items(), key=lambda kv: -kv[1])
        if len(ranked) > 5 and ranked[4][1] != ranked[5][1]:
            assert {v for v, _ in c.mcv[:5]} == {v for v, _ in ranked[:5]}, f"{where}: top five MCVs differ"
    mcv_values = {v for v, _ in c.mcv}
    for index, bucket in enumerate(c.histogram):
        inside = sum(n for v, n in exact["counts"].items() if v not in mcv_values and in_bucket(v, c.histogram, index))
        assert abs(inside / rows - bucket.rows / rows) <= 0.01, \
            f"{where}: bucket {index} [{bucket.lower}, {bucket.upper}] holds {inside} rows, says {bucket.rows:.0f}"


def _parquet(catalog_path, table: str) -> str:
    t = load_catalog(catalog_path).table(table)
    return str(t.path or t.parquet_copy)


@pytest.mark.parametrize("collector", ["spark", "postgres"])
@pytest.mark.parametrize("table", stats_data.TABLES)
def test_stats_data_accuracy(table, collector, stats_results, stats_catalogs):
    stats = stats_results[collector][table]
    parquet = _parquet(stats_catalogs["spark"], table)
    for column in stats.columns:
        check_column(stats, column, truth(parquet, column), column in SKEWED.get(table, []))


@pytest.mark.parametrize("collector", ["spark", "postgres"])
@pytest.mark.parametrize("table", TPCH_TABLES)
def test_tpch_accuracy(table, collector, tpch_results, tpch_catalogs):
    stats = tpch_results[collector][table]
    parquet = _parquet(tpch_catalogs["all-spark"], table)
    for column in stats.columns:
        check_column(stats, column, truth(parquet, column), skewed=False)


@pytest.mark.parametrize("table", stats_data.TABLES)
def test_collectors_agree(table, stats_results):
    spark, postgres = stats_results["spark"][table], stats_results["postgres"][table]
    assert abs(spark.row_count - postgres.row_count) <= 0.01 * spark.row_count
    for name, column in spark.columns.items():
        other = postgres.columns[name]
        assert abs(column.null_fraction - other.null_fraction) <= 0.01, name
        assert abs(column.distinct - other.distinct) <= 0.10 * max(column.distinct, 1), \
            f"{table}.{name}: spark {column.distinct:.0f} vs postgres {other.distinct:.0f}"


def test_large_table_path_with_a_sample_smaller_than_the_table(spark, tpch_catalogs):
    from cbo.engines.spark import read_table
    from stats.spark_collector import collect

    catalog = load_catalog(tpch_catalogs["all-spark"])
    table = catalog.table("lineitem")
    frame = read_table(spark, catalog, table)
    stats = collect(frame, "lake.lineitem", "test", sample_rows=10_000, exact_mcv=True,
                    column_groups=[("l_partkey", "l_suppkey")])
    parquet = str(table.path)
    assert stats.row_count == 60175
    # Distinct counts here are sketched (HLL): none may prove a column unique.
    assert not any(c.distinct_exact for c in stats.columns.values()) and stats.unique_columns() == []
    for column in ("l_orderkey", "l_partkey", "l_quantity", "l_shipdate", "l_comment", "l_shipmode"):
        exact = truth(parquet, column)
        c = stats.columns[column]
        assert abs(c.distinct - exact["distinct"]) <= 0.05 * exact["distinct"], column
        for value, frequency in c.mcv:  # recounted exactly
            assert abs(frequency * 60175 - exact["counts"][value]) < 0.5, (column, value)
        # Histograms come from a 1-in-6 sample here: shares within 0.02.
        mcv_values = {v for v, _ in c.mcv}
        for index, bucket in enumerate(c.histogram):
            inside = sum(n for v, n in exact["counts"].items() if v not in mcv_values and in_bucket(v, c.histogram, index))
            assert abs(inside - bucket.rows) / 60175 <= 0.02, (column, index)
    pairs = duckdb.connect().execute(
        f"select count(*) from (select distinct l_partkey, l_suppkey from read_parquet('{parquet}'))").fetchone()[0]
    assert abs(stats.column_groups["l_partkey,l_suppkey"] - pairs) <= 0.05 * pairs


def test_sampled_mcvs_of_a_key_are_dropped_and_buckets_follow_the_sketch(spark, tpch_catalogs):
    # Sample counts, not recounted: an order (at most 7 lines) seen a few times among 10,000
    # of 60,175 rows is chance, not a most common value; the histogram then holds every order,
    # and its buckets' distinct counts add up to the sketch's (HLL) count of orders.
    from cbo.engines.spark import read_table
    from stats.spark_collector import collect

    catalog = load_catalog(tpch_catalogs["all-spark"])
    frame = read_table(spark, catalog, catalog.table("lineitem"))
    stats = collect(frame, "lake.lineitem", "test", sample_rows=10_000)
    orders = stats.columns["l_orderkey"]
    assert orders.mcv == ()
    assert abs(sum(b.distinct for b in orders.histogram) - orders.distinct) <= 0.01 * orders.distinct
    exact = truth(str(catalog.table("lineitem").path), "l_orderkey")
    assert abs(orders.distinct - exact["distinct"]) <= 0.05 * exact["distinct"]
    # A small domain keeps every value, with the sample's frequencies.
    assert len(stats.columns["l_linenumber"].mcv) == 7
