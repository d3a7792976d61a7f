"""End to end: TPC-H through cbo on Spark against Spark's own optimizer, in one run.

    python -m benchmarks.tpch.run --sf 1 --placement all-spark
    python -m benchmarks.tpch.run --sf 0.1 --queries q3,q5 --repeat 1
    python -m benchmarks.tpch.run --sf 1 --placement all-postgres --postgres-timeout 300

The configurations run every query on the same Spark session, interleaved query by query
(so a slow phase of the machine hits all of them alike):

* ``cbo``: cbo's plan with its own estimates, run as chosen (``cbo.exec.spark_exec``: join
  order, strategies and partition count fixed; adaptive execution kept to the parts that leave
  them so, ``spark_adaptive``). Its time includes
  cbo's planning (parse, search) as Spark's includes its own. JDBC pushdown as cost decides
  (``join_pushdown_strategy`` AUTOMATIC, the default).
* ``cbo-eager`` / ``cbo-local``: cbo with ``join_pushdown_strategy`` = ``eager`` (push whenever
  possible) / ``none`` (nothing beyond one table's filter and projection). A cbo without that
  setting stops the run with an error naming it rather than timing the same plan twice.
* ``cbo-oracle``: cbo's plan with true cardinalities (``cardinalities=oracle``, counted with
  DuckDB before timing); the time is execution only.
* ``spark-default``: the query text through Spark SQL with Spark's defaults (adaptive execution
  on, its CBO off): over catalog tables in database ``tpch_plain`` (all-spark), or over views
  of Spark's JDBC reader per table (placements with JDBC sources; Spark pushes one table's
  filters and columns).
* ``spark-cbo`` (all-spark only): Spark with ``spark.sql.cbo.enabled`` and
  ``spark.sql.cbo.joinReorder.enabled`` over tables in ``tpch_analyzed`` after ``ANALYZE TABLE
  ... COMPUTE STATISTICS FOR ALL COLUMNS`` with histograms; the ANALYZE time is reported, not
  counted per query.
* ``spark-dsv2`` (placements with JDBC sources): the tables through Spark 4.3's DSv2
  ``JDBCTableCatalog``, one catalog per source, with ``spark.sql.optimizer.datasourceV2JoinPushdown``
  and the catalog's ``pushDownAggregate``/``pushDownLimit``/``pushDownOffset``/``pushDownJoin``
  on: Spark's own join, aggregate and top-N pushdown.
* ``postgres`` (all-postgres only): the query run on the PostgreSQL server itself, cancelled
  after ``--postgres-timeout`` seconds (default 300, ``statement_timeout``). A cancelled query is
  recorded as a timeout (``timeouts`` in the JSON), never as a time, so it stays out of the
  geometric means; it is not run again in later rounds.

The default configurations are ``cbo,cbo-oracle,spark-default,spark-cbo`` for all-spark and
``cbo,cbo-eager,cbo-local,spark-default,spark-dsv2`` (plus ``postgres`` for all-postgres)
otherwise. Placements other than all-spark use cbo's local PostgreSQL (``--postgres``) and, for
federated3, its local MariaDB (``--mariadb``), loading the data there if needed.

cbo plans from its statistics: before anything runs, the benchmark collects those that are
missing or stale (``cbo analyze``, skipping fresh ones, with progress per table), so cbo is
never compared while planning from default estimates. The JSON says what was collected.

The timing rules are the workload runner's (``cbo.app.workload.timing``, the same for ``cbo
workload run``): one cold run of the first configuration of the query's order, never kept;
an untimed warm-up of every configuration; then ``--repeat`` rounds (default 3), more for a
short query (as many as its warm-up round fits in ``--budget`` seconds, default 15, at most
``--max-rounds``, default 9), in an order rotated from round to round and reversed every other
round, starting at the query's number; the fastest time counts. With ``--long-warm-up S``,
when every configuration's warm-up of a query took more than S seconds those runs are kept as
the times (``warm_up_kept``). Each query's ``order`` and ``cold_run_s`` are in the JSON. Every
answer is compared with DuckDB's. The table gives per-query seconds; the summary gives
geometric means of per-query ratios: cbo / spark-default, cbo / spark-dsv2, cbo / the better
Spark configuration per query (with the worst query), cbo / cbo-oracle, and AUTOMATIC
(``cbo``) / the better of cbo-eager and cbo-local per query. JSON and a plot are saved under
``benchmarks/results`` (``tpch-run-<placement>-sf<X>``), after every query (``complete`` false
until the last), with the runner's manifest (``manifest``: commit, package versions, settings,
cost profile, statistics' fingerprints, machine). Progress goes to stderr, the table to stdout.

A scale curve: several scale factors (``--sf 1,3,10``) run one after the other, each with its data
generated when missing, and ``benchmarks.tpch.scale`` saves time against scale factor for every
configuration (``tpch-scale-*.json`` and ``.png``). ``--master cluster`` runs on cbo's local
standalone cluster (``cbo spark start``'s, started here when it is not running and stopped again
at the end); ``--master spark://host:port`` on another; cbo then costs for the cluster's shape.

    python -m benchmarks.tpch.run --sf 1,3 --master cluster --configs cbo,spark-default --repeat 1
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from benchmarks.cli import run_main
from benchmarks.machine import machine_info
from cbo.app.progress import say
from cbo.app.workload import manifest as manifests
from cbo.app.workload.configs import Config, Kind, cbo
from cbo.app.workload.engines import Engines, Reference
from cbo.app.workload.experiment import Experiment, Progress, measure_query
from cbo.app.workload.spark_tables import SparkTables
from cbo.app.workload.timing import TimingRules, planned_rounds, rotated
from cbo.app.workload.workloads import Workload, numbered
from cbo.errors import CboError
from cbo.sources.catalog import Catalog, load_catalog
from cbo.workloads import tpch
from cbo.workloads.tpch_queries import all_queries

__all__ = ["SparkTables", "ensure_statistics", "planned_rounds", "rotated", "summarize", "print_summary", "save"]

RESULTS = Path(__file__).resolve().parents[1] / "results"
CONFIGS = ("cbo", "cbo-eager", "cbo-local", "cbo-oracle", "spark-default", "spark-cbo", "spark-dsv2", "postgres")
PLACEMENTS = ("all-spark", "all-postgres", "federated", "federated3")
# cbo's settings per configuration.
CBO_SETTINGS = {"cbo": {}, "cbo-eager": {"join_pushdown_strategy": "eager"},
                "cbo-local": {"join_pushdown_strategy": "none"}, "cbo-oracle": {"cardinalities": "oracle"}}
SPARK_CONFIGS = ("spark-default", "spark-cbo", "spark-dsv2")
ONLY_IN = {"spark-cbo": ("all-spark",), "postgres": ("all-postgres",),
           "spark-dsv2": ("all-postgres", "federated", "federated3")}


def default_configs(placement: str) -> list[str]:
    if placement == "all-spark":
        return ["cbo", "cbo-oracle", "spark-default", "spark-cbo"]
    extra = ["postgres"] if placement == "all-postgres" else []
    return ["cbo", "cbo-eager", "cbo-local", "spark-default", "spark-dsv2"] + extra


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tpch.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=_scale_factors, default=[1.0],
                        help="scale factor, or several for a scale curve: 1,3,10 (default 1)")
    parser.add_argument("--master", help="where Spark runs: cluster (cbo's local standalone cluster, started "
                                         "if needed) or a spark:// URL (default: the catalog's, local mode)")
    parser.add_argument("--placement", choices=PLACEMENTS, default="all-spark",
                        help="where the tables live (default all-spark)")
    parser.add_argument("--queries", help="comma-separated subset, e.g. q1,q6 (default: all 22)")
    parser.add_argument("--configs", help=f"subset of {','.join(CONFIGS)} (default: by placement)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="rounds: timed runs per query and configuration, at least (default 3)")
    parser.add_argument("--max-rounds", type=int, default=9,
                        help="rounds for a short query, at most (default 9)")
    parser.add_argument("--budget", type=float, default=15.0,
                        help="a short query gets as many rounds as fit in this many seconds (default 15)")
    parser.add_argument("--long-warm-up", type=float, metavar="SECONDS",
                        help="a configuration whose warm-up run takes longer than this keeps it as its timed run "
                             "and is not run again (default: every warm-up is untimed)")
    parser.add_argument("--postgres-timeout", type=float, default=300.0,
                        help="the postgres configuration's per-query limit in seconds (default 300)")
    parser.add_argument("--postgres", default="local",
                        help="'local' (cbo's throwaway server, default) or a PostgreSQL URL")
    parser.add_argument("--mariadb", default="local",
                        help="for federated3: 'local' (cbo's throwaway server, default) or a MariaDB URL")
    parser.add_argument("--out", type=Path,
                        help="JSON file (default benchmarks/results/tpch-run-<placement>-sf<X>.json)")
    return parser.parse_args(argv)


def _scale_factors(text: str) -> list[float]:
    try:
        found = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of scale factors: {text!r} (e.g. 1,3,10)") from None
    if not found or any(sf <= 0 for sf in found):
        raise argparse.ArgumentTypeError(f"scale factors must be positive: {text!r}")
    return found


def check_configs(configs: list[str], placement: str) -> None:
    """Unknown configurations, ones that do not apply to the placement, and cbo settings this
    cbo does not have: one line each, before anything starts."""
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        raise CboError(f"unknown configuration(s) {', '.join(unknown)} (known: {', '.join(CONFIGS)})")
    for config in configs:
        if config in ONLY_IN and placement not in ONLY_IN[config]:
            raise CboError(f"configuration {config} runs only with placement {' or '.join(ONLY_IN[config])}, "
                           f"not {placement}")
        settings = CBO_SETTINGS.get(config, {})
        try:
            cbo(config, settings)
        except CboError:
            wanted = ", ".join(f"{name}={value}" for name, value in settings.items())
            raise CboError(f"configuration {config} needs cbo's setting {wanted}, which this cbo does not know "
                           f"(JDBC join pushdown not built yet?)") from None


def runner_configs(configs: list[str], postgres_timeout: float) -> list[Config]:
    """The benchmark's configurations as the workload runner's (``cbo-eager`` is cbo with
    ``join_pushdown_strategy=eager``, ...); only postgres has a time limit."""
    found = []
    for label in configs:
        if label in CBO_SETTINGS:
            found.append(cbo(label, CBO_SETTINGS[label]))
        else:
            found.append(Config(label, Kind(label), (), postgres_timeout if label == "postgres" else None))
    return found


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    configs = ([c.strip() for c in args.configs.split(",") if c.strip()] if args.configs
               else default_configs(args.placement))
    check_configs(configs, args.placement)
    workload = Workload("tpch", "tpch", numbered([(q.name, q.sql) for q in all_queries()]),
                        as_written=frozenset({"spark", "duckdb", "postgres"}))
    try:
        workload = workload.select(args.queries.split(",") if args.queries else None)
    except CboError as exc:
        raise ValueError(str(exc)) from None
    from benchmarks.tpch import scale

    with scale.spark_master(args.master) as master:
        outcomes = [run_scale_factor(args, sf, configs, workload, master) for sf in args.sf]
    if len(args.sf) > 1:
        scale.save([report for report, _ in outcomes], RESULTS)
    return 1 if any(failed for _, failed in outcomes) else 0


def run_scale_factor(args: argparse.Namespace, sf: float, configs: list[str], workload: Workload,  # type: ignore[no-untyped-def]
                     master) -> tuple[dict, bool]:
    """One scale factor's run: the report (also saved, with its plot), and whether an answer failed."""
    from benchmarks.tpch import scale

    jdbc = args.placement != "all-spark"
    catalogs = tpch.prepare(sf, postgres=args.postgres if jdbc else None,
                            mariadb=args.mariadb if args.placement == "federated3" else None, progress=say)
    catalog_path = catalogs[args.placement]
    catalog = scale.on_master(load_catalog(catalog_path), master)
    statistics = ensure_statistics(catalog)

    rules = TimingRules(args.repeat, args.max_rounds, args.budget, args.long_warm_up)
    chosen = runner_configs(configs, args.postgres_timeout)
    engines = Engines(catalog, workload, say)
    engines.check(chosen)
    for config in chosen:
        if config.kind is Kind.CBO:
            engines.session(config)
    main_session = engines.sessions.get("cbo") or engines.session(cbo("cbo"))
    say("starting Spark ...")
    spark = engines.spark()
    for kind in (Kind.SPARK_DEFAULT, Kind.SPARK_DSV2, Kind.SPARK_CBO):   # set up before the first query
        if any(c.kind is kind for c in chosen):
            engines.spark_tables(kind)
    reference = Reference(catalog, engines)
    experiment = Experiment("tpch", tuple(chosen), timing=rules)

    where = f"-{master.name}" if master else ""
    out = args.out if args.out and len(args.sf) == 1 else RESULTS / f"tpch-run-{args.placement}{where}-sf{sf:g}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    postgres_limit = args.postgres_timeout if "postgres" in configs else None
    base = {"benchmark": "tpch-run", "placement": args.placement, "scale_factor": sf, "repeat": args.repeat,
            "max_rounds": args.max_rounds, "budget_seconds": args.budget, "long_warm_up_s": args.long_warm_up,
            "cold_run": "first of each query's rotated order",   # (runs before it had none)
            "postgres_timeout_s": postgres_limit,
            "configs": configs, "analyze_seconds": engines.setup.get("spark_cbo_analyze_s"),
            "cbo_statistics": statistics, "machine": machine_info(), "spark_settings": _spark_settings(spark),
            **scale.run_facts(main_session, catalog_path, master)}
    if "postgres" in configs:
        base["postgres_settings"] = engines.postgres(next(c for c in chosen if c.kind is Kind.POSTGRES)).settings()
    base["manifest"] = manifests.manifest({"workload": "tpch", "configs": [c.to_json() for c in chosen],
                                           "timing": rules.to_json(), "catalog": str(catalog_path)},
                                          catalog, engines.sessions)
    records: list[dict] = []
    header = f"{'query':<6}" + "".join(f"{c:>15}" for c in configs) + "   answers"
    print(header, flush=True)
    progress = Progress(len(workload.queries))
    try:
        for number, query in enumerate(workload.queries, start=1):
            progress.query(number, query)
            record = measure_query(query, chosen, engines, reference, experiment, None, progress)
            progress.clear()
            records.append(legacy(record, configs))
            cells = "".join(f"{cell(record, c):>15}" for c in configs)
            verdict = "ok" if all(record["matches"].values()) else "MISMATCH " + json.dumps(record["problems"])
            print(f"{query.name:<6}{cells}   {verdict}", flush=True)
            # Saved after every query (``complete`` false until the last): an interrupted run keeps
            # the queries it finished.
            save(out, {**base, "complete": len(records) == len(workload.queries),
                       "summary": summarize(records, configs), "queries": records}, plot_too=False)
    finally:
        engines.close()
        reference.close()

    summary = summarize(records, configs)
    print_summary(summary)
    base["manifest"].update(finished=manifests.now(), complete=True)
    base["manifest"]["machine"]["load_end"] = manifests.load()
    report = {**base, "complete": True, "summary": summary, "queries": records}
    save(out, report, plot_too=True)
    say(f"saved {out} and {out.with_suffix('.png')}")
    failed = [r for r in records if not all(r["matches"].values())]
    return report, bool(failed)


