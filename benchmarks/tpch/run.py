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

Each query first runs once untimed in every configuration (file caches, Spark's code
generation and the JVM's JIT warm up alike), then in rounds, each round running every
configuration once, in an order rotated from round to round and reversed every other round
(so no configuration always runs right after another that warmed the same code); the fastest
time counts. The order also rotates
from query to query (by the query's number, so a piece of a run orders a query as the whole run
would), and before the warm-ups the first configuration of that order runs once more, untimed
and unchecked: a cold run that brings the sources' pages into the OS cache and PostgreSQL's and
MariaDB's buffers for every configuration, so the first one's warm-up is not the only one paid
on cold caches (it was, and with ``--long-warm-up`` it was kept: up to 3.1x on federated3).
The JSON gives each query's ``order`` (its first entry made the cold run) and ``cold_run_s``. There are
``--repeat`` rounds (default 3), and more for a short query: as many as its warm-up round fits
in ``--budget`` seconds (default 15), at most ``--max-rounds`` (default 9), because the fastest
of three runs of a 0.4 s query still varies by 10-30 % on this machine. Every configuration
gets the same rounds, except with ``--long-warm-up S``: when every configuration's warm-up run of
a query took more than S seconds, those runs (timed, their answers checked) are kept as their
times and not run again (a long run is hardly changed by warm caches; ``warm_up_kept`` in the
JSON lists them), which fits more queries in a time window. The decision is the query's, not
each configuration's, so the same plan is never kept once in one configuration and given the
best of its rounds in another. Every answer is compared with DuckDB's. The table gives per-query
seconds; the summary gives geometric means of per-query ratios: cbo / spark-default,
cbo / spark-dsv2, cbo / the better Spark configuration per query (with the worst query),
cbo / cbo-oracle, and AUTOMATIC (``cbo``) / the better of cbo-eager and cbo-local per query.
JSON and a plot are saved under ``benchmarks/results`` (``tpch-run-<placement>-sf<X>``).
Progress goes to stderr, the table to stdout.

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
from benchmarks.tpch.baselines import DSV2_JOIN_PUSHDOWN, SPARK_CBO_CONF, PostgresDirect, SparkTables
from benchmarks.tpch.queries import Query, select
from cbo.answers import compare, is_ordered
from cbo.app.progress import say
from cbo.errors import CboError, QueryTimeout
from cbo.sources.catalog import Catalog, load_catalog
from cbo.workloads import tpch

RESULTS = Path(__file__).resolve().parents[1] / "results"
CONFIGS = ("cbo", "cbo-eager", "cbo-local", "cbo-oracle", "spark-default", "spark-cbo", "spark-dsv2", "postgres")
PLACEMENTS = ("all-spark", "all-postgres", "federated", "federated3")
# cbo's settings per configuration (cbo-oracle's are set where its session is made).
CBO_SETTINGS = {"cbo": {}, "cbo-eager": {"join_pushdown_strategy": "eager"},
                "cbo-local": {"join_pushdown_strategy": "none"}}
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
    from cbo.settings import OptimizerSettings

    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        raise CboError(f"unknown configuration(s) {', '.join(unknown)} (known: {', '.join(CONFIGS)})")
    for config in configs:
        if config in ONLY_IN and placement not in ONLY_IN[config]:
            raise CboError(f"configuration {config} runs only with placement {' or '.join(ONLY_IN[config])}, "
                           f"not {placement}")
        for name, value in CBO_SETTINGS.get(config, {}).items():
            try:
                OptimizerSettings().with_values({name: value})
            except CboError:
                raise CboError(f"configuration {config} needs cbo's setting {name}={value}, which this cbo "
                               f"does not know (JDBC join pushdown not built yet?)") from None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    configs = ([c.strip() for c in args.configs.split(",") if c.strip()] if args.configs
               else default_configs(args.placement))
    check_configs(configs, args.placement)
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

    jdbc = args.placement != "all-spark"
    catalogs = tpch.prepare(sf, postgres=args.postgres if jdbc else None,
                            mariadb=args.mariadb if args.placement == "federated3" else None, progress=say)
    catalog_path = catalogs[args.placement]
    catalog = scale.on_master(load_catalog(catalog_path), master)
    statistics = ensure_statistics(catalog)

    from cbo.app.session import Session
    from cbo.engines.duckdb_engine import DuckDBEngine

    say("starting Spark ...")
    sessions = {c: Session(catalog, settings=CBO_SETTINGS[c]) for c in configs if c in CBO_SETTINGS}
    if "cbo-oracle" in configs:
        sessions["cbo-oracle"] = Session(catalog, settings={"cardinalities": "oracle"})
    main_session = sessions.get("cbo") or Session(catalog)
    main_session.query("select count(*) from region")
    spark = main_session._spark().spark
    tables = SparkTables(spark, catalog)
    analyze_seconds = None
    if not jdbc:
        tables.create("tpch_plain")
    elif "spark-default" in configs:
        tables.prepare_views("jdbc")
    if "spark-dsv2" in configs:
        tables.prepare_views("dsv2")
    if "spark-cbo" in configs:
        tables.create("tpch_analyzed")
        analyze_seconds = tables.analyze("tpch_analyzed")
        say(f"ANALYZE took {analyze_seconds:.1f} s")
    postgres = PostgresDirect(catalog, args.postgres_timeout) if "postgres" in configs else None
    reference = DuckDBEngine(load_catalog(catalogs["all-spark"]) if jdbc else load_catalog(catalog_path))
    baselines = Baselines(tables, postgres, jdbc)

    where = f"-{master.name}" if master else ""
    out = args.out if args.out and len(args.sf) == 1 else RESULTS / f"tpch-run-{args.placement}{where}-sf{sf:g}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    base = {"benchmark": "tpch-run", "placement": args.placement, "scale_factor": sf, "repeat": args.repeat,
            "max_rounds": args.max_rounds, "budget_seconds": args.budget, "long_warm_up_s": args.long_warm_up,
            "cold_run": "first of each query's rotated order",   # (runs before it had none)
            "postgres_timeout_s": args.postgres_timeout if postgres else None,
            "configs": configs, "analyze_seconds": analyze_seconds, "cbo_statistics": statistics,
            "machine": machine_info(), "spark_settings": _spark_settings(spark),
            **scale.run_facts(main_session, catalog_path, master)}
    if postgres:
        base["postgres_settings"] = postgres.settings()
    records: list[dict] = []
    header = f"{'query':<6}" + "".join(f"{c:>15}" for c in configs) + "   answers"
    print(header, flush=True)
    for query in queries:
        say(f"{query.name} ...")
        records.append(run_query(query, configs, args.repeat, sessions, baselines, reference,
                                 args.max_rounds, args.budget, args.long_warm_up))
        record = records[-1]
        cells = "".join(f"{cell(record, c):>15}" for c in configs)
        verdict = "ok" if all(record["matches"].values()) else "MISMATCH " + json.dumps(record["problems"])
        print(f"{query.name:<6}{cells}   {verdict}", flush=True)
        # Saved after every query (``complete`` false until the last): an interrupted run keeps
        # the queries it finished.
        save(out, {**base, "complete": len(records) == len(queries), "summary": summarize(records, configs),
                   "queries": records}, plot_too=False)

    summary = summarize(records, configs)
    print_summary(summary)
    report = {**base, "complete": True, "summary": summary, "queries": records}
    save(out, report, plot_too=True)
    say(f"saved {out} and {out.with_suffix('.png')}")
    failed = [r for r in records if not all(r["matches"].values())]
    return report, bool(failed)


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


