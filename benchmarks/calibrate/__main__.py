"""Fit the Spark cost constants to runtimes measured on this machine.

    python -m benchmarks.calibrate                 # SF 1, writes cbo/cost/profiles/spark.json
    python -m benchmarks.calibrate --sf 0.1 --repeat 1 --profile /tmp/spark.json
    python -m benchmarks.calibrate --master cluster   # a profile for the cluster's shape
    python -m benchmarks.calibrate --remote        # the JDBC sources' constants (see remote.py)

On a cluster (``--master cluster``: cbo's local standalone cluster, started if needed; or a
``spark://`` URL) the queries run there, the plans are chosen with the defaults scaled to the
cluster's shape (``cbo.cost.cluster``), and the profile fitted is that shape's:
``<cache>/profiles/spark-<executors>x<cores>.json``, which the planner then uses on any cluster
of that shape (instead of scaling the shipped profile).

Every query of the training set (``workload.training()``) is planned by cbo (with the settings
the item gives, e.g. one join strategy only) and run on Spark ``--repeat`` times after one
warm-up run; the fastest time counts. Each plan's cost quantities (bytes scanned, rows hashed,
bytes shuffled, ... summed over the chosen plan, ``cbo.cost.profile``) form one row of a linear
system ``quantities x constants = seconds``, solved for non-negative constants by bounded least
squares on relative error (each row divided by its runtime, so a 0.5 s query counts as much as a
5 s one). A constant the training set gives no information about keeps its default, and no
constant falls below 2% of its default: a zero would make the work it prices free and let
the search pick plans by the other terms alone.

Then the held-back queries (``workload.held_back()``, never seen by the fit) are measured the
same way, and the report gives the Spearman rank correlation between their predicted cost and
their runtime, with the default constants and with the fitted ones. The profile (constants plus
the report) is written atomically; a table is printed and the full report saved as JSON, with a
scatter plot of predicted against measured time.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.calibrate.report import print_fit
from benchmarks.calibrate.workload import Item, held_back, training
from benchmarks.cli import run_main
from benchmarks.machine import machine_info
from cbo.app.progress import say
from cbo.cost import QUANTITIES, CostProfile
from cbo.cost.profile import PROFILE_DIR

RESULTS = Path(__file__).resolve().parents[1] / "results"
FLOOR = 0.02   # of the default: the smallest value a fitted constant may take


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.calibrate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=1.0, help="TPC-H scale factor (default 1)")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per query after a warm-up (default 2)")
    parser.add_argument("--profile", type=Path,
                        help="profile file to write (default: the shipped cbo/cost/profiles/spark.json; on a "
                             "cluster <cache>/profiles/spark-<executors>x<cores>.json)")
    parser.add_argument("--master", help="cluster (cbo's local standalone cluster) or a spark:// URL "
                                         "(default: local mode)")
    parser.add_argument("--out", type=Path,
                        help="report JSON (default benchmarks/results/calibration-spark[-<shape>].json)")
    parser.add_argument("--limit", type=int, help="only the first N training and held-back items (smoke runs)")
    parser.add_argument("--remote", action="store_true",
                        help="fit the remote constants (PostgreSQL and MariaDB through JDBC) instead, Spark's held "
                             "(benchmarks/calibrate/remote.py)")
    parser.add_argument("--plan-only", action="store_true",
                        help="with --remote: plan every item and print its quantities, time nothing")
    return parser.parse_args(argv)


def measure(session, items: list[Item], repeat: int, label: str) -> list[dict]:  # type: ignore[no-untyped-def]
    from cbo.settings import OptimizerSettings

    records = []
    for index, item in enumerate(items, 1):
        session.planner.settings = OptimizerSettings().with_values(item.settings)
        planned = session.planner.plan(item.sql)
        assert planned.optimized is not None
        session.run(planned)   # warm-up
        times = []
        for _ in range(max(1, repeat)):
            started = time.perf_counter()
            session.run(planned)
            times.append(time.perf_counter() - started)
        record = {"name": item.name, "settings": item.settings, "seconds": min(times), "times": times,
                  "quantities": dict(planned.optimized.quantities), "partitions": planned.partitions,
                  "strategies": sorted({n.strategy for n in planned.physical.operators() if n.strategy})}
        records.append(record)
        say(f"{label} {index}/{len(items)} {item.name:<34} {record['seconds']:7.3f} s")
    session.planner.settings = OptimizerSettings()
    return records


def fit(records: list[dict], defaults: dict[str, float]) -> tuple[dict[str, float], dict[str, object]]:
    import numpy as np
    from scipy.optimize import lsq_linear

    names = list(QUANTITIES)
    a = np.array([[r["quantities"].get(n, 0.0) for n in names] for r in records], dtype=float)
    a[:, names.index("query")] += 1.0   # the query's own; a CTE computed once adds one of its own
    b = np.array([r["seconds"] for r in records], dtype=float)
    informed = [j for j, n in enumerate(names) if np.any(a[:, j] > 0)]
    # relative error: every query weighs the same whatever its length
    weighted = a[:, informed] / b[:, None]
    scale = np.maximum(weighted.max(axis=0), 1e-300)
    lower = np.array([defaults[names[j]] * FLOOR for j in informed]) * scale
    solution = lsq_linear(weighted / scale, np.ones_like(b), bounds=(lower, np.inf), method="trf")
    fitted = dict(defaults)
    for value, j in zip(solution.x / scale, informed):
        fitted[names[j]] = float(value)
    predicted = a @ np.array([fitted[n] for n in names])
    relative = np.abs(predicted - b) / b
    report = {"training_queries": len(records), "fitted": [names[j] for j in informed],
              "kept_default": [n for j, n in enumerate(names) if j not in informed],
              "median_relative_error": float(np.median(relative)),
              "max_relative_error": float(np.max(relative))}
    return fitted, report


def predict(record: dict, constants: dict[str, float]) -> float:
    quantities = dict(record["quantities"], query=record["quantities"].get("query", 0.0) + 1.0)
    return sum(constants[n] * v for n, v in quantities.items())


def spearman(records: list[dict], constants: dict[str, float]) -> float:
    from scipy.stats import spearmanr

    result = spearmanr([predict(r, constants) for r in records], [r["seconds"] for r in records])
    return float(result.statistic)


def plot(train: list[dict], test: list[dict], constants: dict[str, float], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 5))
    for records, label, marker in ((train, "training", "o"), (test, "held back", "^")):
        axis.scatter([r["seconds"] for r in records], [predict(r, constants) for r in records],
                     label=label, marker=marker, alpha=0.7)
    limits = [min(r["seconds"] for r in train + test) * 0.8, max(r["seconds"] for r in train + test) * 1.2]
    axis.plot(limits, limits, color="grey", linewidth=0.8)
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("measured seconds (Spark)")
    axis.set_ylabel("predicted cost (fitted constants, seconds)")
    axis.set_title("cbo cost model calibration")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.remote:
        from benchmarks.calibrate.remote import calibrate_remote

        return calibrate_remote(args)
    from benchmarks.tpch.scale import spark_master

    with spark_master(args.master) as master:
        return calibrate(args, master)


def calibrate(args: argparse.Namespace, master) -> int:  # type: ignore[no-untyped-def]
    from benchmarks.tpch.scale import on_master
    from cbo.app.session import Session
    from cbo.cost.cluster import shape_profile_path
    from cbo.sources.catalog import load_catalog
    from cbo.workloads import tpch

    catalogs = tpch.prepare(args.sf, postgres=None, progress=say)
    # Plans are chosen with the default constants (scaled to the cluster): the fit must not
    # depend on an earlier fit.
    session = Session(on_master(load_catalog(catalogs["all-spark"]), master))
    session.planner.base_profile = CostProfile(source="defaults")
    shape = session.planner.cluster   # starts Spark on a cluster
    base = session.planner.profile()
    defaults = dict(base.constants)
    if args.profile is None:
        args.profile = shape_profile_path(shape) if shape else PROFILE_DIR / "spark.json"
    if args.out is None:
        args.out = RESULTS / (f"calibration-spark-{shape.key}.json" if shape else "calibration-spark.json")
    session.query("select count(*) from region")   # start Spark before timing anything
    train_items, test_items = training(), held_back()
    if args.limit:
        train_items, test_items = train_items[: args.limit], test_items[: args.limit]
    train = measure(session, train_items, args.repeat, "training")
    constants, report = fit(train, defaults)
    test = measure(session, test_items, args.repeat, "held back")
    report["held_back_queries"] = len(test)
    report["spearman_default"] = spearman(test, defaults)
    report["spearman_fitted"] = spearman(test, constants)
    report["spearman_training_fitted"] = spearman(train, constants)
    if args.profile.exists():   # the profile this run replaces, judged on this run's measurements
        report["spearman_previous_profile"] = spearman(test, dict(CostProfile.load(args.profile).constants))
    report["scale_factor"] = args.sf
    report["cluster"] = shape.describe() if shape else "local mode"

    print_fit(QUANTITIES, defaults, constants, report, "default", "spearman_default")

    profile = CostProfile(constants=constants, source=str(args.profile), fit=report, executors=base.executors,
                          cores=base.cores)
    profile.save(args.profile)
    say(f"wrote profile {args.profile}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    body = {"benchmark": "calibration", "machine": machine_info(), "report": report, "constants": constants,
            "defaults": defaults, "training": train, "held_back": test}
    temporary = args.out.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(body, indent=2))
    temporary.replace(args.out)
    plot(train, test, constants, args.out.with_suffix(".png"))
    say(f"saved {args.out} and {args.out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    run_main(main)
