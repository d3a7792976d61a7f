"""End to end: TPC-H through cbo on Spark against Spark's own optimizer, in one run.

    python -m benchmarks.tpch.run --sf 1 --placement all-spark
    python -m benchmarks.tpch.run --sf 0.1 --queries q3,q5 --repeat 1

Four configurations run every query on the same Spark session, interleaved query by query
(so a slow phase of the machine hits all of them alike):

* ``cbo``: cbo's plan with its own estimates, run as chosen (``cbo.exec.spark_exec``: join
  order, strategies and partition count fixed, adaptive execution off). Its time includes
  cbo's planning (parse, search) as Spark's includes its own.
* ``cbo-oracle``: cbo's plan with true cardinalities (``cardinalities=oracle``, counted with
  DuckDB before timing); the time is execution only.
* ``spark-default``: the query text through Spark SQL with Spark's defaults (adaptive execution
  on, its CBO off), over catalog tables in database ``tpch_plain``.
* ``spark-cbo``: Spark with ``spark.sql.cbo.enabled`` and ``spark.sql.cbo.joinReorder.enabled``
  over tables in ``tpch_analyzed`` after ``ANALYZE TABLE ... COMPUTE STATISTICS FOR ALL
  COLUMNS`` with histograms (``spark.sql.statistics.histogram.enabled``); the ANALYZE time is
  reported, not counted per query.

cbo plans from its statistics: before anything runs, the benchmark collects those that are
missing or stale (``cbo analyze``, skipping fresh ones, with progress per table), so cbo is
never compared while planning from default estimates. The JSON says what was collected.

Each query first runs once untimed in every configuration (file caches, Spark's code
generation and the JVM's JIT warm up alike), then in rounds, each round running every
configuration once, in an order rotated from round to round (so no configuration always runs
right after another that warmed the same code); the fastest time counts. There are
``--repeat`` rounds (default 3), and more for a short query: as many as its warm-up round fits
in ``--budget`` seconds (default 15), at most ``--max-rounds`` (default 9), because the fastest
of three runs of a 0.4 s query still varies by 10-30 % on this machine. Every configuration
gets the same rounds. Every answer is compared with DuckDB's. The table gives per-query
seconds and the ratios cbo / spark-default, cbo / (faster Spark), cbo / oracle,
with geometric means; JSON and a plot are saved under ``benchmarks/results``.

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
import time
from pathlib import Path

from benchmarks.cli import run_main
from benchmarks.machine import machine_info
from benchmarks.tpch.queries import Query, select
from cbo.answers import compare, is_ordered
from cbo.sources.catalog import Catalog, load_catalog
from cbo.errors import CboError
from cbo.app.progress import say
from cbo.workloads import tpch

RESULTS = Path(__file__).resolve().parents[1] / "results"
CONFIGS = ("cbo", "cbo-oracle", "spark-default", "spark-cbo")
SPARK_CBO_CONF = {"spark.sql.cbo.enabled": "true", "spark.sql.cbo.joinReorder.enabled": "true",
                  "spark.sql.statistics.histogram.enabled": "true"}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tpch.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=_scale_factors, default=[1.0],
                        help="scale factor, or several for a scale curve: 1,3,10 (default 1)")
    parser.add_argument("--master", help="where Spark runs: cluster (cbo's local standalone cluster, started "
                                         "if needed) or a spark:// URL (default: the catalog's, local mode)")
    parser.add_argument("--placement", choices=["all-spark"], default="all-spark",
                        help="where the tables live (all-spark: the configuration Spark's CBO can analyze)")
    parser.add_argument("--queries", help="comma-separated subset, e.g. q1,q6 (default: all 22)")
    parser.add_argument("--configs", default=",".join(CONFIGS), help=f"subset of {','.join(CONFIGS)}")
    parser.add_argument("--repeat", type=int, default=3,
                        help="rounds: timed runs per query and configuration, at least (default 3)")
    parser.add_argument("--max-rounds", type=int, default=9,
                        help="rounds for a short query, at most (default 9)")
    parser.add_argument("--budget", type=float, default=15.0,
                        help="a short query gets as many rounds as fit in this many seconds (default 15)")
    parser.add_argument("--out", type=Path, help="JSON file (default benchmarks/results/tpch-run-<placement>-sf<X>.json)")
    return parser.parse_args(argv)


def _scale_factors(text: str) -> list[float]:
    try:
        found = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of scale factors: {text!r} (e.g. 1,3,10)") from None
    if not found or any(sf <= 0 for sf in found):
        raise argparse.ArgumentTypeError(f"scale factors must be positive: {text!r}")
    return found


class SparkTables:
    """The catalog's tables as Spark catalog tables (external, over the same Parquet files) in
    two databases: as they are, and analyzed for Spark's CBO."""

    def __init__(self, spark, catalog):  # type: ignore[no-untyped-def]
        self.spark = spark
        self.catalog = catalog

    def create(self, database: str) -> None:
        self.spark.sql(f"CREATE DATABASE IF NOT EXISTS {database}")
        for table in self.catalog.tables():
            path = str(table.path).replace("'", "''")
            self.spark.sql(f"DROP TABLE IF EXISTS {database}.{table.name}")
            self.spark.sql(f"CREATE TABLE {database}.{table.name} USING {table.format} LOCATION '{path}'")

    def analyze(self, database: str) -> float:
        started = time.perf_counter()
        with conf(self.spark, {"spark.sql.statistics.histogram.enabled": "true"}):
            for table in self.catalog.tables():
                say(f"ANALYZE {database}.{table.name} (all columns, histograms)")
                self.spark.sql(f"ANALYZE TABLE {database}.{table.name} COMPUTE STATISTICS FOR ALL COLUMNS")
        return time.perf_counter() - started

    def run(self, database: str, sql: str, settings: dict[str, str]) -> list[tuple]:
        self.spark.catalog.setCurrentDatabase(database)
        try:
            with conf(self.spark, settings):
                return [tuple(r) for r in self.spark.sql(sql).collect()]
        finally:
            self.spark.catalog.setCurrentDatabase("default")


