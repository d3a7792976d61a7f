"""Statistics model, store and histogram building: invariants and failure handling."""

from __future__ import annotations

import datetime as dt
import json

from hypothesis import given
from hypothesis import strategies as st

from stats.histogram import build_histogram, choose_mcv, duj1
from stats.model import Bucket, ColumnStats, TableStats, now_utc
from stats.store import StatsStore


def table_stats(fingerprint: str = "f1") -> TableStats:
    column = ColumnStats("d", "date", 0.1, 3.0, dt.date(2020, 1, 1), dt.date(2020, 3, 1), 4.0, 4,
                         mcv=((dt.date(2020, 1, 1), 0.5),),
                         histogram=(Bucket(dt.date(2020, 2, 1), dt.date(2020, 3, 1), 40.0, 2.0),))
    return TableStats("lake.t", 100.0, 1234.0, now_utc(), fingerprint, "spark", columns={"d": column},
                      column_groups={"a,b": 50.0})


def test_round_trip_keeps_typed_values(tmp_path):
    store = StatsStore(tmp_path)
    original = table_stats()
    store.save(original)
    loaded = store.load("lake.t", "f1")
    assert loaded.problem is None and loaded.stats == original
    assert loaded.stats.columns["d"].mcv[0][0] == dt.date(2020, 1, 1)


def test_corrupt_old_and_stale_files_are_named_and_ignored(tmp_path):
    store = StatsStore(tmp_path)
    path = store.save(table_stats())
    assert "stale statistics" in store.load("lake.t", "other").problem
    body = json.loads(path.read_text())
    body["format_version"] = 0
    path.write_text(json.dumps(body))
    loaded = store.load("lake.t")
    assert loaded.stats is None and str(path) in loaded.problem and "format version 0" in loaded.problem
    path.write_text('{"format_version": 1, "tab')
    loaded = store.load("lake.t")
    assert loaded.stats is None and "corrupt statistics file" in loaded.problem


def test_a_write_cut_short_leaves_the_old_file(tmp_path):
    store = StatsStore(tmp_path)
    store.save(table_stats("old"))
    # A killed writer leaves at most a temporary file beside the real one.
    (tmp_path / ".lake.t.json.123.tmp").write_text('{"half": ')
    assert store.load("lake.t").stats.fingerprint == "old"
    assert [p.name for p in tmp_path.glob("*.json")] == ["lake.t.json"]


def test_mcv_keeps_all_values_of_a_small_domain_and_only_frequent_ones_otherwise():
    assert choose_mcv([("a", 50), ("b", 30), ("c", 20)], 3, 100, 100) == (("a", 0.5), ("b", 0.3), ("c", 0.2))
    uniform = [(i, 10) for i in range(25)]
    assert choose_mcv(uniform, 1000, 10000, 10000) == ()
    skewed = [(0, 5000)] + [(i, 10) for i in range(1, 25)]
    assert choose_mcv(skewed, 1000, 10000, 10000) == ((0, 0.5),)


def test_duj1_is_exact_for_a_full_sample_and_scales_up_singletons():
    assert duj1(100, 40, 10, 100) == 40
    assert duj1(100, 100, 100, 10_000) > 1000


@given(st.lists(st.one_of(st.none(), st.integers(0, 50)), min_size=1, max_size=300), st.integers(1, 20))
def test_histogram_invariants(values, buckets):
    present = [v for v in values if v is not None]
    histogram = build_histogram(values, set(), float(len(present)), 1.0, buckets)
    assert abs(sum(b.rows for b in histogram) - len(present)) < 1e-6
    assert len(histogram) <= buckets
    for b in histogram:
        assert b.lower <= b.upper and 1 <= b.distinct <= b.rows + 1e-9
        # Bucket rows are exact when the sample is the table.
        assert b.rows == sum(1 for v in present if b.lower <= v <= b.upper)
    for left, right in zip(histogram, histogram[1:]):
        assert left.upper < right.lower


def test_row_sample_is_stored_beside_the_statistics_and_read_back(tmp_path):
    from stats.from_values import table_stats as exact_stats

    columns = {"n": [1, 2, None, 4] * 50, "s": ["a", "b", "c", None] * 50,
               "d": [dt.date(2020, 1, i % 28 + 1) for i in range(200)]}
    store = StatsStore(tmp_path)
    store.save(exact_stats("lake.t", columns, sample_size=120))
    first = sorted(p.name for p in tmp_path.glob("*.parquet"))
    assert len(first) == 1
    loaded = store.load("lake.t")
    assert loaded.problem is None and loaded.stats is not None and loaded.stats.sample is not None
    sample = loaded.stats.sample
    assert sample.size == 120 and sample.population == 200 and not sample.is_whole_table
    values, nulls = sample.column("n")
    assert int(nulls.sum()) == sum(1 for v in sample.to_arrow().column("n").to_pylist() if v is None)
    # Saving again with other data replaces the sample file; the old one is removed.
    store.save(exact_stats("lake.t", {"n": list(range(300))}, sample_size=50))
    assert len(list(tmp_path.glob("*.parquet"))) == 1
    assert store.load("lake.t").stats.sample.size == 50  # type: ignore[union-attr]


def test_a_missing_sample_file_costs_the_sample_not_the_statistics(tmp_path):
    from stats.from_values import table_stats as exact_stats

    store = StatsStore(tmp_path)
    store.save(exact_stats("lake.t", {"n": list(range(100))}, sample_size=10))
    for path in tmp_path.glob("*.parquet"):
        path.unlink()
    loaded = store.load("lake.t")
    assert loaded.stats is not None and loaded.stats.sample is None
    assert loaded.problem is not None and "row sample" in loaded.problem and "missing" in loaded.problem


