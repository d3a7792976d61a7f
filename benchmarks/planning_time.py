"""cbo's planning time per TPC-DS query, from stored statistics: no engine, no data read.

Each of the 99 queries (DuckDB's dialect) is planned ``--repeat`` times by one planner over
one estimator, as a session plans a workload; the best time counts, after one warm-up pass
over all queries (what the estimator converts once per table, and Python's imports, are not
the query's; that pass's time is kept too, as ``first_ms``). Printed per query: the whole
planning (parse, bind, normalize, search) in wall time and in this process's CPU time
(steadier on a busy machine), and the memo search alone (``counters.elapsed_ms``, what
workload results record as ``plan_ms``), then the median and the slowest queries. ``--json``
saves the figures with the commit and the machine.

The statistics default to the plan files' (``tests/testdata/stats/tpcds-sf1``: SF 1 without
row samples); ``--stats`` names another store (e.g. one ``cbo analyze`` wrote, with samples).
The catalog is only read for the schema: ``--catalog`` names a TPC-DS catalog file, else the
SF 0.01 Parquet one is generated in the cache (seconds).

    python -m benchmarks.planning_time --repeat 5 [--stats DIR] [--catalog FILE] [q72 q04 ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_STATS = ROOT / "tests" / "testdata" / "stats" / "tpcds-sf1"


def _estimator(directory: Path):  # type: ignore[no-untyped-def]
    from cbo.estimate import Estimator
    from stats.store import StatsStore

    store = StatsStore(directory)
    stats = {}
    for table in store.tables():
        loaded = store.load(table)
        if loaded.stats is None:
            raise SystemExit(f"error: {directory}: statistics of {table} unreadable: {loaded.problem}")
        stats[table] = loaded.stats
    return Estimator(stats)


def _catalog(path: str | None) -> Path:
    if path:
        return Path(path)
    from cbo.paths import cache_dir
    from cbo.workloads import tpcds

    dataset, _ = tpcds.generate(0.01, cache_dir() / "tpcds" / "sf0.01")
    return tpcds.write_catalogs(dataset, None, dataset.directory / "catalogs-parquet")["all-spark"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.planning_time", description=__doc__.split("\n\n")[0])
    parser.add_argument("queries", nargs="*", help="q01 .. q99 (all when none)")
    parser.add_argument("--repeat", type=int, default=3, help="plannings per query; the best counts")
    parser.add_argument("--stats", default=str(DEFAULT_STATS), help="a statistics store directory")
    parser.add_argument("--catalog", help="a TPC-DS catalog file (schema only)")
    parser.add_argument("--slowest", type=int, default=10, help="how many of the slowest to list")
    parser.add_argument("--json", help="write the per-query figures here")
    args = parser.parse_args(argv)

    from cbo.errors import CboError
    from cbo.planner import Planner
    from cbo.sources.catalog import load_catalog
    from cbo.workloads import tpcds_queries

    queries = tpcds_queries.select(args.queries)
    planner = Planner(load_catalog(_catalog(args.catalog)), tpcds_queries.DIALECT,
                      estimator=_estimator(Path(args.stats)))

    def once(sql: str) -> tuple[float, float, float]:
        started, cpu = time.perf_counter(), time.process_time()
        planned = planner.plan(sql)
        total, cpu = (time.perf_counter() - started) * 1000.0, (time.process_time() - cpu) * 1000.0
        return total, cpu, planned.optimized.counters.elapsed_ms if planned.optimized else 0.0

    refused: dict[str, str] = {}
    cold: dict[str, float] = {}
    for query in queries:   # the warm-up pass: each query's first planning, as a session meets it
        try:
            cold[query.name] = round(once(query.sql)[0], 2)
        except CboError as exc:
            refused[query.name] = str(exc).splitlines()[0]
    figures = {}
    for query in queries:
        if query.name in refused:
            continue
        runs = [once(query.sql) for _ in range(max(1, args.repeat))]
        figures[query.name] = {"plan_ms": round(min(r[0] for r in runs), 2),
                               "cpu_ms": round(min(r[1] for r in runs), 2),
                               "search_ms": round(min(r[2] for r in runs), 2),
                               "first_ms": cold[query.name]}
        f = figures[query.name]
        print(f"{query.name:<5} {f['plan_ms']:>9.1f} ms  (cpu {f['cpu_ms']:.1f} ms, search {f['search_ms']:.1f} ms)",
              flush=True)
    for name, why in refused.items():
        print(f"{name:<5} refused: {why}")
    if figures:
        for key in ("plan_ms", "cpu_ms", "first_ms"):
            totals = [f[key] for f in figures.values()]
            print(f"\n{key}: {len(figures)} queries, median {statistics.median(totals):.1f} ms, "
                  f"max {max(totals):.1f} ms, sum {sum(totals):.0f} ms (best of {args.repeat})")
            slowest = sorted(figures.items(), key=lambda kv: -kv[1][key])[:args.slowest]
            print("slowest: " + ", ".join(f"{name} {f[key]:.0f}" for name, f in slowest))
    if args.json:
        from benchmarks.machine import git_commit, machine_info

        commit, dirty = git_commit("cbo", "benchmarks/planning_time.py")
        report = {"benchmark": "planning-time", "workload": "tpcds", "stats": str(args.stats),
                  "repeat": args.repeat, "commit": commit, "dirty": dirty, "machine": machine_info(),
                  "queries": figures, "refused": refused}
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    from benchmarks.cli import run_main

    run_main(main)
