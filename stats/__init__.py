"""stats: column statistics and histograms, their model and store, and the Spark collector.

This package never imports ``cbo``; the estimator in ``cbo`` reads what it collects. A JDBC
source's collector is its connector's (``cbo.connectors``: PostgreSQL's reads pg_stats,
MariaDB's its engine-independent statistics, SQLite's scans), built on this package's model.

* ``stats.model``: TableStats, ColumnStats, Bucket (JSON-serializable, versioned);
* ``stats.spark_collector.collect(frame, ...)``: one scan plus a sample, with Spark;
* ``stats.store.StatsStore``: atomic, per-catalog directory of JSON files;
* ``stats.collect`` / ``stats.load``: the same, by the names used above.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from stats.model import Bucket, ColumnStats, TableStats
from stats.store import StatsStore

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def collect(frame: DataFrame, table: str, fingerprint: str, **options: Any) -> TableStats:
    """Statistics of a Spark DataFrame (see ``stats.spark_collector.collect``)."""
    from stats.spark_collector import collect as spark_collect

    return spark_collect(frame, table, fingerprint, **options)


def load(directory: str | Path, table: str, fingerprint: str | None = None) -> TableStats | None:
    """Stored statistics of ``table`` in ``directory``, or None (see ``StatsStore.load``)."""
    return StatsStore(Path(directory)).load(table, fingerprint).stats


__all__ = ["Bucket", "ColumnStats", "StatsStore", "TableStats", "collect", "load"]