def test_sampled_mcvs_of_a_key_are_noise_and_dropped():
    # TPC-H lineitem at SF 1: 6 million rows, 1.5 million orders of at most 7 lines each. In a
    # 100,000-row sample an order seen 2 to 4 times is chance: extrapolated, it would claim
    # 120 to 240 lines. Only a value seen far more often than average survives.
    rows, sample = 6_000_000, 100_000
    chance = [(order, float(k)) for order, k in ((1, 4), (2, 3), (3, 3), (4, 2), (5, 2))]
    assert choose_mcv(chance, 1_500_000, rows, rows, sample_rows=sample) == ()
    heavy = [(0, 60.0)] + chance
    assert choose_mcv(heavy, 1_500_000, rows, rows, sample_rows=sample) == ((0, 60 / sample),)


def test_sampled_mcvs_from_a_real_sample_keep_the_skew_and_drop_the_rest():
    import random
    from collections import Counter

    # 200,000 rows: key k (0 < k <= 49,000) on 4 rows each, key 0 on 4,000 rows (2 %).
    population = [0] * 4_000 + [k for k in range(1, 49_001) for _ in range(4)]
    drawn = random.Random(7).sample(population, 5_000)
    counts = Counter(drawn).most_common(25)
    mcv = choose_mcv([(v, float(c)) for v, c in counts], 49_001, len(population), len(population),
                     sample_rows=len(drawn))
    assert [v for v, _ in mcv] == [0]
    assert abs(mcv[0][1] - 0.02) < 0.005


def test_sampled_mcvs_keep_every_value_of_a_small_domain():
    # Three values, all seen: the distribution is the sample's, whatever the counts.
    assert choose_mcv([("a", 5.0), ("b", 3.0), ("c", 2.0)], 3, 1000, 1000, sample_rows=10) == \
        (("a", 0.5), ("b", 0.3), ("c", 0.2))


def test_statistics_of_an_older_collection_method_load_and_are_collected_again(tmp_path):
    from dataclasses import replace

    from cbo.sources.statistics import outdated_by
    from stats.model import COLLECTION_VERSION

    store = StatsStore(tmp_path)
    path = store.save(replace(table_stats(), sample_file="lake.t.sample-x.parquet"))
    body = json.loads(path.read_text())
    assert body["collection_version"] == COLLECTION_VERSION
    del body["collection_version"]   # as written before the field existed
    path.write_text(json.dumps(body))
    loaded = store.load("lake.t")
    assert loaded.stats is not None and loaded.stats.collection_version == 1
    assert "older cbo (method 1" in outdated_by(loaded.stats)
    assert outdated_by(replace(loaded.stats, collection_version=COLLECTION_VERSION)) is None
    assert "no row sample" in outdated_by(replace(loaded.stats, sample_file=None))


def test_bucket_distinct_counts_follow_the_sketch_beyond_its_error():
    from stats.histogram import with_distinct

    # Per-bucket Duj1 guesses from a sample (a key column: 1.22 million) against the sketch over
    # the table (1.5 million): scaled alike, each bucket kept within its rows.
    buckets = (Bucket(1, 100, 600_000.0, 122_000.0), Bucket(101, 200, 410.0, 400.0))
    scaled = with_distinct(buckets, 150_000.0)
    assert abs(scaled[0].distinct - 150_000 * 122_000 / 122_400) < 1e-6 and scaled[1].distinct == 410.0
    assert [(b.lower, b.upper, b.rows) for b in scaled] == [(b.lower, b.upper, b.rows) for b in buckets]
    # Within the sketch's own error, the buckets stand.
    assert with_distinct(buckets, 122_400 * 1.02) == buckets


def test_a_stored_samples_columns_convert_as_their_python_values_would():
    import decimal

    import numpy as np
    import pyarrow as pa

    from stats.sample import arrow_to_array, to_array

    rng = np.random.default_rng(7)
    n = 500
    nulls = rng.random(n) < 0.2
    def with_nulls(values: list) -> list:
        return [None if null else v for v, null in zip(values, nulls)]
    columns = {
        "number": [pa.array(with_nulls([int(v) for v in rng.integers(-2**62, 2**62, n)]), pa.int64()),
                   pa.array(with_nulls([int(v) for v in rng.integers(0, 100, n)]), pa.int32()),
                   pa.array(with_nulls(list(rng.normal(size=n))), pa.float64()),
                   pa.array(with_nulls([decimal.Decimal(int(v)) / 100 for v in rng.integers(0, 10**9, n)]),
                            pa.decimal128(12, 2))],
        "date": [pa.array(with_nulls([dt.date(2000, 1, 1) + dt.timedelta(days=int(v))
                                      for v in rng.integers(0, 9000, n)]), pa.date32())],
        "boolean": [pa.array(with_nulls([bool(v) for v in rng.integers(0, 2, n)]), pa.bool_())],
        "string": [pa.array(with_nulls([f"s{v}" for v in rng.integers(0, 50, n)]), pa.string()),
                   pa.array(with_nulls([int(v) for v in rng.integers(0, 50, n)]), pa.int64())],
    }
    for kind, arrays in columns.items():
        for array in arrays:
            column = pa.chunked_array([array[:200], array[200:]])   # as a Parquet file reads back
            expected, expected_nulls = to_array(column.to_pylist(), kind)
            values, value_nulls = arrow_to_array(column, kind)
            assert values.dtype == expected.dtype, (kind, array.type)
            assert np.array_equal(value_nulls, expected_nulls), (kind, array.type)
            present = ~expected_nulls
            assert values[present].tolist() == expected[present].tolist(), (kind, array.type)