def legacy(record: dict[str, Any], configs: list[str]) -> dict[str, Any]:
    """The runner's record with the keys this benchmark's JSON has always had beside it: cbo's
    planning time, cost and partitions per cbo configuration (``plan_ms``, ``plan_ms_eager``,
    ...), the oracle plan's cost and whether cbo's plan is the oracle's."""
    plans = record.get("plans") or {}
    for config in ("cbo", "cbo-eager", "cbo-local"):
        plan = plans.get(config)
        if plan:
            suffix = "" if config == "cbo" else "_" + config.split("-")[1]
            record["plan_ms" + suffix] = plan["plan_ms"]
            record["cbo_cost" + suffix] = plan["cost"]
            record["cbo_partitions" + suffix] = plan["partitions"]
    oracle = plans.get("cbo-oracle")
    if oracle:
        record["oracle_cost"] = oracle["cost"]
        if "cbo" in plans:
            record["same_plan_as_oracle"] = plans["cbo"]["shape"] == oracle["shape"]
    return record


def save(out: Path, report: dict, plot_too: bool) -> None:
    temporary = out.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(report, indent=2, default=str))
    temporary.replace(out)
    if plot_too:
        from benchmarks.tpch.plot_run import plot

        plot(report, out.with_suffix(".png"))


def cell(record: dict, config: str) -> str:
    if config in record["timeouts"]:
        return f">{record['timeouts'][config]:g} s"
    if record["problems"].get(config):
        return "failed"
    return f"{record['seconds'].get(config, float('nan')):.3f}"


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def ensure_statistics(catalog_path: Path | Catalog) -> dict[str, str]:
    """Collect cbo's statistics of every table of the catalog that lacks fresh ones (as ``cbo
    demo`` does); return table -> collected | fresh.

    Without them cbo would plan from default estimates while Spark's CBO plans from ANALYZE:
    an unfair comparison that nothing in the results would show. The sessions read the store
    when they first plan, so this runs before any of them exists.
    """
    from cbo.app.progress import step
    from cbo.sources.statistics import analyze

    with step("collecting cbo's statistics (skipped where fresh)"):
        catalog = catalog_path if isinstance(catalog_path, Catalog) else load_catalog(catalog_path)
        results = analyze(catalog, progress=say)
    collected = sum(r.status == "collected" for r in results)
    say(f"cbo's statistics: {collected} table(s) collected, {len(results) - collected} fresh")
    return {r.table: r.status for r in results}