class Baselines:
    """How each non-cbo configuration runs a query."""

    def __init__(self, tables: SparkTables, postgres: PostgresDirect | None, jdbc: bool):
        self.tables, self.postgres, self.jdbc = tables, postgres, jdbc

    def runner(self, config: str, sql: str):  # type: ignore[no-untyped-def]
        if config == "spark-default":
            if self.jdbc:
                return lambda: self.tables.run_views("jdbc", sql, {})
            return lambda: self.tables.run("tpch_plain", sql, {})
        if config == "spark-cbo":
            return lambda: self.tables.run("tpch_analyzed", sql, SPARK_CBO_CONF)
        if config == "spark-dsv2":
            return lambda: self.tables.run_views("dsv2", sql, {DSV2_JOIN_PUSHDOWN: "true"})
        if config == "postgres":
            assert self.postgres is not None
            return lambda: self.postgres.run(sql)
        raise CboError(f"no runner for configuration {config}")


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


def planned_rounds(repeat: int, max_rounds: int, budget: float, round_seconds: float) -> int:
    """Rounds for a query whose warm-up round took ``round_seconds``: at least ``repeat``, more for
    short queries (as many as fit in ``budget`` seconds, at most ``max_rounds``): the fastest of
    three runs of a 0.4 s query still varies by 10-30 % on this machine."""
    if round_seconds <= 0:
        return max(1, repeat)
    return max(1, repeat, min(max_rounds, int(budget // round_seconds)))


def run_query(query: Query, configs: list[str], repeat: int, sessions: dict, baselines: Baselines,  # type: ignore[no-untyped-def]
              reference, max_rounds: int = 3, budget: float = 0.0, long_warm_up: float | None = None) -> dict:
    record: dict = {"query": query.name, "seconds": {}, "times": {}, "matches": {}, "problems": {}, "timeouts": {}}
    done: set[str] = set()   # configurations whose long warm-up run was kept as their time
    ordered = is_ordered(query.sql)
    _, expected, _ = reference.run(query.sql)
    runs = {}
    for config in configs:
        try:
            runs[config] = _runner(config, query, record, sessions, baselines)
        except Exception as exc:  # e.g. planning failed: report it, run the rest
            record["matches"][config] = False
            record["problems"][config] = str(exc).strip().splitlines()[0][:300]

    def attempt(config: str) -> list[tuple] | None:
        """Run once; a timeout is recorded (and the configuration not run again), not raised."""
        try:
            return runs[config]()
        except QueryTimeout:
            record["timeouts"][config] = baselines.postgres.timeout_s if baselines.postgres else None
            return None

    def timed(config: str) -> float | None:
        """Run once, timed, and check the answer; the seconds (None: timed out or failed)."""
        try:
            started = time.perf_counter()
            rows = attempt(config)
            if rows is None:
                return None
            seconds = time.perf_counter() - started
            record["times"].setdefault(config, []).append(round(seconds, 4))
            verdict = compare(expected, rows, ordered=ordered)
            record["matches"][config] = record["matches"].get(config, True) and verdict.matches
            if not verdict.matches:
                record["problems"][config] = verdict.detail
            return seconds
        except Exception as exc:  # one failure must not hide the rest of the run
            record["matches"][config] = False
            record["problems"][config] = str(exc).strip().splitlines()[0][:300]
            return None

    def one_round(index: int) -> None:
        # rotated one further each round and reversed every other round: a rotation alone keeps
        # every configuration right after the same one (cbo after spark-dsv2: 1.145x cbo-eager's
        # time on the same plan, federated3 SF 1); reversed, it follows another
        order = rotated(list(runs), query.number - 1 + index)
        for config in (order[::-1] if index % 2 else order):
            if record["problems"].get(config) or config in record["timeouts"] or config in done:
                continue
            timed(config)

    order = rotated(list(runs), query.number - 1)
    record["order"] = order
    if order:
        # The cold run: whoever runs first finds the sources' caches cold, so a throwaway run
        # warms them for all. A failure shows again in the runs that count; a timeout (postgres)
        # stands, as a later one would: its limit is far above what warm caches save.
        started = time.perf_counter()
        try:
            attempt(order[0])
        except Exception:
            pass
        record["cold_run_s"] = round(time.perf_counter() - started, 4)
    warm_ups: dict[str, float] = {}   # every configuration once: file caches, code generation, the JIT
    timed_warm_ups: dict[str, float] = {}
    for config in order:
        started = time.perf_counter()
        if long_warm_up is not None:
            seconds = timed(config)   # timed like a round: it may be kept (below)
            if seconds is not None:
                timed_warm_ups[config] = seconds
        else:
            try:
                attempt(config)
            except Exception:  # the timed rounds report it
                pass
        if config not in record["timeouts"]:   # a cancelled query does not shorten the others' rounds
            warm_ups[config] = time.perf_counter() - started
    if long_warm_up is not None:
        # ``--long-warm-up``: a run this long is hardly changed by warm caches or the JIT, so the
        # warm-ups are kept as the configurations' times and not repeated. One decision for the
        # query, taken when even the fastest warm-up was long: decided per configuration, a run
        # just over the limit was kept while the same plan just under it got the best of its
        # rounds (federated3 q04: 7.7 s kept against 1.9 s).
        if timed_warm_ups and min(timed_warm_ups.values()) > long_warm_up:
            done.update(timed_warm_ups)
            record["warm_up_kept"] = sorted(done)
        else:
            for config in timed_warm_ups:
                record["times"][config].pop()   # only a warm-up, as without the option
    warm_up = sum(seconds for config, seconds in warm_ups.items() if config not in done)
    record["rounds"] = planned_rounds(repeat, max_rounds, budget, warm_up)
    for index in range(record["rounds"]):
        one_round(index)
    for config, times in record["times"].items():
        if not record["problems"].get(config):
            record["seconds"][config] = min(times)
    return record


def rotated(configs: list[str], shift: int) -> list[str]:
    """``configs`` started ``shift`` places on, wrapping round: query n's order starts with
    configuration n - 1 (mod their number), round i of it one further on per round."""
    if not configs:
        return []
    shift %= len(configs)
    return configs[shift:] + configs[:shift]


def _runner(config: str, query: Query, record: dict, sessions: dict, baselines: Baselines):  # type: ignore[no-untyped-def]
    if config in CBO_SETTINGS:
        session = sessions[config]
        planned = session.planner.plan(query.sql)
        suffix = "" if config == "cbo" else "_" + config.split("-")[1]
        record["plan_ms" + suffix] = round(planned.optimized.counters.elapsed_ms, 2)
        record["cbo_cost" + suffix] = planned.optimized.cost
        record["cbo_partitions" + suffix] = planned.partitions
        return lambda: session.run(session.planner.plan(query.sql))[1]   # planning is timed too
    if config == "cbo-oracle":
        oracle = sessions["cbo-oracle"]
        planned_oracle = oracle.planner.plan(query.sql)   # counting happens here, untimed
        record["oracle_cost"] = planned_oracle.optimized.cost
        if "cbo" in sessions:
            record["same_plan_as_oracle"] = planned_oracle.plan == sessions["cbo"].planner.plan(query.sql).plan
        return lambda: oracle.run(planned_oracle)[1]
    return baselines.runner(config, query.sql)


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
