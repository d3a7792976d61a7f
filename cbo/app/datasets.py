"""Small data to explore cbo with: ``cbo.tpch_catalog(sf=0.01)``.

The notebooks and a first session need a catalog without a database server: TPC-H generated
as Parquet into cbo's cache (``$CBO_CACHE_DIR``, else ``$XDG_CACHE_HOME/cbo`` or
``~/.cache/cbo``: set ``CBO_CACHE_DIR`` to put it elsewhere, as the test suite does), the
all-spark catalog written beside it, and cbo's statistics of its tables collected. Each step
is skipped when its result is already there, so a second call returns at once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def tpch_catalog(sf: float = 0.01, *, statistics: bool = True,
                 progress: Callable[[str], None] | None = None) -> Path:
    """The all-spark TPC-H catalog at scale factor ``sf`` (Parquet in the cache, generated once
    with tpchgen-cli); with ``statistics``, cbo's statistics of every table collected where
    missing or stale (one Spark scan per table, about a minute at SF 0.01 the first time).
    Starts no server and touches no source but the cache."""
    from cbo.sources.catalog import load_catalog
    from cbo.sources.statistics import analyze
    from cbo.workloads import tpch

    say = progress or (lambda _: None)
    catalog = tpch.prepare(sf, postgres=None, progress=say)["all-spark"]
    if statistics:
        analyze(load_catalog(catalog), progress=say)
    return catalog
