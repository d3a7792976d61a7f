"""Optimization time of the 22 TPC-H queries through the memo, at SF 1 statistics.

The statistics are the SF 1 ones kept with the tests (tests/testdata/stats/tpch-sf1); the
schema comes from the SF 0.01 Parquet catalog (generated on first use). For each query:
the memo search alone (``Optimizer.optimize`` on the normalized plan), best of ``repeat``
runs, and its counters; the first run of the first query also pays for reading statistics.
"""

from __future__ import annotations

import gc
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.tpch.queries import all_queries

STATS = Path(__file__).resolve().parents[2] / "tests" / "testdata" / "stats" / "tpch-sf1"


def tpch_catalog() -> Path:
    from cbo.paths import cache_dir, scale_factor_label
    from cbo.workloads import tpch

    dataset, _ = tpch.generate(0.01, cache_dir() / "tpch" / scale_factor_label(0.01))
    return tpch.write_catalogs(dataset, None, dataset.directory / "catalogs-parquet")["all-spark"]


def run_tpch(repeat: int, progress=print) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    from cbo.estimate import Estimator
    from cbo.planner import Planner
    from cbo.sources.catalog import load_catalog
    from stats.store import StatsStore

    store = StatsStore(STATS)
    estimator = Estimator({t: store.load(t).stats for t in store.tables()})
    planner = Planner(load_catalog(tpch_catalog()), estimator=estimator)
    rows = []
    for query in all_queries():
        _, normalized, _ = planner.logical(query.sql)
        best, best_cpu, result = None, None, None
        for _ in range(repeat):
            # Each run is a query never seen: its memo estimates in a context of its own, while
            # the statistics stay loaded in the estimator. The search holds the cyclic collector
            # off while it runs; what the last search left is collected here, not at the first
            # allocation inside the next timed search.
            result = None
            gc.collect()
            started, started_cpu = time.perf_counter(), time.process_time()
            result = planner.optimizer().optimize(normalized)
            cpu = (time.process_time() - started_cpu) * 1000.0
            elapsed = (time.perf_counter() - started) * 1000.0
            best = elapsed if best is None else min(best, elapsed)
            best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
        assert result is not None and best is not None and best_cpu is not None
        row = {"query": query.name, "ms": round(best, 2), "cpu_ms": round(best_cpu, 2), "groups": len(result.memo),
               "expressions": result.memo.expression_count, "join_pairs": result.counters.join_pairs}
        rows.append(row)
        progress(f"{query.name}  {row['ms']:>7.1f} ms {row['cpu_ms']:>7.1f} CPU ms  "
                 f"groups {row['groups']:>4}  expressions {row['expressions']:>4}  "
                 f"join pairs {row['join_pairs']:>4}")
    times = [r["ms"] for r in rows]
    cpu_times = [float(r["cpu_ms"]) for r in rows]
    return {"rows": rows, "median_ms": statistics.median(times), "max_ms": max(times),
            "median_cpu_ms": statistics.median(cpu_times), "max_cpu_ms": max(cpu_times)}
