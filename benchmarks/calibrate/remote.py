"""Fit the remote cost constants (JDBC sources) to runtimes measured on this machine.

    python -m benchmarks.calibrate --remote            # SF 1, updates cbo/cost/profiles/spark.json
    python -m benchmarks.calibrate --remote --plan-only   # plans and quantities, nothing timed
    python -m benchmarks.calibrate --remote --sf 0.01 --profile /tmp/p.json   # a smoke run

The same method as the Spark fit (``benchmarks.calibrate``), on the remote workload
(``remote_workload``): every item is planned by cbo with its settings (``EAGER``: pushed where
the source can evaluate it; ``NONE``: tables read one by one) and run on Spark against cbo's
local PostgreSQL (all-postgres placement) or MariaDB (federated3), once untimed and then
``--repeat`` times (an item whose warm-up run takes over 4 s keeps that run as its time); the
fastest time counts. Each plan's quantities form one row of a linear
system. Only the remote quantities are fitted: ``remote_row_postgres``, ``remote_row_mysql``
(rows the pushed operators read in the source), ``remote_agg_row_postgres``,
``remote_agg_row_mysql`` (rows its aggregations read), ``remote_query`` (a query's latency, paid per
table read and per pushed subplan), ``jdbc_row`` and ``jdbc_byte`` (what a JDBC read brings into
Spark). The Spark constants are held at the profile's values and their share of each plan's
predicted time is subtracted first, so this fit never disturbs the Spark fit; it solves
``remote quantities x remote constants = seconds - Spark's share`` by bounded least squares on
relative error, each constant between 2% and 100 times its default. The held-back items (never
seen by the fit) give the Spearman correlation between predicted and measured time, before and
after.

The fitted constants are written into the profile (its Spark constants unchanged, the report
under ``fit.remote``); the report and a plot go to ``benchmarks/results/calibration-remote.*``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.calibrate.remote_workload import held_back, training
from benchmarks.calibrate.report import print_fit
from benchmarks.calibrate.workload import Item
from benchmarks.machine import machine_info
from cbo.app.progress import say
from cbo.cost import CostProfile
from cbo.cost.profile import PROFILE_DIR, SPARK_DEFAULTS

RESULTS = Path(__file__).resolve().parents[1] / "results"
REMOTE = ("remote_row_postgres", "remote_row_mysql", "remote_agg_row_postgres", "remote_agg_row_mysql", "remote_query",
          "jdbc_row", "jdbc_byte")
FLOOR = 0.02   # of the default: the smallest value a fitted constant may take
CEILING = 100.0   # of the default: the largest (a few items cannot make a rate absurd)
LONG_WARM_UP = 4.0   # seconds: a longer warm-up run counts as the item's time, not repeated


def measure(sessions: dict, items: list[Item], repeat: int, label: str,  # type: ignore[type-arg]
            plan_only: bool = False) -> list[dict]:
    from cbo.physical.algorithm import Algorithm
    from cbo.settings import OptimizerSettings

    records = []
    for index, item in enumerate(items, 1):
        if item.placement not in sessions:
            raise ValueError(f"remote calibration item {item.name}: placement {item.placement!r} is not one of "
                             f"{', '.join(sessions)}")
        session = sessions[item.placement]
        session.planner.settings = OptimizerSettings().with_values(item.settings)
        planned = session.planner.plan(item.sql)
        assert planned.optimized is not None
        remote = sum(1 for n in planned.physical.operators() if n.algorithm is Algorithm.REMOTE_QUERY)
        record = {"name": item.name, "placement": item.placement, "settings": item.settings,
                  "quantities": dict(planned.optimized.quantities), "remote_queries": remote,
                  "partitions": planned.partitions}
        if not plan_only:
            started = time.perf_counter()
            session.run(planned)   # warm-up
            warm_up = time.perf_counter() - started
            # a run this long is hardly changed by warm caches or the JIT: kept as the time
            times = [warm_up] if warm_up > LONG_WARM_UP else []
            for _ in range(max(1, repeat) if not times else 0):
                started = time.perf_counter()
                session.run(planned)
                times.append(time.perf_counter() - started)
            record.update(seconds=min(times), times=times)
        records.append(record)
        shown = f"{record['seconds']:7.3f} s" if not plan_only else "planned"
        say(f"{label} {index}/{len(items)} {item.name:<30} {remote} remote quer{'y' if remote == 1 else 'ies'} {shown}")
    return records


def predict(record: dict, constants: dict[str, float]) -> float:
    quantities = dict(record["quantities"], query=record["quantities"].get("query", 0.0) + 1.0)
    return sum(constants.get(n, 0.0) * v for n, v in quantities.items())


def fixed_share(record: dict, constants: dict[str, float]) -> float:
    """The predicted seconds of the plan's Spark work (everything but the remote quantities)."""
    quantities = dict(record["quantities"], query=record["quantities"].get("query", 0.0) + 1.0)
    return sum(constants.get(n, 0.0) * v for n, v in quantities.items() if n not in REMOTE)


