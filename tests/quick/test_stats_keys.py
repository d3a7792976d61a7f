"""Uniqueness from exact statistics: a column whose distinct count, counted over the whole table,
equals its non-NULL row count is a unique key of the table's scans, and table pushdown uses it;
sketched, sampled or stale counts prove nothing."""

from __future__ import annotations

import dataclasses

import duckdb
import pytest

from cbo.answers import compare
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.estimate import Estimator
from cbo.ir.operators import Scan, walk
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog
from cbo.sqlgen import to_sql
from stats.from_values import table_stats
from stats.model import TableStats

QUERY = """select s_acctbal, total from supplier join
  (select s_name as k, sum(ps_availqty) as total from partsupp, supplier
   where ps_suppkey = s_suppkey group by s_name) s on s.k = s_name
where s_acctbal > 9900"""


@pytest.fixture(scope="module")
def catalog(tpch_parquet_catalog):
    return load_catalog(tpch_parquet_catalog)


@pytest.fixture(scope="module")
def supplier(catalog) -> TableStats:
    """lake.supplier's statistics counted exactly from its rows (SF 0.01: 100 rows)."""
    path = catalog.table("supplier").path
    frame = duckdb.connect().execute(f"select * from read_parquet('{path}')").fetchnumpy()
    return table_stats("lake.supplier", {name: list(values) for name, values in frame.items()}, sample_size=0)


def _keys(planner: Planner, sql: str) -> dict[str, list[tuple[tuple[str, ...], str]]]:
    bound, _, _, _ = planner._logical(sql)
    return {s.table: [(tuple(c.name for c in k.columns), k.source) for k in s.assumed_keys]
            for s in walk(bound) if isinstance(s, Scan)}


def test_exact_counts_prove_unique_columns(supplier):
    unique = supplier.unique_columns()
    # s_suppkey is the declared key; s_name is unique by construction, and at 100 rows even
    # s_acctbal happens to be (a key of this data, as long as it is this data); s_nationkey repeats.
    assert {"s_suppkey", "s_name"} <= set(unique) and "s_nationkey" not in unique


def test_sketched_or_sampled_counts_prove_nothing(supplier):
    sketched = dataclasses.replace(supplier, columns={n: dataclasses.replace(c, distinct_exact=False)
                                                      for n, c in supplier.columns.items()})
    assert sketched.unique_columns() == []
    assert dataclasses.replace(supplier, sampled_fraction=0.5).unique_columns() == []


def test_exact_flag_survives_the_store(tmp_path, supplier):
    from stats.store import StatsStore

    store = StatsStore(tmp_path)
    store.save(supplier)
    loaded = store.load("lake.supplier", supplier.fingerprint).stats
    assert loaded is not None and loaded.unique_columns() == supplier.unique_columns()


def test_statistics_give_the_scan_a_key_and_table_pushdown_fires(catalog, supplier):
    planner = Planner(catalog, estimator=Estimator({"lake.supplier": supplier}))
    keys = _keys(planner, QUERY)
    assert (("s_name",), "statistics") in keys["lake.supplier"]
    assert not any(names == ("s_suppkey",) for names, _ in keys["lake.supplier"])   # declared already
    planned = planner.plan(QUERY)
    assert planned.optimized is not None and "PushTableIntoAggregate" in planned.optimized.counters.fired
    engine = DuckDBEngine(catalog)
    _, expected, _ = engine.run(QUERY)
    _, actual, _ = engine.run(to_sql(planned.plan, planned.names, "duckdb"))
    assert compare(expected, actual, ordered=False).matches


def test_statistics_of_other_data_prove_nothing(catalog, supplier):
    """Statistics whose fingerprint is not the table's files' describe other data: no key."""
    stale = dataclasses.replace(supplier, fingerprint="files:0000")
    planner = Planner(catalog, estimator=Estimator({"lake.supplier": stale}))
    assert _keys(planner, QUERY)["lake.supplier"] == []
    assert "PushTableIntoAggregate" not in planner.plan(QUERY).optimized.counters.fired


def test_stats_show_says_which_counts_were_counted(supplier):
    from cbo.app.stats_view import _column_text, _table_text

    assert "unique by exact distinct counts: s_suppkey, s_name" in _table_text(supplier)
    assert "100 distinct (counted)" in _column_text(supplier, supplier.columns["s_name"])
    sketched = dataclasses.replace(supplier.columns["s_name"], distinct_exact=False)
    assert "(counted)" not in _column_text(supplier, sketched)
