"""Spark's adaptive execution under cbo's plans: each plan-preserving feature measured alone and
in the chosen combination, against adaptive execution off, on the same plans.

    python -m benchmarks.spark_adaptive --sf 1
    python -m benchmarks.spark_adaptive --sf 0.01 --repeat 1 --workloads not-in --out /tmp/a.json

What it measures: for every query, cbo plans once (``spark_adaptive`` does not change the
plan) and the plan runs in one Spark session under each configuration:

* ``off``: adaptive execution off, the plan run exactly as planned (the yardstick);
* ``aqe-bare``: adaptive execution on with none of the features below: what running stage by
  stage and re-planning after each stage costs by itself;
* ``coalesce``, ``skew_join``, ``local_read``, ``empty_relation``: one feature each
  (``cbo.exec.spark_adaptive`` says what each does);
* ``preserving``: the combination ``spark_adaptive`` defaults to (all four).

Workloads: ``tpch`` (the 22 queries), ``existential`` (seed 003's IN family,
``benchmarks.existential.cases``), ``not-in`` (single-column NOT IN, with and without a NULL in
the subquery: where empty-relation propagation applies), and ``tpcds`` (the 99 queries in
DuckDB's dialect; those cbo refuses are listed as refused). Default: all four.

Timing follows the TPC-H runner: per query a cold run, one untimed warm-up run per
configuration, then ``--repeat`` rounds in an order rotated from round to round and reversed
every other round; the fastest run counts. Each warm-up run also counts Spark's jobs, the stages
that ran (skipped ones not counted) and their tasks (``JobCounter``), which do not depend on the
machine's load. Every answer is compared with the ``off`` run's (adaptive execution must not
change it). Reported: per query, seconds and ratio to ``off`` per configuration; per workload
and overall, the geometric mean of those ratios, the worst and best query and the queries
faster or slower by more than 5 %. JSON goes to ``benchmarks/results/spark-adaptive-sf<X>.json``;
the table to stdout, progress to stderr. Timings mean something only on a quiet machine.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.cli import run_main
from benchmarks.machine import machine_info
from benchmarks.tpch.run import ensure_statistics, geomean, rotated
from cbo.answers import compare, is_ordered
from cbo.app.progress import say
from cbo.errors import CboError
from cbo.exec.spark_adaptive import adaptive_settings
from cbo.settings import ADAPTIVE_OFF, PRESERVING, AdaptiveFeature, describe_adaptive

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

RESULTS = Path(__file__).resolve().parent / "results"
# configuration -> the features it runs with (``aqe-bare`` is AQE on with none: ``_bare``)
CONFIGS: dict[str, frozenset[AdaptiveFeature]] = {
    "off": ADAPTIVE_OFF, "aqe-bare": ADAPTIVE_OFF,
    **{f.value: frozenset({f}) for f in AdaptiveFeature},
    "preserving": PRESERVING}
WORKLOADS = ("tpch", "existential", "not-in", "tpcds")
NOT_IN = (
    ("NULL in the subquery", "select o_orderkey, o_totalprice from orders where o_custkey not in "
     "(select case when c_nationkey = 3 then null else c_custkey end from customer where c_acctbal > 0) "
     "order by o_totalprice, o_orderkey"),
    ("NULL in the subquery, grouped", "select o_orderpriority, count(*) from orders where o_custkey not in "
     "(select case when c_nationkey = 3 then null else c_custkey end from customer) group by o_orderpriority"),
    ("nullable subquery, no NULL", "select o_orderpriority, count(*) from orders where o_custkey not in "
     "(select case when c_nationkey = 3 then null else c_custkey end from customer where c_nationkey <> 3) "
     "group by o_orderpriority"),
)


@dataclass(frozen=True)
class Query:
    workload: str
    name: str
    sql: str
    dialect: str | None = None


class JobCounter:
    """The Spark jobs started inside a ``with`` block on this thread, the stages of them that ran
    (a stage whose shuffle output was already there is skipped, not counted) and their tasks;
    read from Spark's status tracker by a job group of the block's own. Spark's adaptive
    execution runs each query stage as a job of its own, so its jobs outnumber the same plan's
    without it: stages and tasks are the figures to compare."""

    _groups = itertools.count()
    _PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")

    def __init__(self, spark: SparkSession):
        self.context = spark.sparkContext
        self.jobs = self.stages = self.tasks = 0

    def __enter__(self) -> JobCounter:
        self._saved = {key: self.context.getLocalProperty(key) for key in self._PROPERTIES}
        self.group = f"cbo-counted-{next(self._groups)}"
        self.context.setJobGroup(self.group, "cbo: jobs counted")
        return self

    def __exit__(self, *exc: object) -> None:
        for key, value in self._saved.items():
            self.context.setLocalProperty(key, value)  # type: ignore[arg-type]  # None removes it
        tracker = self.context.statusTracker()
        ids = tracker.getJobIdsForGroup(self.group)
        self.jobs = len(ids)
        for job in filter(None, map(tracker.getJobInfo, ids)):
            for stage in filter(None, map(tracker.getStageInfo, job.stageIds)):
                if stage.numCompletedTasks > 0:
                    self.stages += 1
                    self.tasks += stage.numCompletedTasks


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.spark_adaptive", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
    parser.add_argument("--workloads", help=f"comma-separated subset of {','.join(WORKLOADS)} (default: all)")
    parser.add_argument("--configs", help=f"comma-separated subset of {','.join(CONFIGS)} (default: all; off always)")
    parser.add_argument("--queries", help="run only queries whose name contains one of these (comma-separated)")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds per query and configuration (default 3)")
    parser.add_argument("--out", type=Path, help="JSON file (default benchmarks/results/spark-adaptive-sf<X>.json)")
    return parser.parse_args(argv)


def _choose(text: str | None, known: tuple[str, ...], what: str) -> list[str]:
    if not text:
        return list(known)
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [c for c in chosen if c not in known]
    if unknown:
        raise CboError(f"unknown {what} {', '.join(unknown)} (known: {', '.join(known)})")
    return chosen


def workload_queries(workload: str) -> list[Query]:
    if workload == "tpch":
        from cbo.workloads.tpch_queries import all_queries

        return [Query(workload, q.name, q.sql) for q in all_queries()]
    if workload == "existential":
        from benchmarks.existential.cases import cases

        return [Query(workload, c.name, c.sql) for c in cases()]
    if workload == "not-in":
        return [Query(workload, name, sql) for name, sql in NOT_IN]
    from cbo.workloads import tpcds_queries

    return [Query(workload, q.name, q.sql, tpcds_queries.DIALECT) for q in tpcds_queries.all_queries()]


def catalog_for(workload: str, sf: float) -> Path:
    if workload == "tpcds":
        from cbo.workloads import tpcds

        return Path(tpcds.prepare(sf, postgres=None, progress=say)["all-spark"])
    from cbo.workloads import tpch

    return Path(tpch.prepare(sf, postgres=None, progress=say)["all-spark"])


@contextmanager
def _bare(executor: Any) -> Iterator[None]:
    """``aqe-bare``: inside the executor's settings, adaptive execution on with every feature off
    (``adaptive_settings`` of any feature, that feature then switched off too)."""
    values = adaptive_settings(frozenset({AdaptiveFeature.COALESCE}), executor.shuffle_partitions,
                               executor.spark.conf.get("spark.sql.adaptive.optimizer.excludedRules", None))
    values["spark.sql.adaptive.coalescePartitions.enabled"] = "false"
    values["spark.sql.adaptive.optimizer.excludedRules"] += \
        ",org.apache.spark.sql.execution.adaptive.AQEPropagateEmptyRelation"
    with executor.own_join_order():
        saved = {key: executor.spark.conf.get(key, None) for key in values}
        for key, value in values.items():
            executor.spark.conf.set(key, value)
        try:
            yield
        finally:
            for key, value in saved.items():
                if value is None:
                    executor.spark.conf.unset(key)
                else:
                    executor.spark.conf.set(key, value)


def runner(session: Any, planned: Any, config: str) -> Callable[[], list[tuple[Any, ...]]]:
    """A function that runs the planned query once under ``config`` and returns its rows."""
    executor = session._spark(planned)
    executor.adaptive = CONFIGS[config]
    if config != "aqe-bare":
        return lambda: executor.collect(planned.plan, planned.names)[0]

    def run() -> list[tuple[Any, ...]]:
        with _bare(executor):
            return [tuple(r) for r in executor.dataframe(planned.plan, planned.names).collect()]
    return run


def run_query(query: Query, index: int, session: Any, configs: list[str], repeat: int) -> dict:
    record: dict = {"workload": query.workload, "query": query.name, "seconds": {}, "times": {}, "jobs": {},
                    "stages": {}, "tasks": {}, "matches": {}, "problems": {}}
    try:
        planned = session._plan(query.sql)
    except CboError as exc:   # a query cbo refuses: reported, not run
        record["refused"] = str(exc).splitlines()[0][:300]
        return record
    record["plan_ms"] = round(planned.optimized.counters.elapsed_ms, 2) if planned.optimized else None
    ordered = is_ordered(query.sql, query.dialect)
    runs = {config: runner(session, planned, config) for config in configs}
    spark = session._spark().spark
    expected: list | None = None

    def once(config: str, counted: bool) -> float | None:
        nonlocal expected
        try:
            counter = JobCounter(spark)
            started = time.perf_counter()
            with counter:
                rows = runs[config]()
            seconds = time.perf_counter() - started
        except Exception as exc:  # one failure must not hide the rest
            record["matches"][config] = False
            record["problems"][config] = str(exc).strip().splitlines()[0][:300]
            return None
        if counted:
            record["jobs"][config], record["stages"][config], record["tasks"][config] = \
                counter.jobs, counter.stages, counter.tasks
        if config == "off" and expected is None:
            expected = rows
        elif expected is not None:
            verdict = compare(expected, rows, ordered=ordered)
            record["matches"][config] = record["matches"].get(config, True) and verdict.matches
            if not verdict.matches:
                record["problems"][config] = verdict.detail
        return seconds

    order = rotated(list(runs), index)
    once("off", counted=False)   # cold run (file caches, the tables' views); gives the answer
    for config in order:   # warm-up, untimed; Spark's jobs, stages and tasks counted
        once(config, counted=True)
    for round_index in range(max(1, repeat)):
        current = rotated(list(runs), index + round_index)
        for config in (current[::-1] if round_index % 2 else current):
            if record["problems"].get(config):
                continue
            seconds = once(config, counted=False)
            if seconds is not None:
                record["times"].setdefault(config, []).append(round(seconds, 4))
    for config, times in record["times"].items():
        if not record["problems"].get(config):
            record["seconds"][config] = min(times)
    off = record["seconds"].get("off")
    record["ratio"] = {c: round(s / off, 4) for c, s in record["seconds"].items() if off and c != "off"}
    return record


def summarize(records: list[dict], configs: list[str]) -> dict:
    summary: dict = {}
    groups = {w: [r for r in records if r["workload"] == w] for w in dict.fromkeys(r["workload"] for r in records)}
    groups["all"] = records
    for group, rows in groups.items():
        found: dict = {"queries": len(rows), "refused": sum("refused" in r for r in rows)}
        for config in configs:
            if config == "off":
                continue
            ratios = {r["query"]: r["ratio"][config] for r in rows if config in r.get("ratio", {})}
            if not ratios:
                continue
            worst = max(ratios, key=ratios.__getitem__)
            best = min(ratios, key=ratios.__getitem__)
            found[config] = {"geomean_vs_off": round(geomean(list(ratios.values())) or 0, 4),
                             "worst": [worst, ratios[worst]], "best": [best, ratios[best]],
                             "faster_by_5pct": sum(v < 0.95 for v in ratios.values()),
                             "slower_by_5pct": sum(v > 1.05 for v in ratios.values()),
                             "stages": sum(r["stages"].get(config, 0) for r in rows),
                             "tasks": sum(r["tasks"].get(config, 0) for r in rows)}
        found["off"] = {"stages": sum(r["stages"].get("off", 0) for r in rows),
                        "tasks": sum(r["tasks"].get("off", 0) for r in rows)}
        summary[group] = found
    summary["all_answers_match"] = all(all(r["matches"].values()) for r in records)
    return summary


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    workloads = _choose(args.workloads, WORKLOADS, "workload")
    configs = _choose(args.configs, tuple(CONFIGS), "configuration")
    configs = ["off"] + [c for c in configs if c != "off"]
    wanted = [w.strip() for w in (args.queries or "").split(",") if w.strip()]

    from cbo.app.session import Session

    records: list[dict] = []
    statistics: dict = {}
    spark_conf: dict = {}
    print(f"{'query':<52}" + "".join(f"{c:>15}" for c in configs), flush=True)
    sessions: dict[str, Any] = {}
    for workload in workloads:
        key = "tpcds" if workload == "tpcds" else "tpch"
        if key not in sessions:
            path = catalog_for(workload, args.sf)
            statistics[key] = ensure_statistics(path)
            say(f"starting Spark and the {key} tables ...")
            dialect = workload_queries(workload)[0].dialect if workload == "tpcds" else None
            sessions[key] = Session(path, settings={"spark_adaptive": "off"},
                                    **({"dialect": dialect} if dialect else {}))
        session = sessions[key]
        if not spark_conf:
            from cbo.engines.spark import optimizer_settings

            spark_conf = optimizer_settings(session._spark().spark)
        queries = [q for q in workload_queries(workload) if not wanted or any(w in q.name for w in wanted)]
        for index, query in enumerate(queries):
            say(f"{workload} {query.name}")
            record = run_query(query, index, session, configs, args.repeat)
            records.append(record)
            print(line(record, configs), flush=True)
    summary = summarize(records, configs)
    print(json.dumps({k: v for k, v in summary.items() if k != "all_answers_match"}, indent=2))
    report = {"benchmark": "spark-adaptive", "scale_factor": args.sf, "repeat": args.repeat, "workloads": workloads,
              "configs": {c: ("AQE on, no feature" if c == "aqe-bare" else describe_adaptive(CONFIGS[c]))
                          for c in configs},
              "chosen": describe_adaptive(PRESERVING), "spark": spark_conf, "cbo_statistics": statistics,
              "machine": machine_info(), "summary": summary, "queries": records}
    out = args.out or RESULTS / f"spark-adaptive-sf{args.sf:g}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, default=str))
    say(f"saved {out}")
    if not summary["all_answers_match"]:
        say("some answers differ from the off run's: see 'problems' in the JSON")
        return 1
    return 0


def line(record: dict, configs: list[str]) -> str:
    name = f"{record['workload']} {record['query']}"[:51]
    if "refused" in record:
        return f"{name:<52}refused: {record['refused'][:80]}"
    cells = []
    for config in configs:
        seconds = record["seconds"].get(config)
        if seconds is None:
            cells.append(f"{'failed' if record['problems'].get(config) else '-':>15}")
        elif config == "off":
            cells.append(f"{seconds:>9.3f} s{record['stages'].get(config, 0):>3}st")
        else:
            cells.append(f"{record['ratio'][config]:>8.2f}x {record['stages'].get(config, 0):>3}st")
    return f"{name:<52}" + "".join(cells)


if __name__ == "__main__":
    run_main(main)
