"""The q-error harness: ``python -m benchmarks.cardinality --workload tpch|tpcds|stats|stats2 [--sf X] --out FILE``.

For every query of the workload, every sub-plan (``subplans``) is counted in DuckDB and
estimated by cbo, PostgreSQL, DuckDB and (with ``--systems ...,spark``) Spark. Prints
median / p90 / p95 / max q-error per system and per join count, saves all records and the
summary as JSON, and draws box plots next to it (same name, ``.png``). The sub-plan that joins
all of a query's relations is the whole query: it is summarized apart too (``whole``). cbo's
statistics are collected first if missing (``cbo analyze`` on the Parquet catalog).

The workloads are the workload runner's (``cbo.app.workload.registry``, as ``cbo workload run``
names them): ``stats`` is the first generated STATS workload (``cbo.workloads.stats_queries``),
``stats2`` the second (``stats_queries2``: other seed and templates, foreign keys meeting at
shared keys), kept as the check of estimates tuned on the first. ``tpcds`` is the 99 TPC-DS
queries at ``--sf`` (DuckDB's text, read in its dialect). The JSON carries the runner's
manifest (``manifest``: commit, package versions, settings, statistics' fingerprints, machine).

Limits (``limits`` in the JSON): each true count has ``--time-limit`` seconds; a query keeps at
most ``--max-subplans`` of its sub-plans (``subplans.spread``: the whole query and an even
spread of the rest), and a join region of more than ``subplans.MAX_RELATIONS`` relations is not
enumerated. TPC-DS's defaults are 10 s and 50 sub-plans (its 99 queries hold over 2,000
sub-plans, some joining fact tables to one another); the others count everything, 60 s each.
Nothing stops the run: a query cbo does not plan, a region left out and a query cut to its
limit are listed (``left_out``, ``enumeration``), a sub-plan DuckDB does not count in time or
at all is listed in ``skipped``, and a system that gives no estimate has its reason in the
record (``<system>_error``). Each system's summary counts the sub-plans it estimated;
``same_subplans`` summarizes the sub-plans every system estimated, the fair comparison when a
system refused some.
"""

from __future__ import annotations

import argparse
import json
import statistics as pystats
import sys
import time
from pathlib import Path

from benchmarks.cardinality import report
from benchmarks.cardinality.duck import TimedOut
from benchmarks.cardinality.subplans import MAX_RELATIONS, SubPlan, spread, subplans, too_wide
from benchmarks.cardinality.systems import CboSystem, DuckDBSystem, PostgresSystem, SparkSystem, Truth
from benchmarks.machine import machine_info
from cbo.app.progress import say, step
from cbo.app.session import Session
from cbo.app.workload import manifest as manifests
from cbo.errors import CboError
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog

