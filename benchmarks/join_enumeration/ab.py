"""CPU-time A/B of the memo search in two checkouts, side by side in one run.

    python -m benchmarks.join_enumeration.ab OTHER_CHECKOUT [--rounds 5] [--other-python PY] [CASE ...]

A case is a TPC-H query at SF 1 statistics (``q05``; ``tpch`` for all 22) or a synthetic
shape ``shape:n:mode`` (``star:12:ex`` exhaustive, ``star:12:default`` default settings), as
``benchmarks.join_enumeration`` builds them. One worker process runs in this checkout and one
in OTHER_CHECKOUT (each importing its own ``cbo``); for every case the two take turns,
``--rounds`` times, and each keeps its least CPU time (``time.process_time``) of one
``optimize``. CPU time and taking turns make the ratio robust to the load of a shared
machine, which wall-clock timings are not. The workers also report the chosen plan's cost and
a digest of every group's estimated rows: a change in either is printed as a difference.
``--other-python`` runs the other worker under another interpreter (a virtualenv's python, with
its own packages): OTHER_CHECKOUT may then be this checkout, to compare interpreters alone.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]
SHAPE_MODES = ("ex", "default")


def _worker() -> None:
    """Read case names on stdin; print [CPU ms, "cost rows-digest groups"] per case."""
    from benchmarks.join_enumeration.shapes import build
    from cbo.estimate import Estimator
    from cbo.memo.search import Optimizer
    from cbo.settings import OptimizerSettings

    planner: Any = None
    normalized: dict[str, Any] = {}
    workloads: dict[str, Any] = {}
    for line in sys.stdin:
        case = line.strip()
        if case.startswith("q"):
            if planner is None:
                planner, normalized = _tpch_planner()
            _forget(planner.estimator)   # each run as a query never seen (statistics stay loaded)
            run = (lambda p=planner, plan=normalized[case]: p.optimizer().optimize(plan))
        else:
            shape, n_text, mode = case.split(":")
            n = int(n_text)
            workload = workloads.setdefault(case, build(shape, n, 0))
            settings = OptimizerSettings(max_reordered_joins=max(n, 2), max_join_pairs=60_001) if mode == "ex" \
                else OptimizerSettings()
            _forget(Estimator({}))   # (what a checkout keeps of plans at module level, too)
            run = (lambda w=workload, s=settings: Optimizer(Estimator(w.stats), s).optimize(w.plan))
        result = None
        gc.collect()   # what the last search left, collected outside the timing (the search holds it off)
        started = time.process_time()
        result = run()
        elapsed = (time.process_time() - started) * 1000.0
        rows = tuple(g.__dict__["estimate"].rows for g in result.memo if "estimate" in g.__dict__)
        print(json.dumps([elapsed, f"{result.cost!r} {hash(rows)} {len(rows)}"]), flush=True)


def _forget(estimator: Any) -> None:
    """Drop what a checkout whose estimator has ``forget_plans`` keeps of plans across queries
    (on the estimator, and in module-level caches: a repeated run of one query would read the
    classes and layouts of the run before); other checkouts keep nothing of plans across
    searches."""
    forget = getattr(estimator, "forget_plans", None)
    if forget is not None:
        forget()


def _tpch_planner() -> tuple[Any, dict[str, Any]]:
    from benchmarks.join_enumeration.tpch import STATS, tpch_catalog
    from benchmarks.tpch.queries import all_queries
    from cbo.estimate import Estimator
    from cbo.planner import Planner
    from cbo.sources.catalog import load_catalog
    from stats.store import StatsStore

    store = StatsStore(STATS)
    estimator = Estimator({t: store.load(t).stats for t in store.tables()})
    planner = Planner(load_catalog(tpch_catalog()), estimator=estimator)
    return planner, {q.name: planner.logical(q.sql)[1] for q in all_queries()}


def _cases(names: list[str]) -> list[str]:
    cases: list[str] = []
    for name in names:
        if name == "tpch":
            cases += [f"q{i:02d}" for i in range(1, 23)]
            continue
        parts = name.split(":")
        if not (len(parts) == 1 and name.startswith("q")) and \
                not (len(parts) == 3 and parts[1].isdigit() and parts[2] in SHAPE_MODES):
            raise SystemExit(f"ab: bad case {name!r} (expected q01..q22, tpch, or shape:n:ex|default)")
        cases.append(name)
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.join_enumeration.ab",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout (its cbo is imported from there)")
    parser.add_argument("cases", nargs="*", default=["star:12:ex", "clique:10:ex", "tpch"])
    parser.add_argument("--rounds", type=int, default=5, help="turns per case; the least CPU time counts")
    parser.add_argument("--other-python", type=Path, default=None,
                        help="the other worker's interpreter (default: this one)")
    args = parser.parse_intermixed_args(argv)
    if args.other_python is not None and not os.access(args.other_python, os.X_OK):
        parser.error(f"--other-python {args.other_python} is not an executable file")
    if not (args.other / "cbo" / "__init__.py").is_file():
        parser.error(f"{args.other} is not a cbo checkout (no cbo/__init__.py)")
    cases = _cases(args.cases)
    trees = {"other": args.other.resolve(), "this": HERE}
    pythons = {"other": str(args.other_python or sys.executable), "this": sys.executable}
    workers = {}
    for name, tree in trees.items():
        env = dict(os.environ, PYTHONPATH=str(tree))
        # this file runs as the worker in both checkouts; each imports cbo from its own tree
        workers[name] = subprocess.Popen([pythons[name], str(Path(__file__).resolve()), "--worker"],
                                         cwd=tree, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(name: str, case: str) -> tuple[float, str]:
        worker = workers[name]
        assert worker.stdin is not None and worker.stdout is not None
        worker.stdin.write(case + "\n")
        worker.stdin.flush()
        line = worker.stdout.readline()
        if not line:
            raise SystemExit(f"ab: the worker in {trees[name]} stopped at {case}")
        elapsed, digest = json.loads(line)
        return elapsed, digest

    print(f"this: {HERE} ({pythons['this']})\nother: {trees['other']} ({pythons['other']})\n"
          f"CPU ms, least of {args.rounds} turns each")
    for name in workers:   # the first TPC-H case reads the statistics: not timed
        ask(name, cases[0])
    best: dict[str, dict[str, float]] = {"other": {}, "this": {}}
    ratios, differ = [], []
    for case in cases:
        digests = {}
        for _ in range(args.rounds):
            for name in workers:
                elapsed, digest = ask(name, case)
                best[name][case] = min(elapsed, best[name].get(case, math.inf))
                digests[name] = digest
        ratio = best["this"][case] / best["other"][case]
        ratios.append(ratio)
        same = digests["this"] == digests["other"]
        if not same:
            differ.append(case)
        print(f"{case:<16} other {best['other'][case]:9.1f}  this {best['this'][case]:9.1f}  this/other {ratio:5.2f}"
              f"  {'same plan cost and estimates' if same else 'DIFFERENT: ' + str(digests)}", flush=True)
    tpch = [c for c in cases if c.startswith("q")]
    if len(tpch) > 1:
        for name in workers:
            print(f"TPC-H median ({name}): {statistics.median(best[name][c] for c in tpch):.2f} ms")
    print(f"geometric mean this/other: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")
    for worker in workers.values():
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait()
    return 1 if differ else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        _worker()
    else:
        raise SystemExit(main())
