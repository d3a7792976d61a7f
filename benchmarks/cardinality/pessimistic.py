"""What the pessimistic mode (``cardinalities=upper``) changes in TPC-H plans.

``python -m benchmarks.cardinality.pessimistic [--stats DIR] [--sf X] --out FILE``

Plans the 22 TPC-H queries twice with the same statistics (by default the SF 1 statistics kept
for the plan tests, ``tests/testdata/stats/tpch-sf1``; the SF ``--sf`` Parquet catalog gives the
schema only): once with ``cardinalities=estimated`` and once with ``cardinalities=upper``. Prints,
per query, whether the chosen plan's shape (operators, join order and algorithms, not the
estimates) differs and the root's estimated rows in both modes, and saves both plans as JSON.
Its effect on q-error is in the harness: ``python -m benchmarks.cardinality --systems
cbo,cbo_upper``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from benchmarks.machine import machine_info
from cbo.app.explain import add_physical_details, describe, to_text
from cbo.app.progress import say, step
from cbo.estimate import Estimator
from cbo.planner import Planner
from cbo.settings import OptimizerSettings
from cbo.sources.catalog import load_catalog
from cbo.workloads.tpch_queries import all_queries
from stats.store import StatsStore

DEFAULT_STATS = Path(__file__).resolve().parents[2] / "tests" / "testdata" / "stats" / "tpch-sf1"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cardinality.pessimistic",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--stats", type=Path, default=DEFAULT_STATS, help="statistics store (default: SF 1 test copy)")
    parser.add_argument("--sf", type=float, default=0.1, help="TPC-H Parquet catalog for the schema (default 0.1)")
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    args = parser.parse_args(argv)
    from cbo.workloads import tpch

    with step(f"TPC-H sf {args.sf:g} catalog"):
        catalog = load_catalog(tpch.prepare(args.sf, postgres=None, progress=say)["all-spark"])
    store = StatsStore(args.stats)
    stats = {}
    for table in store.tables():
        loaded = store.load(table)
        if loaded.stats is not None:
            stats[table] = loaded.stats
    estimators = {"estimated": Estimator(stats), "upper": Estimator(stats, upper=True)}
    results = []
    for query in all_queries():
        plans, rows = {}, {}
        for mode in ("estimated", "upper"):
            settings = replace(OptimizerSettings(), cardinalities=mode)
            planner = Planner(catalog, estimator=estimators["estimated"], settings=settings)
            planned = planner.plan(query.sql)

            def annotate(node, info, planned=planned):  # type: ignore[no-untyped-def]
                add_physical_details(info, node, planned.operator(node))

            plans[mode] = to_text(describe(planned.plan, annotate))
            rows[mode] = estimators[mode].rows(planned.plan)
        changed = plans["estimated"] != plans["upper"]
        results.append({"query": query.name, "changed": changed, "rows": rows, "plans": plans})
        say(f"{query.name}: {'plan changed' if changed else 'same plan'}; root rows "
            f"{rows['estimated']:,.0f} estimated, {rows['upper']:,.0f} upper")
    changed = [r["query"] for r in results if r["changed"]]
    document = {"machine": machine_info(), "stats": str(args.stats), "changed": changed, "queries": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=1, default=str))
    print(f"cardinalities=upper changes the plan of {len(changed)} of {len(results)} TPC-H queries: "
          f"{', '.join(changed) or 'none'}")
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