class conf:
    """Set Spark SQL settings for a block, restoring them afterwards."""

    def __init__(self, spark, values: dict[str, str]):  # type: ignore[no-untyped-def]
        self.spark, self.values, self.saved = spark, values, {}

    def __enter__(self) -> None:
        for key, value in self.values.items():
            self.saved[key] = self.spark.conf.get(key, None)
            self.spark.conf.set(key, value)

    def __exit__(self, *exc: object) -> None:
        for key, value in self.saved.items():
            if value is None:
                self.spark.conf.unset(key)
            else:
                self.spark.conf.set(key, value)


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = set(configs) - set(CONFIGS)
    if unknown:
        raise CboError(f"unknown configuration(s) {', '.join(sorted(unknown))} (known: {', '.join(CONFIGS)})")
    queries = select(args.queries.split(",") if args.queries else None)
    from benchmarks.tpch import scale

    with scale.spark_master(args.master) as master:
        outcomes = [run_scale_factor(args, sf, configs, queries, master) for sf in args.sf]
    if len(args.sf) > 1:
        scale.save([report for report, _ in outcomes], RESULTS)
    return 1 if any(failed for _, failed in outcomes) else 0


def run_scale_factor(args: argparse.Namespace, sf: float, configs: list[str], queries: list[Query],  # type: ignore[no-untyped-def]
                     master) -> tuple[dict, bool]:
    """One scale factor's run: the report (also saved, with its plot), and whether an answer failed."""
    from benchmarks.tpch import scale

    catalogs = tpch.prepare(sf, postgres=None, progress=say)
    catalog_path = catalogs[args.placement]
    catalog = scale.on_master(load_catalog(catalog_path), master)
    statistics = ensure_statistics(catalog)

    from cbo.engines.duckdb_engine import DuckDBEngine
    from cbo.app.session import Session

    say("starting Spark ...")
    session = Session(catalog)
    oracle = Session(catalog, settings={"cardinalities": "oracle"})
    session.query("select count(*) from region")
    spark = session._spark().spark
    tables = SparkTables(spark, load_catalog(catalog_path))
    tables.create("tpch_plain")
    analyze_seconds = None
    if "spark-cbo" in configs:
        tables.create("tpch_analyzed")
        analyze_seconds = tables.analyze("tpch_analyzed")
        say(f"ANALYZE took {analyze_seconds:.1f} s")
    reference = DuckDBEngine(load_catalog(catalog_path))

    records = []
    header = f"{'query':<6}" + "".join(f"{c:>15}" for c in configs) + "   answers"
    print(header, flush=True)
    for query in queries:
        records.append(run_query(query, configs, args.repeat, session, oracle, tables, reference,
                                 args.max_rounds, args.budget))
        record = records[-1]
        cells = "".join(f"{record['seconds'].get(c, float('nan')):>15.3f}" for c in configs)
        verdict = "ok" if all(record["matches"].values()) else "MISMATCH " + json.dumps(record["problems"])
        print(f"{query.name:<6}{cells}   {verdict}", flush=True)

    summary = summarize(records, configs)
    print_summary(summary)
    report = {"benchmark": "tpch-run", "placement": args.placement, "scale_factor": sf, "repeat": args.repeat,
              "max_rounds": args.max_rounds, "budget_seconds": args.budget,
              "configs": configs, "analyze_seconds": analyze_seconds, "cbo_statistics": statistics,
              "machine": machine_info(),
              "spark_settings": _spark_settings(spark), "summary": summary, "queries": records,
              **scale.run_facts(session, catalog_path, master)}
    where = f"-{master.name}" if master else ""
    out = args.out if args.out and len(args.sf) == 1 else RESULTS / f"tpch-run-{args.placement}{where}-sf{sf:g}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(report, indent=2, default=str))
    temporary.replace(out)
    from benchmarks.tpch.plot_run import plot

    plot(report, out.with_suffix(".png"))
    say(f"saved {out} and {out.with_suffix('.png')}")
    failed = [r for r in records if not all(r["matches"].values())]
    return report, bool(failed)


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


