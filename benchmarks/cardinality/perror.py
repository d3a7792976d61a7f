"""P-error per TPC-H query: ``python -m benchmarks.cardinality.perror --sf 1 --out FILE``.

For every TPC-H query, the plan chosen with each system's cardinalities is costed with the
true rows of its operators and divided by the cost of the plan chosen with true rows (Han et
al.'s P-error, ``cbo.perror``). True rows are counted with DuckDB (``cardinalities=oracle``).
The systems (``--systems``):

* ``cbo``: cbo's own estimates from its statistics (``cbo analyze``, collected where missing);
* ``postgres``: PostgreSQL's EXPLAIN estimates of every sub-plan through the plug-in
  (``cbo.plugins.postgres``), asked of cbo's local PostgreSQL loaded with the same data;
* ``samples``: the sampling plug-in over the stored row samples (``cbo.plugins.samples``);
* ``oracle*lognormal:SIGMA``: true rows distorted by ``exp(N(0, SIGMA))`` per sub-plan
  (``cardinality_distortion``), for each seed of ``--seeds``; the table shows their median.

Beside each query the table shows the q-error of the root and the worst q-error among cbo's
chosen plan's operators, and, when ``--runtime`` names a saved ``benchmarks.tpch.run`` result
with the ``cbo`` and ``cbo-oracle`` configurations, the measured runtime ratio cbo / cbo-oracle
on Spark (this benchmark runs nothing on Spark and times nothing; take a fresh runtime result
on a quiet machine with ``python -m benchmarks.tpch.run --sf 1 --configs cbo,cbo-oracle``).

Plans are costed by cbo's cost model (predicted seconds on Spark); nothing is timed here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from benchmarks.machine import machine_info
from cbo.app.progress import say, step

DEFAULT_SYSTEMS = "cbo,postgres,samples,oracle*lognormal:1,oracle*lognormal:2"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cardinality.perror",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0, help="TPC-H scale factor (default 1)")
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--systems", default=DEFAULT_SYSTEMS, help=f"comma-separated (default {DEFAULT_SYSTEMS})")
    parser.add_argument("--seeds", default="1,2,3", help="seeds of each distortion (default 1,2,3)")
    parser.add_argument("--queries", help="comma-separated subset, e.g. q03,q05 (default: all 22)")
    parser.add_argument("--runtime", type=Path, default=None,
                        help="a benchmarks.tpch.run JSON with cbo and cbo-oracle times (default: the saved "
                             "tpch-run-all-spark-sf<SF>.json when it exists)")
    args = parser.parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    for system in systems:
        if system not in ("cbo", "postgres", "samples") and not system.startswith("oracle*"):
            parser.error(f"unknown system {system!r}")

    from benchmarks.tpch.queries import all_queries
    from cbo.estimate import Estimator
    from cbo.planner import Planner
    from cbo.settings import OptimizerSettings
    from cbo.sources.catalog import load_catalog
    from cbo.sources.statistics import analyze, load_all
    from cbo.workloads import tpch

    queries = [(q.name, q.sql) for q in all_queries()]
    if args.queries:
        wanted = {name.strip() for name in args.queries.split(",")}
        queries = [(n, s) for n, s in queries if n in wanted]
    need_postgres = "postgres" in systems
    with step(f"TPC-H sf {args.sf:g}: data{', PostgreSQL' if need_postgres else ''} and catalogs"):
        catalogs = tpch.prepare(args.sf, postgres="local" if need_postgres else None, progress=say)
    catalog = load_catalog(catalogs["all-spark"])
    with step("cbo statistics (collected where missing)"):
        analyze(catalog, progress=say)
        stats, problems = load_all(catalog)
        for problem in problems:
            say(problem)
    estimator = Estimator(stats)
    base = Planner(catalog, statistics=estimator)
    truth = base.oracle()
    truth_planner = base.with_true_cardinalities()
    planners: dict[str, list[Planner]] = {}
    plugins: list[Any] = []
    for system in systems:
        if system == "cbo":
            planners[system] = [base]
        elif system == "postgres":
            from cbo.plugins.postgres import PostgresEstimates

            plugin = PostgresEstimates(catalogs["all-postgres"])
            plugins.append(plugin)
            planners[system] = [Planner(catalog, estimator=plugin, statistics=estimator)]
        elif system == "samples":
            from cbo.plugins.samples import SampleEstimates

            plugin = SampleEstimates(stats)
            plugins.append(plugin)
            planners[system] = [Planner(catalog, estimator=plugin, statistics=estimator)]
        else:
            distortion = system.split("*", 1)[1]
            planners[system] = []
            for seed in seeds:
                settings = OptimizerSettings().with_values({"cardinalities": "oracle",
                                                            "cardinality_distortion": f"{distortion}:{seed}"})
                planner = Planner(catalog, statistics=estimator, settings=settings)
                planner.use_oracle(truth)   # the counts are shared: each sub-plan is counted once
                planners[system].append(planner)
    runtime = _runtimes(args.runtime, args.sf)

    from cbo.perror import p_error

    records = []
    for index, (name, sql) in enumerate(queries, start=1):
        say(f"[{index}/{len(queries)}] {name}")
        optimal = truth_planner.plan(sql)
        record: dict[str, Any] = {"query": name, "optimal_cost": None}
        for system, group in planners.items():
            found = []
            for planner in group:
                try:
                    chosen = planner.plan(sql)
                    result = p_error(chosen, optimal, truth.true_rows)
                except Exception as exc:  # noqa: BLE001 - one system failing must not stop the others
                    record[f"{system}_error"] = str(exc).splitlines()[0][:200]
                    continue
                found.append(result)
                record["optimal_cost"] = result.optimal_cost
                if system == "cbo":
                    root = chosen.physical
                    true_root = max(truth.true_rows(root.logical), 1)
                    record["cbo_root_q_error"] = max(max(root.rows, 1) / true_root, true_root / max(root.rows, 1))
                if chosen.coverage is not None and system in ("postgres", "samples"):
                    record[f"{system}_coverage"] = {"injected": chosen.coverage.injected,
                                                    "fell_back": chosen.coverage.fell_back}
            if found:
                record[system] = statistics.median(r.p_error for r in found)
                record[f"{system}_runs"] = [r.to_json() for r in found]
        if name in runtime:
            record["runtime_cbo_over_oracle"] = runtime[name]
        records.append(record)
    for plugin in plugins:
        plugin.close()

    summary = {system: _summary([r[system] for r in records if r.get(system) is not None]) for system in systems}
    document = {"benchmark": "perror", "workload": "tpch", "sf": args.sf, "systems": systems, "seeds": seeds,
                "machine": machine_info(), "runtime_source": str(args.runtime) if args.runtime else
                (str(_default_runtime(args.sf)) if runtime else None),
                "records": records, "summary": summary,
                "postgres_failures": [f for p in plugins for f in getattr(p, "failures", [])]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    temporary = args.out.with_suffix(".tmp")
    temporary.write_text(json.dumps(document, indent=1, default=str))
    temporary.replace(args.out)
    print(markdown(records, systems, args.sf))
    print(f"\nsaved {args.out}")
    return 0


def _summary(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return {"median": statistics.median(ordered), "p90": p90,
            "max": ordered[-1], "geomean": statistics.geometric_mean(ordered),
            "above_1_01": sum(1 for v in ordered if v > 1.01)}


def _default_runtime(sf: float) -> Path:
    return Path(__file__).resolve().parents[1] / "results" / f"tpch-run-all-spark-sf{sf:g}.json"


def _runtimes(path: Path | None, sf: float) -> dict[str, float]:
    """Query -> measured seconds of cbo / cbo-oracle, from a saved ``benchmarks.tpch.run``."""
    source = path or _default_runtime(sf)
    if not source.exists():
        if path is not None:
            raise SystemExit(f"--runtime {path}: no such file")
        return {}
    body = json.loads(source.read_text())
    found = {}
    for query in body.get("queries", []):
        seconds = query.get("seconds", {})
        if seconds.get("cbo") and seconds.get("cbo-oracle"):
            found[query["query"]] = seconds["cbo"] / seconds["cbo-oracle"]
    return found


def markdown(records: list[dict[str, Any]], systems: list[str], sf: float) -> str:
    header = ["query", *[f"P-error {s}" for s in systems], "q-error cbo root", "q-error cbo max",
              "runtime cbo / cbo-oracle"]
    lines = [f"TPC-H SF {sf:g}: P-error per query (1 = as cheap as the plan chosen with true rows)", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for record in records:
        cells = [record["query"]]
        for system in systems:
            value = record.get(system)
            cells.append(f"{value:.3f}" if value is not None else "error")
        runs = record.get("cbo_runs") or [{}]
        cells.append(f"{record['cbo_root_q_error']:.2f}" if "cbo_root_q_error" in record else "")
        cells.append(f"{runs[0]['q_error_max']:.1f}" if "q_error_max" in runs[0] else "")
        ratio = record.get("runtime_cbo_over_oracle")
        cells.append(f"{ratio:.3f}" if ratio is not None else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
