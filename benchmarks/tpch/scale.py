"""The scale curve of ``benchmarks.tpch.run --sf 1,3,10``: time against scale factor, per configuration.

Also where a run's Spark runs (``--master``): ``cluster`` is cbo's local standalone cluster
(``cbo.engines.spark_cluster``, ``cbo spark start``'s), started when it is not running and stopped
at the end if this run started it; a ``spark://`` URL is a cluster someone else runs.

The curve (``save``) gives per scale factor and configuration the seconds summed over the queries
timed at every scale factor, the geometric mean of each run, and the growth: the slope of
log(seconds) against log(scale factor), fitted over the scale factors (1.0 is linear growth).
Per query it gives both configurations' slopes and their difference, largest first: the queries
whose cost grows differently under cbo's plan and Spark's.

    python -m benchmarks.tpch.scale benchmarks/results/tpch-run-all-spark-cluster-sf1.json ...-sf3.json

draws the curve from runs saved separately (one ``benchmarks.tpch.run`` per scale factor).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from cbo.app.progress import say
from cbo.sources.catalog import Catalog

EXECUTOR_MEMORY_MB = 3072
DRIVER_MEMORY = "4g"   # the driver collects broadcast build sides: Spark's 1g default is too small at SF 10


@dataclass(frozen=True)
class Master:
    name: str              # in file names: cluster, or spark for a URL given
    url: str
    executor_memory: str | None = None


@contextmanager
def spark_master(argument: str | None) -> Iterator[Master | None]:
    """The master ``--master`` names (None: the catalog's own, local mode)."""
    if not argument or argument == "local":
        yield None
        return
    if argument.startswith("spark://"):
        yield Master("spark", argument)
        return
    if argument != "cluster":
        from cbo.errors import CboError

        raise CboError(f"--master {argument!r}: expected cluster or a spark:// URL")
    from cbo.engines.spark import stop_session
    from cbo.engines.spark_cluster import LocalSparkCluster

    cluster = LocalSparkCluster()
    running = cluster.status() is not None
    info = cluster.start()
    say(f"Spark cluster {info.url}: {len(info.worker_pids)} workers of {info.worker_cores} cores and "
        f"{info.worker_memory_mb} MB ({'running already' if running else 'started'})")
    # An executor per worker, taking most of its memory (the rest is the JVM's overhead), at most
    # EXECUTOR_MEMORY_MB: a task of one core needs no more at SF 10, and the machine is shared.
    try:
        yield Master("cluster", info.url, f"{min(EXECUTOR_MEMORY_MB, int(info.worker_memory_mb * 0.8))}m")
    finally:
        stop_session()
        if not running:
            cluster.stop()
            say("Spark cluster stopped")


def on_master(catalog: Catalog, master: Master | None) -> Catalog:
    """The catalog with its Spark on ``master`` (the same statistics: they are kept by catalog file)."""
    if master is None:
        return catalog
    spark = replace(catalog.spark, master=master.url, driver_memory=catalog.spark.driver_memory or DRIVER_MEMORY,
                    executor_memory=catalog.spark.executor_memory or master.executor_memory)
    return replace(catalog, spark=spark)


def data_bytes(catalog: Catalog) -> int:
    """The bytes of the catalog's table files (Parquet)."""
    total = 0
    for table in catalog.tables():
        if table.path is None or not table.path.exists():
            continue
        files = [table.path] if table.path.is_file() else [p for p in table.path.rglob("*") if p.is_file()]
        total += sum(p.stat().st_size for p in files)
    return total


def run_facts(session: Any, catalog_path: Path, master: Master | None) -> dict[str, Any]:
    """What a run's report says about where it ran and what cbo costed for."""
    from cbo.cost.cluster import describe_profile
    from cbo.sources.catalog import load_catalog

    shape = session.planner.cluster
    return {"master": master.url if master else "local", "cluster": shape.describe() if shape else "local mode",
            "cluster_shape": asdict(shape) if shape else None,
            "cost_profile": describe_profile(session.planner.profile()),
            "data_bytes": data_bytes(load_catalog(catalog_path))}


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log(seconds) against log(scale factor)."""
    points = [(math.log(sf), math.log(t)) for sf, t in points if t and t > 0]
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread else None


def _geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def curve(reports: list[dict]) -> dict[str, Any]:
    reports = sorted(reports, key=lambda r: r["scale_factor"])
    configs = reports[0]["configs"]
    # Totals over the queries every scale factor timed in every configuration, so that the
    # points add up the same work (a run may have timed fewer queries at a larger scale factor).
    common = set.intersection(*({q["query"] for q in r["queries"] if all(c in q["seconds"] for c in configs)}
                                for r in reports))
    points = []
    for report in reports:
        seconds = {c: [q["seconds"][c] for q in report["queries"] if q["query"] in common] for c in configs}
        points.append({"scale_factor": report["scale_factor"], "data_bytes": report.get("data_bytes"),
                       "total_seconds": {c: round(sum(v), 3) for c, v in seconds.items()},
                       "geomean_seconds": {c: _geomean(v) for c, v in seconds.items()},
                       "queries_timed": {c: len(v) for c, v in seconds.items()},
                       "cbo_vs_spark_default": _geomean([q["seconds"]["cbo"] / q["seconds"]["spark-default"]
                                                         for q in report["queries"] if q["query"] in common])
                       if {"cbo", "spark-default"} <= set(configs) else None,
                       "all_answers_match": report["summary"]["all_answers_match"]})
    growth = {c: slope([(p["scale_factor"], p["total_seconds"][c]) for p in points]) for c in configs}
    per_query: dict[str, dict[str, Any]] = {}
    for report in reports:
        for q in report["queries"]:
            entry = per_query.setdefault(q["query"], {"seconds": {c: {} for c in configs}})
            for c, value in q["seconds"].items():
                entry["seconds"][c][f"{report['scale_factor']:g}"] = value
    for entry in per_query.values():
        entry["growth"] = {c: slope([(float(sf), t) for sf, t in entry["seconds"][c].items()]) for c in configs}
    differs = []
    if "cbo" in configs and "spark-default" in configs:
        for name, entry in per_query.items():
            a, b = entry["growth"]["cbo"], entry["growth"]["spark-default"]
            if a is not None and b is not None:
                differs.append({"query": name, "cbo_growth": round(a, 3), "spark_default_growth": round(b, 3),
                                "difference": round(a - b, 3)})
        differs.sort(key=lambda d: -abs(d["difference"]))
    return {"benchmark": "tpch-scale", "placement": reports[0]["placement"], "master": reports[0].get("master"),
            "cluster": reports[0].get("cluster"), "cost_profile": reports[0].get("cost_profile"),
            "configs": configs, "repeat": reports[0]["repeat"], "machine": reports[0]["machine"],
            "summed_queries": sorted(common),
            "points": points, "growth": growth, "growth_differs_most": differs, "queries": per_query}


def save(reports: list[dict], results: Path) -> Path:
    body = curve(reports)
    where = "cluster" if body["master"] not in (None, "local") else "local"
    out = results / f"tpch-scale-{body['placement']}-{where}.json"
    temporary = out.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(body, indent=2, default=str))
    temporary.replace(out)
    plot(body, out.with_suffix(".png"))
    print_curve(body)
    say(f"saved {out} and {out.with_suffix('.png')}")
    return out


def print_curve(body: dict) -> None:
    configs = body["configs"]
    print(f"{'SF':>6} {'data MB':>9}" + "".join(f"{c + ' s':>20}" for c in configs))
    for p in body["points"]:
        size = f"{p['data_bytes'] / 2**20:9.0f}" if p.get("data_bytes") else f"{'?':>9}"
        print(f"{p['scale_factor']:>6g} {size}" + "".join(f"{p['total_seconds'][c]:>20.1f}" for c in configs))
    print("growth (slope of log seconds on log SF; 1 = linear): "
          + ", ".join(f"{c} {g:.2f}" for c, g in body["growth"].items() if g is not None))
    for d in body["growth_differs_most"][:5]:
        print(f"  {d['query']}: cbo {d['cbo_growth']:.2f}, spark-default {d['spark_default_growth']:.2f}")


def plot(body: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from benchmarks.tpch.plot_run import COLORS

    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    sfs = [p["scale_factor"] for p in body["points"]]
    for config in body["configs"]:
        left.plot(sfs, [p["total_seconds"][config] for p in body["points"]], marker="o", label=config,
                  color=COLORS.get(config))
    left.plot(sfs, [body["points"][0]["total_seconds"][body["configs"][0]] * sf / sfs[0] for sf in sfs],
              color="grey", linestyle=":", linewidth=0.8, label="linear in SF")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xticks(sfs, [f"{sf:g}" for sf in sfs])
    left.set_xlabel("TPC-H scale factor")
    left.set_ylabel(f"seconds, {len(body['summed_queries'])} queries summed (best of runs)")
    left.set_title(f"TPC-H, {body['placement']}, on {str(body['cluster']).split(' on ')[0]}")
    left.legend()
    if "cbo" in body["configs"] and "spark-default" in body["configs"]:
        for entry in body["queries"].values():
            ratios = [(float(sf), t / entry["seconds"]["spark-default"][sf])
                      for sf, t in entry["seconds"]["cbo"].items() if entry["seconds"]["spark-default"].get(sf)]
            if ratios:
                right.plot([r[0] for r in ratios], [r[1] for r in ratios], color="#c0392b", alpha=0.25, marker=".")
        right.plot(sfs, [p["cbo_vs_spark_default"] for p in body["points"]], color="#c0392b", linewidth=2.5,
                   marker="o", label="geometric mean")
        right.axhline(1.0, color="grey", linewidth=0.8)
        right.set_xscale("log")
        right.set_yscale("log")
        right.set_xticks(sfs, [f"{sf:g}" for sf in sfs])
        right.set_xlabel("TPC-H scale factor")
        right.set_ylabel("cbo / spark-default, per query")
        right.set_title("below 1: cbo's plan is faster")
        right.legend()
    figure.tight_layout()
    figure.savefig(out, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    import sys

    paths = [Path(p) for p in (argv if argv is not None else sys.argv[1:])]
    if len(paths) < 2:
        print("usage: python -m benchmarks.tpch.scale RUN.json RUN.json ... (runs of benchmarks.tpch.run)",
              file=sys.stderr)
        return 2
    save([json.loads(p.read_text()) for p in paths], paths[0].parent)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