def fit(records: list[dict], constants: dict[str, float]) -> tuple[dict[str, float], dict[str, object]]:
    import numpy as np
    from scipy.optimize import lsq_linear

    a = np.array([[r["quantities"].get(n, 0.0) for n in REMOTE] for r in records], dtype=float)
    b = np.array([r["seconds"] for r in records], dtype=float)
    fixed = np.array([fixed_share(r, constants) for r in records])
    informed = [j for j, _ in enumerate(REMOTE) if np.any(a[:, j] > 0)]
    weighted = a[:, informed] / b[:, None]       # relative error: every query weighs the same
    scale = np.maximum(weighted.max(axis=0), 1e-300)
    lower = np.array([SPARK_DEFAULTS[REMOTE[j]] * FLOOR for j in informed]) * scale
    upper = np.array([SPARK_DEFAULTS[REMOTE[j]] * CEILING for j in informed]) * scale
    solution = lsq_linear(weighted / scale, (b - fixed) / b, bounds=(lower, upper), method="trf")
    fitted = dict(constants)
    for value, j in zip(solution.x / scale, informed):
        fitted[REMOTE[j]] = float(value)
    predicted = np.array([predict(r, fitted) for r in records])
    relative = np.abs(predicted - b) / b
    report = {"training_queries": len(records), "fitted": [REMOTE[j] for j in informed],
              "kept": [n for j, n in enumerate(REMOTE) if j not in informed],
              "held": "the Spark constants, at the profile's values",
              "median_relative_error": float(np.median(relative)), "max_relative_error": float(np.max(relative))}
    return fitted, report


def spearman(records: list[dict], constants: dict[str, float]) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr([predict(r, constants) for r in records], [r["seconds"] for r in records]).statistic)


def plot(train: list[dict], test: list[dict], before: dict[str, float], after: dict[str, float], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(11, 5), sharex=True, sharey=True)
    everything = train + test
    limits = [min(r["seconds"] for r in everything) * 0.7, max(r["seconds"] for r in everything) * 1.4]
    for axis, constants, title in ((axes[0], before, "before (previous remote constants)"),
                                   (axes[1], after, "after (fitted remote constants)")):
        for records, label, marker in ((train, "training", "o"), (test, "held back", "^")):
            for placement, colour in (("all-postgres", "tab:blue"), ("federated3", "tab:orange")):
                chosen = [r for r in records if r["placement"] == placement]
                if chosen:
                    axis.scatter([r["seconds"] for r in chosen], [predict(r, constants) for r in chosen],
                                 marker=marker, color=colour, alpha=0.75,
                                 label=f"{label}, {'PostgreSQL' if placement == 'all-postgres' else 'MariaDB'}")
        axis.plot(limits, limits, color="grey", linewidth=0.8)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("measured seconds (Spark reading JDBC)")
        axis.set_title(title)
    axes[0].set_ylabel("predicted cost (seconds)")
    axes[1].legend(fontsize=8)
    figure.suptitle("cbo remote cost calibration (pushed queries and JDBC reads)")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def calibrate_remote(args: argparse.Namespace) -> int:
    from benchmarks.tpch.run import ensure_statistics
    from cbo.app.session import Session
    from cbo.sources.catalog import load_catalog
    from cbo.workloads import tpch

    catalogs = tpch.prepare(args.sf, postgres="local", mariadb="local", progress=say)
    profile_path = args.profile or PROFILE_DIR / "spark.json"
    base = CostProfile.load(profile_path) if profile_path.exists() else CostProfile()
    before = dict(base.constants)
    sessions = {}
    for placement in ("all-postgres", "federated3"):
        ensure_statistics(catalogs[placement])
        session = Session(load_catalog(catalogs[placement]))
        # Plans are chosen with the profile being refitted, whatever $CBO_COST_PROFILE says.
        session.planner.base_profile = base
        sessions[placement] = session
    train_items, test_items = training(), held_back()
    if args.limit:
        train_items, test_items = train_items[: args.limit], test_items[: args.limit]
    if not args.plan_only:
        sessions["all-postgres"].query("select count(*) from region")   # start Spark before timing
    train = measure(sessions, train_items, args.repeat, "training", args.plan_only)
    test = measure(sessions, test_items, args.repeat, "held back", args.plan_only)
    if args.plan_only:
        for record in train + test:
            shown = {k: f"{v:.3g}" for k, v in record["quantities"].items() if k in REMOTE}
            print(f"{record['name']:<30} {record['remote_queries']} remote  {shown}  "
                  f"predicted {predict(record, before):.3f} s")
        return 0
    constants, report = fit(train, before)
    report["held_back_queries"] = len(test)
    report["spearman_before"] = spearman(test, before)
    report["spearman_fitted"] = spearman(test, constants)
    report["spearman_training_fitted"] = spearman(train, constants)
    report["scale_factor"] = args.sf
    report["repeat"] = args.repeat

    print_fit(REMOTE, before, constants, report, "before", "spearman_before")

    fit_report = dict(base.fit, remote=report)
    profile = CostProfile(engine=base.engine, constants=constants, source=str(profile_path), fit=fit_report,
                          executors=base.executors, cores=base.cores, task_memory_bytes=base.task_memory_bytes,
                          target_partition_bytes=base.target_partition_bytes, max_partitions=base.max_partitions)
    profile.save(profile_path)
    say(f"wrote profile {profile_path}")
    out = args.out or RESULTS / "calibration-remote.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    body = {"benchmark": "calibration-remote", "machine": machine_info(), "report": report,
            "constants": {n: constants[n] for n in REMOTE}, "before": {n: before[n] for n in REMOTE},
            "training": train, "held_back": test}
    temporary = out.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(body, indent=2))
    temporary.replace(out)
    plot(train, test, before, constants, out.with_suffix(".png"))
    say(f"saved {out} and {out.with_suffix('.png')}")
    return 0