WORKLOAD_NAMES = ("tpch", "tpcds", "stats", "stats2")
SCALED = ("tpch", "tpcds")            # the workloads --sf scales
# per workload: (seconds per true count, sub-plans per query); the default is (60 s, all)
LIMITS: dict[str, tuple[float, int | None]] = {"tpcds": (10.0, 50)}
DEFAULT_LIMITS: tuple[float, int | None] = (60.0, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cardinality", description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=WORKLOAD_NAMES, required=True)
    parser.add_argument("--sf", type=float, default=1.0, help="TPC-H and TPC-DS scale factor (default 1)")
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write (a .png is drawn beside it)")
    parser.add_argument("--systems", default="cbo,postgres,duckdb",
                        help="comma-separated: cbo,cbo_upper (pessimistic mode),postgres,duckdb,spark "
                             "(default: cbo,postgres,duckdb)")
    parser.add_argument("--queries", type=int, default=200, help="STATS: number of generated queries (default 200)")
    parser.add_argument("--seed", type=int, default=None, help="STATS: generator seed")
    parser.add_argument("--only", default=None, help="comma-separated subset of the queries by name, e.g. q03,q07 "
                                                     "(default: all)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds per true count (default 60; tpcds: 10)")
    parser.add_argument("--max-subplans", type=int, default=None,
                        help="sub-plans kept per query, the whole query among them (default: all; tpcds: 50)")
    parser.add_argument("--true-counts-from", type=Path, default=None,
                        help="a JSON this harness saved: its true counts are reused for the same sub-plans "
                             "(same SQL), so a run that re-times the estimates counts only what is new")
    args = parser.parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = set(systems) - set(report.SYSTEMS)
    if unknown:
        parser.error(f"unknown system(s): {', '.join(sorted(unknown))}")
    default_time, default_cap = LIMITS.get(args.workload, DEFAULT_LIMITS)
    time_limit = default_time if args.time_limit is None else args.time_limit
    cap = default_cap if args.max_subplans is None else args.max_subplans
    if time_limit <= 0:
        parser.error(f"--time-limit must be positive, got {time_limit:g}")
    if cap is not None and cap < 1:
        parser.error(f"--max-subplans must be at least 1, got {cap}")
    limits = {"time_limit_s": time_limit, "max_subplans_per_query": cap, "max_relations_per_region": MAX_RELATIONS}

    queries, spark_catalog, pg_catalog, title, workload = _workload(args)
    with step("cbo statistics (collected where missing)"):
        from cbo.sources.statistics import analyze, load_all

        analyze(spark_catalog, progress=say)
        stats, problems = load_all(spark_catalog)
        for problem in problems:
            say(problem)
    with step("loading DuckDB tables for true counts"):
        known = {}
        if args.true_counts_from is not None:
            earlier = json.loads(args.true_counts_from.read_text())
            known = {r["sql_digest"]: r["true"] for r in earlier["records"] if "sql_digest" in r}
            say(f"{len(known)} true counts reused from {args.true_counts_from}")
        truth = Truth(spark_catalog, time_limit, known)
    estimators = []
    if "cbo" in systems:
        estimators.append(CboSystem(stats))
    if "cbo_upper" in systems:
        estimators.append(CboSystem(stats, upper=True))
    if "postgres" in systems:
        estimators.append(PostgresSystem(pg_catalog))
    if "duckdb" in systems:
        estimators.append(DuckDBSystem(truth))
    if "spark" in systems:
        with step("Spark tables and ANALYZE"):
            estimators.append(SparkSystem(spark_catalog, say))

    planner = Planner(spark_catalog, workload.dialect)
    records: list[dict] = []
    skipped: list[dict] = []
    left_out: list[dict] = []
    enumeration: list[dict] = []
    started = time.perf_counter()
    for index, (name, sql) in enumerate(queries, start=1):
        try:
            plan = planner.plan(sql).plan
            found = subplans(plan)
            wide = too_wide(plan)
        except Exception as exc:  # noqa: BLE001 - a query cbo does not plan is recorded, the run goes on
            left_out.append({"query": name, "reason": _first_line(exc)})
            say(f"[{index}/{len(queries)}] {name}: not planned ({_first_line(exc)})")
            continue
        for relations in wide:
            left_out.append({"query": name, "relations": list(relations),
                            "reason": f"a join region of {len(relations)} relations, over {MAX_RELATIONS}: "
                                      "its sub-plans are not enumerated"})
        kept = spread(found, cap)
        say(f"[{index}/{len(queries)}] {name}: {len(found)} sub-plans"
            + (f", {len(kept)} kept" if len(kept) < len(found) else ""))
        widest = max((sub.joins for sub in found), default=-1)
        counting = time.perf_counter()
        for sub in kept:
            record = measure(name, sub, widest, truth, estimators, skipped)
            if record is not None:
                records.append(record)
        # where a run's time went (true counts mostly); a progress figure, not a measurement
        enumeration.append({"query": name, "found": len(found), "kept": len(kept),
                            "seconds": round(time.perf_counter() - counting, 2)})
    elapsed = time.perf_counter() - started

    summary = report.summarize(records)
    compared = [system.name for system in estimators]
    same = report.on_the_same(records, compared)
    timings = [r["cbo_ms"] for r in records if "cbo_ms" in r]
    cold = [r["cbo_cold_ms"] for r in records if "cbo_cold_ms" in r]
    cpu = [r["cbo_cpu_ms"] for r in records if "cbo_cpu_ms" in r]
    document = {"workload": args.workload, "sf": args.sf if args.workload in SCALED else None,
                "machine": machine_info(), "dialect": workload.dialect,
                "queries": [{"name": n, "sql": s} for n, s in queries], "limits": limits,
                "manifest": manifests.manifest({"workload": args.workload, "options": workload.options.to_json(),
                                                "facts": workload.facts, "systems": systems,
                                                "queries": [{"name": q.name, "digest": q.digest}
                                                            for q in workload.queries]},
                                               spark_catalog, {"cbo": Session(spark_catalog)}),
                "records": records, "skipped": skipped, "left_out": left_out, "enumeration": enumeration,
                "summary": summary, "same_subplans": {"systems": compared, "n": len(same),
                                                      "summary": report.summarize(same)},
                "elapsed_s": elapsed,
                "cbo_estimate_ms": {"median": pystats.median(timings), "p95": _p95(timings), "max": max(timings),
                                    "cpu_median": pystats.median(cpu), "cpu_p95": _p95(cpu),
                                    "first_time_median": pystats.median(cold), "first_time_p95": _p95(cold)}
                if timings else None}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    temporary = args.out.with_suffix(".tmp")
    temporary.write_text(json.dumps(document, indent=1, default=str))
    temporary.replace(args.out)
    picture = report.plot(records, args.out.with_suffix(".png"), title)
    print(report.markdown(summary, title))
    if len(same) < len(records):
        print()
        print(report.markdown(document["same_subplans"]["summary"],
                              f"the {len(same)} of {len(records)} sub-plans every system estimated"))
    if timings:
        print(f"\ncbo: one sub-plan estimated in {pystats.median(timings):.2f} ms (median), "
              f"{_p95(timings):.2f} ms (p95), {max(timings):.1f} ms (max) with statistics loaded "
              f"(CPU time: median {pystats.median(cpu):.2f} ms, p95 {_p95(cpu):.2f} ms); "
              f"{pystats.median(cold):.2f} ms (median) the first time (samples read, join indexes built)")
    cut = [e for e in enumeration if e["kept"] < e["found"]]
    print(f"{len(records)} sub-plans of {len(queries)} queries; "
          f"{len(skipped)} skipped (true count failed or timed out after {time_limit:g} s); "
          f"{len(left_out)} queries or regions not enumerated; {len(cut)} queries cut to {cap} sub-plans")
    print(f"saved {args.out} and {picture}")
    return 0


def measure(query: str, sub: SubPlan, widest: int, truth: Truth, estimators: list, skipped: list[dict]) -> dict | None:
    """One sub-plan's record: its true count and each system's estimate, or the reason a
    system gave none (``<system>_error``); None, with the reason added to ``skipped``, when
    DuckDB does not count it."""
    try:
        true = truth.count(sub.plan)
    except Exception as exc:  # noqa: BLE001 - a timeout or an engine error skips the sub-plan
        reason = f"timed out after {truth.time_limit:g} s" if isinstance(exc, TimedOut) else _first_line(exc)
        skipped.append({"query": query, "relations": list(sub.relations), "reason": type(exc).__name__,
                        "message": reason})
        return None
    record: dict = {"query": query, "relations": list(sub.relations), "joins": sub.joins, "true": true,
                    "whole": sub.joins == widest, "sql_digest": truth.digest(sub.plan)}
    for system in estimators:
        try:
            record[system.name] = system.estimate(sub.plan)
            if record[system.name] is None:
                record[f"{system.name}_error"] = "no estimate given"
        except Exception as exc:  # noqa: BLE001 - one system failing must not stop the others
            record[system.name] = None
            record[f"{system.name}_error"] = _first_line(exc)
        if isinstance(system, CboSystem) and system.name == "cbo":
            record["cbo_ms"] = system.last_ms
            record["cbo_cpu_ms"] = system.last_cpu_ms
            record["cbo_cold_ms"] = system.last_cold_ms
            if system.last_notes:
                record["cbo_notes"] = system.last_notes
    return record


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def _workload(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The workload from the runner's registry (``cbo workload list``), its data in Parquet and
    in PostgreSQL: the queries, the Parquet catalog, the PostgreSQL catalog, the plot's title."""
    from cbo.app.workload.registry import WORKLOADS
    from cbo.app.workload.workloads import WorkloadOptions

    options = WorkloadOptions(sf=args.sf, placement="all-postgres", count=args.queries, seed=args.seed)
    with step(f"{args.workload}: data, PostgreSQL, catalogs and queries"):
        workload = WORKLOADS[args.workload].load(options, say)
    if args.only:
        try:
            workload = workload.select([n for n in args.only.split(",") if n.strip()])
        except CboError as exc:
            raise SystemExit(f"python -m benchmarks.cardinality: --only: {exc}") from None
    queries = [(q.name, q.sql) for q in workload.queries]
    titles = {"tpch": f"TPC-H SF {args.sf:g}", "tpcds": f"TPC-DS SF {args.sf:g}", "stats": "STATS",
              "stats2": "STATS (second workload)"}
    return (queries, load_catalog(workload.catalogs["all-spark"]), load_catalog(workload.catalogs["all-postgres"]),
            f"{titles[args.workload]}: q-error of every sub-plan", workload)


if __name__ == "__main__":
    sys.exit(main())