def summarize(records: list[dict], configs: list[str]) -> dict:
    """Geometric means of per-query ratios (only queries where both sides finished with right
    answers), the worst query where a target bounds it, and the queries that timed out."""
    def ratios(numerator: str, denominator, key: str | None = None) -> list[float]:  # type: ignore[no-untyped-def]
        found = []
        for r in records:
            top = r["seconds"].get(numerator)
            bottom = denominator(r)
            if top and bottom:
                found.append(top / bottom)
                if key:
                    r[key] = round(top / bottom, 3)
        return found

    def best_of(candidates: list[str]):  # type: ignore[no-untyped-def]
        def best(r: dict) -> float | None:
            values = [r["seconds"][c] for c in candidates if c in r["seconds"]]
            return min(values) if values else None
        return best

    summary: dict = {"geomean_seconds": {c: geomean([r["seconds"].get(c) for r in records]) for c in configs}}
    for other in ("spark-default", "spark-dsv2", "cbo-oracle", "postgres"):
        if "cbo" in configs and other in configs:
            key = "cbo_vs_" + other.replace("-", "_").replace("cbo_oracle", "oracle")
            summary[key] = geomean(ratios("cbo", lambda r, o=other: r["seconds"].get(o)))
    spark_configs = [c for c in SPARK_CONFIGS if c in configs]
    if "cbo" in configs and spark_configs:
        per_query = ratios("cbo", best_of(spark_configs), key="cbo_vs_faster_spark")
        summary["cbo_vs_faster_spark"] = geomean(per_query)
        summary["worst_cbo_vs_faster_spark"] = max(per_query) if per_query else None
    forced: list[str] = [c for c in ("cbo-eager", "cbo-local") if c in configs]
    if "cbo" in configs and forced:
        per_query = ratios("cbo", best_of(forced), key="automatic_vs_better_forced")
        summary["automatic_vs_better_forced"] = geomean(per_query)
        summary["worst_automatic_vs_better_forced"] = max(per_query) if per_query else None
    summary["timeouts"] = {c: [r["query"] for r in records if c in r["timeouts"]] for c in configs
                           if any(c in r["timeouts"] for r in records)}
    summary["all_answers_match"] = all(all(r["matches"].values()) for r in records)
    return summary