def planned_rounds(repeat: int, max_rounds: int, budget: float, round_seconds: float) -> int:
    """Rounds for a query whose warm-up round took ``round_seconds``: at least ``repeat``, more for
    short queries (as many as fit in ``budget`` seconds, at most ``max_rounds``): the fastest of
    three runs of a 0.4 s query still varies by 10-30 % on this machine."""
    if round_seconds <= 0:
        return max(1, repeat)
    return max(1, repeat, min(max_rounds, int(budget // round_seconds)))


def run_query(query: Query, configs: list[str], repeat: int, session, oracle, tables, reference,  # type: ignore[no-untyped-def]
              max_rounds: int = 3, budget: float = 0.0) -> dict:
    record: dict = {"query": query.name, "seconds": {}, "times": {}, "matches": {}, "problems": {}}
    ordered = is_ordered(query.sql)
    _, expected, _ = reference.run(query.sql)
    runs = {}
    for config in configs:
        try:
            runs[config] = _runner(config, query, record, session, oracle, tables)
        except Exception as exc:  # e.g. planning failed: report it, run the rest
            record["matches"][config] = False
            record["problems"][config] = str(exc).strip().splitlines()[0][:300]

    def one_round(index: int) -> None:
        order = list(runs)[index % max(1, len(runs)):] + list(runs)[: index % max(1, len(runs))]
        for config in order:
            if record["problems"].get(config):
                continue
            try:
                started = time.perf_counter()
                rows = runs[config]()
                record["times"].setdefault(config, []).append(round(time.perf_counter() - started, 4))
                verdict = compare(expected, rows, ordered=ordered)
                record["matches"][config] = record["matches"].get(config, True) and verdict.matches
                if not verdict.matches:
                    record["problems"][config] = verdict.detail
            except Exception as exc:  # one failure must not hide the rest of the run
                record["matches"][config] = False
                record["problems"][config] = str(exc).strip().splitlines()[0][:300]

    warm_up = 0.0   # every configuration once, untimed: file caches, code generation, the JIT
    for run in runs.values():
        started = time.perf_counter()
        try:
            run()
        except Exception:  # the timed rounds report it
            pass
        warm_up += time.perf_counter() - started
    record["rounds"] = planned_rounds(repeat, max_rounds, budget, warm_up)
    for index in range(record["rounds"]):
        one_round(index)
    for config, times in record["times"].items():
        if not record["problems"].get(config):
            record["seconds"][config] = min(times)
    return record


def _runner(config: str, query: Query, record: dict, session, oracle, tables):  # type: ignore[no-untyped-def]
    if config == "cbo":
        planned = session.planner.plan(query.sql)
        record["plan_ms"] = round(planned.optimized.counters.elapsed_ms, 2)
        record["cbo_cost"] = planned.optimized.cost
        record["cbo_partitions"] = planned.partitions
        return lambda: session.run(session.planner.plan(query.sql))[1]   # planning is timed too
    if config == "cbo-oracle":
        planned_oracle = oracle.planner.plan(query.sql)   # counting happens here, untimed
        record["oracle_cost"] = planned_oracle.optimized.cost
        record["same_plan_as_oracle"] = planned_oracle.plan == session.planner.plan(query.sql).plan
        return lambda: oracle.run(planned_oracle)[1]
    if config == "spark-default":
        return lambda: tables.run("tpch_plain", query.sql, {})
    return lambda: tables.run("tpch_analyzed", query.sql, SPARK_CBO_CONF)


def summarize(records: list[dict], configs: list[str]) -> dict:
    def ratios(numerator: str, denominator) -> list[float]:  # type: ignore[no-untyped-def]
        found = []
        for r in records:
            top = r["seconds"].get(numerator)
            bottom = denominator(r)
            if top and bottom:
                found.append(top / bottom)
        return found

    summary: dict = {"geomean_seconds": {c: geomean([r["seconds"].get(c) for r in records]) for c in configs}}
    if "cbo" in configs and "spark-default" in configs:
        summary["cbo_vs_spark_default"] = geomean(ratios("cbo", lambda r: r["seconds"].get("spark-default")))
    spark_configs = [c for c in ("spark-default", "spark-cbo") if c in configs]
    if "cbo" in configs and spark_configs:
        def faster_spark(r):  # type: ignore[no-untyped-def]
            values = [r["seconds"][c] for c in spark_configs if c in r["seconds"]]
            return min(values) if values else None

        per_query = ratios("cbo", faster_spark)
        summary["cbo_vs_faster_spark"] = geomean(per_query)
        summary["worst_cbo_vs_faster_spark"] = max(per_query) if per_query else None
        for r in records:
            best = faster_spark(r)
            if best and "cbo" in r["seconds"]:
                r["cbo_vs_faster_spark"] = round(r["seconds"]["cbo"] / best, 3)
    if "cbo" in configs and "cbo-oracle" in configs:
        summary["cbo_vs_oracle"] = geomean(ratios("cbo", lambda r: r["seconds"].get("cbo-oracle")))
    summary["all_answers_match"] = all(all(r["matches"].values()) for r in records)
    return summary


def print_summary(summary: dict) -> None:
    print("geometric mean seconds: " + ", ".join(f"{c} {v:.3f}" for c, v in summary["geomean_seconds"].items() if v))
    labels = {"cbo_vs_spark_default": "cbo / spark-default (geomean of per-query ratios; < 1 is faster)",
              "cbo_vs_faster_spark": "cbo / faster Spark configuration (geomean)",
              "worst_cbo_vs_faster_spark": "worst query: cbo / faster Spark configuration",
              "cbo_vs_oracle": "cbo / cbo with oracle cardinalities (geomean)"}
    for key, label in labels.items():
        if summary.get(key) is not None:
            print(f"{label}: {summary[key]:.3f}")
    print("all answers match DuckDB: " + ("yes" if summary["all_answers_match"] else "NO"))


def _spark_settings(spark) -> dict[str, str]:  # type: ignore[no-untyped-def]
    from cbo.engines.spark import optimizer_settings

    return optimizer_settings(spark)


if __name__ == "__main__":
    run_main(main)
