"""Instructions of one search or one workload's estimates, in two checkouts, counted by callgrind.

    python -m benchmarks.instructions OTHER_CHECKOUT [CASE ...]

CPU time on a shared machine moves with the load; instructions do not. Each case runs in a
worker under ``valgrind --tool=callgrind`` (``PYTHONHASHSEED=0``), in this checkout and in
OTHER_CHECKOUT (each worker importing its own ``cbo``), counting only the work: the worker calls
it through ctypes (``PyObject_CallObject``), the one foreign call it makes, and callgrind collects
inside libffi's ``ffi_call`` alone (``--collect-atstart=no --toggle-collect=ffi_call``). Before
the counted work, the worker does it once uncounted (statistics read, samples loaded, indexes
built), so the count is the work with statistics loaded, as the timed benchmarks measure it.
Until then valgrind runs the worker uninstrumented (``--instr-atstart=no``; the worker turns
instrumentation on with ``callgrind_control``), so the set-up costs a few times its native time,
not fifty.

A case is a synthetic shape ``shape:n:mode`` or ``tpch`` (every TPC-H query's search at SF 1
statistics), as ``benchmarks.join_enumeration.ab`` names them, or ``estimate:W`` (every
sub-plan of the cardinality workload W, ``tpch``, ``stats`` or ``stats2``, estimated afresh:
``benchmarks.cardinality.reestimate`` prepares its data and statistics, and must have run first),
or ``tpcds`` / ``tpcds:q72,q04`` (TPC-DS queries planned whole, parse to chosen plan, from the
plan files' SF 1 statistics, as ``benchmarks.planning_time`` times them).
Under callgrind a worker runs some fifty times slower: a 10-relation clique takes minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]


def _search_work(case: str) -> Any:
    """A callable running the case's search once."""
    from benchmarks.join_enumeration.ab import _tpch_planner
    from benchmarks.join_enumeration.shapes import build
    from cbo.estimate import Estimator
    from cbo.memo.search import Optimizer
    from cbo.settings import OptimizerSettings

    if case == "tpch":
        planner, normalized = _tpch_planner()

        def all_queries() -> None:
            for plan in normalized.values():
                _forget(planner.estimator)
                planner.optimizer().optimize(plan)

        return all_queries
    shape, n_text, mode = case.split(":")
    n = int(n_text)
    workload = build(shape, n, 0)
    settings = OptimizerSettings(max_reordered_joins=max(n, 2), max_join_pairs=60_001) if mode == "ex" \
        else OptimizerSettings()

    def one_search() -> None:
        _forget(Estimator({}))
        Optimizer(Estimator(workload.stats), settings).optimize(workload.plan)

    return one_search


def _forget(estimator: Any) -> None:
    """Drop what a checkout whose estimator has ``forget_plans`` keeps of plans across queries
    (on the estimator and at module level): each run a query never seen on both sides."""
    forget = getattr(estimator, "forget_plans", None)
    if forget is not None:
        forget()


def _estimate_work(workload: str) -> Any:
    """A callable estimating every sub-plan of the workload, each afresh (``reestimate``)."""
    from benchmarks.cardinality.subplans import subplans
    from cbo.estimate import Estimator
    from cbo.paths import cache_dir
    from cbo.planner import Planner
    from cbo.sources.catalog import load_catalog
    from cbo.sources.statistics import load_all

    # (reestimate's paths, written out: the other checkout's benchmarks may not have that module)
    if workload == "tpch":
        catalog = load_catalog(cache_dir() / "tpch" / "sf0.1" / "catalogs" / "all-spark.toml")
        saved = HERE / "benchmarks" / "results" / "cardinality-tpch-sf0.1.json"
    else:
        catalog = load_catalog(cache_dir() / "stats-data" / "stats-spark.toml")
        saved = HERE / "benchmarks" / "results" / f"cardinality-{workload}.json"
    stats, _ = load_all(catalog)
    estimator = Estimator(stats)
    planner = Planner(catalog)
    queries = json.loads(saved.read_text())["queries"]
    plans = [sub.plan for q in queries for sub in subplans(planner.plan(q["sql"]).plan)]

    def all_subplans() -> None:
        for plan in plans:
            _forget(estimator)   # a fresh estimation per sub-plan
            estimator.estimate(plan)

    return all_subplans