def print_summary(summary: dict) -> None:
    print("geometric mean seconds: " + ", ".join(f"{c} {v:.3f}" for c, v in summary["geomean_seconds"].items() if v))
    labels = {"cbo_vs_spark_default": "cbo / spark-default (geomean of per-query ratios; < 1 is faster)",
              "cbo_vs_spark_dsv2": "cbo / spark-dsv2 (geomean)",
              "cbo_vs_faster_spark": "cbo / faster Spark configuration per query (geomean)",
              "worst_cbo_vs_faster_spark": "worst query: cbo / faster Spark configuration",
              "cbo_vs_oracle": "cbo / cbo with oracle cardinalities (geomean)",
              "cbo_vs_postgres": "cbo / postgres, queries postgres finished (geomean)",
              "automatic_vs_better_forced": "AUTOMATIC / better of cbo-eager and cbo-local per query (geomean)",
              "worst_automatic_vs_better_forced": "worst query: AUTOMATIC / better of cbo-eager and cbo-local"}
    for key, label in labels.items():
        if summary.get(key) is not None:
            print(f"{label}: {summary[key]:.3f}")
    for config, names in summary.get("timeouts", {}).items():
        print(f"{config} timed out on: {', '.join(names)}")
    print("all answers match DuckDB: " + ("yes" if summary["all_answers_match"] else "NO"))


def _spark_settings(spark) -> dict[str, str]:  # type: ignore[no-untyped-def]
    from cbo.engines.spark import optimizer_settings

    return optimizer_settings(spark)


if __name__ == "__main__":
    run_main(main)
