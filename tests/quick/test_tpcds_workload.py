"""The TPC-DS workload's pieces: the 99 query files, the keys, the catalogs of each placement."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from cbo.errors import CboError
from cbo.sources.catalog import load_catalog
from cbo.workloads import tpcds, tpch
from cbo.workloads.tpcds_queries import DIALECT, all_queries, select
from cbo.workloads.tpch import PostgresTarget


def test_the_99_queries_are_selected_by_name():
    assert [q.name for q in all_queries()] == [f"q{n:02d}" for n in range(1, 100)]
    assert [q.name for q in select(["q3", "72", "q099"])] == ["q03", "q72", "q99"]
    assert DIALECT == "duckdb"
    with pytest.raises(ValueError, match="unknown TPC-DS query 'q100'"):
        select(["q100"])


def test_keys_name_columns_of_their_tables(tpcds_parquet_catalog):
    directory = tpcds_parquet_catalog.parent.parent
    columns = {t: set(pq.read_schema(directory / f"{t}.parquet").names) for t in tpcds.TABLES}
    assert set(tpcds.KEYS) == set(tpcds.TABLES)
    for table, keys in tpcds.KEYS.items():
        assert keys.primary_key and set(keys.primary_key) <= columns[table], table
        for fk in keys.foreign_keys:
            assert set(fk.columns) <= columns[table], (table, fk)
            assert set(fk.referenced_columns) <= columns[fk.references], (table, fk)
    # every fact table's date key is declared
    assert any(fk.references == "date_dim" for fk in tpcds.KEYS["store_sales"].foreign_keys)


def test_catalogs_of_the_three_placements(tpcds_parquet_catalog, tmp_path):
    directory = tpcds_parquet_catalog.parent.parent
    dataset = tpcds.existing(directory, 0.01)
    assert dataset is not None
    written = tpcds.write_catalogs(dataset, PostgresTarget(local_server=str(tmp_path / "postgres")), tmp_path)
    assert set(written) == set(tpcds.PLACEMENTS)
    federated = load_catalog(written["federated"])
    assert set(federated.sources["pg"].tables) == set(tpcds.DIMENSION_TABLES)
    assert set(federated.sources["lake"].tables) == set(tpcds.FACT_TABLES)
    sales = federated.sources["lake"].tables["store_sales"]
    assert sales.primary_key == ("ss_item_sk", "ss_ticket_number")
    references = {fk.references for fk in sales.foreign_keys}
    assert "pg.date_dim" in references and "store_sales" not in references
    assert {fk.references for fk in federated.sources["lake"].tables["store_returns"].foreign_keys} >= {"store_sales"}
    everything = load_catalog(written["all-spark"])
    assert len(everything.sources["lake"].tables) == 24


def test_a_directory_of_one_benchmark_is_not_written_over_by_the_other(tpcds_parquet_catalog):
    directory = tpcds_parquet_catalog.parent.parent
    with pytest.raises(CboError, match="holds TPC-DS data, not TPC-H"):
        tpch.generate(0.01, directory)
    with pytest.raises(CboError, match="not TPC-DS at 0.1"):
        tpcds.generate(0.1, directory)
