"""How the TPC-DS statistics kept with the tests were made (tests/testdata/stats/tpcds-sf1).

Exact statistics (``stats.from_values``: MCVs, equi-depth histograms, distinct counts, widths;
no row sample, as the TPC-H ones kept here) of every column of TPC-DS at SF 1 as tpcgen-cli
generates it, table by table and column by column, without an engine. The plan file
``tests/testdata/plans/tpcds.test`` plans with them.

Usage: ``python tests/testdata/stats/make_tpcds_stats.py DATA_DIR tests/testdata/stats/tpcds-sf1``
where ``DATA_DIR`` holds the Parquet files (``cbo datagen tpcds --sf 1 --out DATA_DIR``).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq

from cbo.workloads.tpcds import TABLES
from stats.from_values import table_stats
from stats.store import StatsStore


def main(data: Path, out: Path) -> None:
    store = StatsStore(out)
    for table in TABLES:
        parquet = pq.ParquetFile(data / f"{table}.parquet")
        columns = {}
        for name in parquet.schema_arrow.names:   # one column at a time: SF 1's facts are large
            values = parquet.read(columns=[name]).column(0).to_pylist()
            columns.update(table_stats(f"lake.{table}", {name: values}, sample_size=0).columns)
            print(f"{table}.{name}", flush=True)
        whole = table_stats(f"lake.{table}", {"_": [None] * parquet.metadata.num_rows}, sample_size=0)
        store.save(replace(whole, columns=columns, fingerprint="tpcgen-cli sf 1"))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