def _tpcds_work(names: list[str]) -> Any:
    """A callable planning the named TPC-DS queries (all when none) with one planner, as a
    session plans a workload; the catalog is the SF 0.01 Parquet one, for the schema only."""
    from cbo.estimate import Estimator
    from cbo.paths import cache_dir
    from cbo.planner import Planner
    from cbo.sources.catalog import load_catalog
    from cbo.workloads import tpcds, tpcds_queries
    from stats.store import StatsStore

    dataset, _ = tpcds.generate(0.01, cache_dir() / "tpcds" / "sf0.01")
    catalog = tpcds.write_catalogs(dataset, None, dataset.directory / "catalogs-parquet")["all-spark"]
    store = StatsStore(HERE / "tests" / "testdata" / "stats" / "tpcds-sf1")
    stats = {table: store.load(table).stats for table in store.tables()}
    planner = Planner(load_catalog(catalog), tpcds_queries.DIALECT, estimator=Estimator(stats))
    queries = [q.sql for q in tpcds_queries.select(names)]
    # Planning runs on a thread of its own (``cbo.limits.deep``), where callgrind, collecting
    # inside this thread's foreign call only, would count nothing: this thread is marked as
    # one already, so that planning runs here (the queries need no deeper stack).
    from cbo import limits

    limits._local.deep = True
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))

    def all_queries() -> None:
        for sql in queries:
            try:
                planner.plan(sql)
            except Exception:   # a query the checkout refuses: the same refusal each time
                pass

    return all_queries


def _worker(case: str) -> None:
    import ctypes
    import gc

    if case.startswith("estimate:"):
        work = _estimate_work(case.split(":", 1)[1])
    elif case == "tpcds" or case.startswith("tpcds:"):
        work = _tpcds_work([n for n in case.partition(":")[2].split(",") if n])
    else:
        work = _search_work(case)
    work()   # statistics read, samples loaded, indexes built: not counted
    gc.collect()

    def counted() -> None:
        work()
        gc.collect()

    subprocess.run(["callgrind_control", "--instr=on", str(os.getpid())], check=True, stdout=subprocess.DEVNULL)
    # the one foreign call, which callgrind collects in
    call = ctypes.pythonapi.PyObject_CallObject
    call.argtypes = [ctypes.py_object, ctypes.c_void_p]
    call.restype = ctypes.py_object
    call(counted, None)


def _instructions(tree: Path, python: str, case: str) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0")
        # this file runs as the worker in both checkouts; each imports cbo from its own tree
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--instr-atstart=no",
                   "--collect-atstart=no",
                   "--toggle-collect=ffi_call", python, str(Path(__file__).resolve()), "--worker",
                   case]
        done = subprocess.run(command, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"instructions: the worker in {tree} failed on {case}:\n{done.stderr[-2000:]}")
        found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
        if found is None:
            raise SystemExit(f"instructions: no total in callgrind's output for {case} in {tree}")
        return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.instructions", description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout (its cbo is imported from there)")
    parser.add_argument("cases", nargs="*", default=["clique:10:ex", "star:12:ex", "tpch", "estimate:stats"])
    parser.add_argument("--other-python", type=Path, default=None,
                        help="the other worker's interpreter (default: this one)")
    args = parser.parse_args(argv)
    if not (args.other / "cbo" / "__init__.py").is_file():
        parser.error(f"{args.other} is not a cbo checkout (no cbo/__init__.py)")
    trees = {"other": (args.other.resolve(), str(args.other_python or sys.executable)),
             "this": (HERE, sys.executable)}
    print(f"this: {HERE}\nother: {trees['other'][0]}\ninstructions of the counted work (callgrind, PYTHONHASHSEED=0)")
    for case in args.cases:
        found = {}
        for name, (tree, python) in trees.items():
            found[name] = _instructions(tree, python, case)
        ratio = found["this"] / found["other"]
        print(f"{case:<16} other {found['other'] / 1e9:8.3f} G  this {found['this'] / 1e9:8.3f} G  "
              f"this/other {ratio:6.3f}", flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        _worker(sys.argv[2])
    else:
        raise SystemExit(main())
