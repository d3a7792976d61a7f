"""Every sub-plan of a cardinality workload re-estimated in two checkouts, compared record by record.

    python -m benchmarks.cardinality.reestimate OTHER_CHECKOUT --workload tpch|stats|stats2 [--sf 0.1]

The harness's sub-plans (``benchmarks.cardinality``: every connected set of a query's join
regions, with the relations' filters) of the queries saved in
``benchmarks/results/cardinality-<workload>.json`` are estimated by cbo in this checkout and in
OTHER_CHECKOUT, each worker importing its own ``cbo``, over the same Parquet data and the same
statistics (collected here first where missing, with row samples). A record is one sub-plan's
estimated rows, notes, and each output column's distinct values and NULLs; the two sides'
records must be equal to the last bit. Prints how many records differ (0 for a change that
keeps every estimate) and exits 1 when some do. Each sub-plan is estimated by a fresh
estimation, as a query never seen, over statistics already loaded: what one plan left behind
must not change another's estimate. No true counts are taken (no DuckDB, no PostgreSQL).

``CBO_CACHE_DIR`` says where the data and statistics live, as for every cbo command.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]
RESULTS = HERE / "benchmarks" / "results"


def _catalog_path(workload: str, sf: float) -> Path:
    """The workload's Parquet catalog, the data made first where missing (no database server)."""
    from cbo.paths import cache_dir

    if workload == "tpch":
        from cbo.workloads import tpch

        return tpch.prepare(sf, postgres=None)["all-spark"]
    from cbo.workloads import stats_data

    return stats_data.prepare(cache_dir() / "stats-data")["spark"]


def _queries(workload: str, sf: float) -> list[tuple[str, str]]:
    name = f"cardinality-tpch-sf{sf:g}.json" if workload == "tpch" else f"cardinality-{workload}.json"
    path = RESULTS / name
    if not path.is_file():
        raise SystemExit(f"reestimate: {path} not found (the workload's saved queries)")
    return [(q["name"], q["sql"]) for q in json.loads(path.read_text())["queries"]]


def _estimation(estimator: Any) -> Any:
    """What estimates one sub-plan as a query never seen: a fresh context of ``estimator``
    where it has them, else the estimator with what it kept for plans dropped."""
    fresh = getattr(estimator, "context", None)
    if fresh is not None:
        return fresh()
    estimator.forget_plans()
    return estimator


def _worker(catalog_path: str, workload: str, sf: float) -> None:
    """Print one JSON record per sub-plan of the workload's queries, in order."""
    from benchmarks.cardinality.subplans import subplans
    from cbo.estimate import Estimator
    from cbo.planner import Planner
    from cbo.sources.catalog import load_catalog
    from cbo.sources.statistics import load_all

    catalog = load_catalog(Path(catalog_path))
    stats, _ = load_all(catalog)
    estimator = Estimator(stats)
    planner = Planner(catalog)   # as the harness plans: without statistics (the sub-plans are estimated)
    for name, sql in _queries(workload, sf):
        planned = planner.plan(sql)
        for sub in subplans(planned.plan):
            found = _estimation(estimator).estimate(sub.plan)
            columns = [[c.id, repr(found.column(c).distinct), repr(found.column(c).nulls)] for c in sub.plan.output]
            print(json.dumps({"query": name, "relations": list(sub.relations), "rows": repr(found.rows),
                              "notes": sorted(found.notes), "columns": columns}), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cardinality.reestimate",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout (its cbo is imported from there)")
    parser.add_argument("--workload", choices=("tpch", "stats", "stats2"), required=True)
    parser.add_argument("--sf", type=float, default=0.1, help="TPC-H scale factor (default 0.1)")
    parser.add_argument("--other-python", type=Path, default=None,
                        help="the other worker's interpreter (default: this one)")
    args = parser.parse_args(argv)
    if not (args.other / "cbo" / "__init__.py").is_file():
        parser.error(f"{args.other} is not a cbo checkout (no cbo/__init__.py)")
    _queries(args.workload, args.sf)   # (refused early when missing)
    from cbo.app.progress import say
    from cbo.sources.catalog import load_catalog
    from cbo.sources.statistics import analyze

    catalog_path = _catalog_path(args.workload, args.sf)
    analyze(load_catalog(catalog_path), progress=say)
    outputs = {}
    for name, tree, python in (("this", HERE, sys.executable),
                               ("other", args.other.resolve(), str(args.other_python or sys.executable))):
        env = dict(os.environ, PYTHONPATH=str(tree))
        # this file runs as the worker in both checkouts; each imports cbo from its own tree
        done = subprocess.run([python, str(Path(__file__).resolve()), "--worker", str(catalog_path), args.workload,
                               repr(args.sf)], cwd=tree, env=env, stdout=subprocess.PIPE, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"reestimate: the worker in {tree} failed (exit {done.returncode})")
        outputs[name] = [json.loads(line) for line in done.stdout.splitlines()]
    this, other = outputs["this"], outputs["other"]
    if len(this) != len(other):
        print(f"{len(this)} records here, {len(other)} in {args.other}: the sub-plans differ")
        return 1
    differ = [(a, b) for a, b in zip(this, other) if a != b]
    for a, b in differ[:10]:
        print(f"DIFFERENT {a['query']} {a['relations']}:\n  this  {a}\n  other {b}")
    print(f"{args.workload}: {len(this)} records, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        _worker(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    else:
        raise SystemExit(main())
