"""``cbo demo``: TPC-H (or, with ``--workload tpcds``, TPC-DS) end to end on the embedded default set-up.

Generates TPC-H (SF 0.1 by default) into the cache directory unless present, starts the local
PostgreSQL, loads it, writes the three placement catalogs, then runs the 22 queries on Spark
over the federated placement (customer, orders, nation, region read from PostgreSQL over JDBC;
the rest from Parquet) through cbo's own plan, and checks every answer against DuckDB on the
Parquet copies. Spark's own planner runs each query too, for comparison of times. Statistics
of every table are collected into the store first (skipped when fresh).

Times are fair between the two planners (``schedule``): the first query runs once through each
untimed before anything is timed, so the JVM's warm-up (class loading, JIT, the first JDBC
connections) lands on neither, and the two alternate which runs first from query to query, so
whatever one run leaves warm (file listings, caches) helps each side equally often.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from cbo.answers import compare, is_ordered
from cbo.app.progress import say, step
from cbo.app.session import Session
from cbo.engines.native import DuckDBNative, SparkNative
from cbo.sources.catalog import load_catalog
from cbo.sources.statistics import analyze
from cbo.workloads import tpch
from cbo.workloads.tpch_queries import select


@dataclass
class DemoRow:
    query: str
    rows: int | None
    matches: bool
    cbo_s: float
    spark_s: float
    duckdb_s: float
    detail: str = ""


PLANNERS = ("cbo", "spark")


def schedule(queries: list[str]) -> list[tuple[str, str, bool]]:
    """(query, planner, timed) in the order the demo runs them: an untimed warm-up of the first
    query through both planners, then every query through both, alternating which goes first."""
    if not queries:
        return []
    order = [(queries[0], planner, False) for planner in PLANNERS]
    for index, query in enumerate(queries):
        first, second = PLANNERS if index % 2 == 0 else PLANNERS[::-1]
        order += [(query, first, True), (query, second, True)]
    return order


def run_demo(sf: float = 0.1, postgres: str | None = "local", placement: str = "federated",
             queries: list[str] | None = None, mariadb: str | None = "local") -> int:
    started = time.perf_counter()
    with step(f"preparing TPC-H sf {sf:g} ({placement})"):
        catalogs = tpch.prepare(sf, postgres=postgres if placement != "all-spark" else None,
                                mariadb=mariadb if placement == "federated3" else None, progress=say)
    catalog = load_catalog(catalogs[placement])
    reference = DuckDBNative(load_catalog(catalogs["all-spark"]))
    with step("Spark: registering the catalog's tables"):  # Spark itself says when it starts
        native = SparkNative(catalog, step=step)
        session = Session(catalog, engine="spark")
    with step("collecting statistics (skipped where fresh)"):
        analyze(catalog, progress=say, step=step)
    chosen = select(queries)
    by_name = {query.name: query for query in chosen}

    def run(planner: str, sql: str) -> tuple[list, float]:
        if planner == "cbo":
            run_started = time.perf_counter()
            _, got = session.query(sql)
            return got, time.perf_counter() - run_started
        _, got, seconds = native.run(sql)
        return got, seconds

    plan = schedule([query.name for query in chosen])
    warm = [name for name, _, timed in plan if not timed]
    if warm:
        with step(f"warming up Spark: {warm[0]} once through each planner, untimed"):
            for name, planner, timed in plan:
                if not timed:
                    try:
                        run(planner, by_name[name].sql)
                    except Exception:  # the timed run reports it
                        pass
    rows: list[DemoRow] = []
    results: dict[str, dict[str, tuple[list, float]]] = {}
    failed: dict[str, str] = {}
    names = list(by_name)
    for name, planner, timed in plan:
        if not timed or name in failed:
            continue
        if name not in results:
            say(f"[{names.index(name) + 1}/{len(chosen)}] {name}")
        try:
            results.setdefault(name, {})[planner] = run(planner, by_name[name].sql)
        except Exception as exc:  # report and go on: one failure must not hide the others
            failed[name] = f"{planner}: " + (str(exc).strip().splitlines() or [type(exc).__name__])[0][:120]
    for query in chosen:
        if query.name in failed:
            rows.append(DemoRow(query.name, None, False, 0.0, 0.0, 0.0, failed[query.name]))
            continue
        got, cbo_s = results[query.name]["cbo"]
        _, spark_s = results[query.name]["spark"]
        _, expected, duckdb_s = reference.run(query.sql)
        verdict = compare(expected, got, ordered=is_ordered(query.sql))
        rows.append(DemoRow(query.name, len(got), verdict.matches, cbo_s, spark_s, duckdb_s, verdict.detail))
    print_table(rows, placement, sf)
    matched = sum(r.matches for r in rows)
    print(f"{matched}/{len(rows)} answers match DuckDB; cbo on Spark {sum(r.cbo_s for r in rows):.2f} s, "
          f"Spark's own planner {sum(r.spark_s for r in rows):.2f} s; wall time {time.perf_counter() - started:.1f} s")
    return 0 if matched == len(rows) else 1


def print_table(rows: list[DemoRow], placement: str, sf: float) -> None:
    print(f"\nTPC-H sf {sf:g}, placement {placement}: cbo's plan on Spark, checked against DuckDB")
    print(f"{'query':<6} {'rows':>6}  {'answer':<8} {'cbo s':>7} {'spark s':>8} {'duckdb s':>9}")
    for r in rows:
        answer = "match" if r.matches else "DIFFERS"
        print(f"{r.query:<6} {r.rows if r.rows is not None else '-':>6}  {answer:<8} {r.cbo_s:>7.3f} {r.spark_s:>8.3f} "
              f"{r.duckdb_s:>9.3f}" + (f"  {r.detail}" if r.detail else ""))


@dataclass
class WorkloadRow:
    query: str
    outcome: str            # "match", "DIFFERS", "refused", "failed"
    rows: int | None = None
    plan_ms: float = 0.0
    cbo_s: float = 0.0
    duckdb_s: float = 0.0
    detail: str = ""


def run_tpcds_demo(sf: float = 0.01, postgres: str | None = "local", placement: str = "federated",
                   queries: list[str] | None = None) -> int:
    """``cbo demo --workload tpcds``: TPC-DS (SF 0.01 by default) generated into the cache unless
    present, the placement's catalog, statistics collected; each of the 99 queries (DuckDB's
    dialect) planned by cbo and run on Spark, its answer checked against DuckDB on the original
    SQL. A query cbo refuses (a construct it does not support yet, e.g. window functions) is
    listed with cbo's one-line reason; the exit status is non-zero if an answer differs or a
    planned query fails to run."""
    from cbo.errors import CboError
    from cbo.frontend.errors import SqlError
    from cbo.workloads import tpcds
    from cbo.workloads.tpcds_queries import DIALECT
    from cbo.workloads.tpcds_queries import select as select_tpcds

    started = time.perf_counter()
    chosen = select_tpcds(queries)
    with step(f"preparing TPC-DS sf {sf:g} ({placement})"):
        catalogs = tpcds.prepare(sf, postgres=postgres if placement != "all-spark" else None, progress=say)
    catalog = load_catalog(catalogs[placement])
    reference = DuckDBNative(load_catalog(catalogs["all-spark"]))
    with step("Spark: registering the catalog's tables"):
        session = Session(catalog, engine="spark", dialect=DIALECT)
    with step("collecting statistics (skipped where fresh)"):
        analyze(catalog, progress=say)
    rows: list[WorkloadRow] = []
    for index, query in enumerate(chosen, start=1):
        say(f"[{index}/{len(chosen)}] {query.name}")
        planning = time.perf_counter()
        try:
            planned = session.planner.plan(query.sql)
        except SqlError as exc:   # a construct cbo does not take yet: listed, not a failure
            rows.append(WorkloadRow(query.name, "refused", detail=str(exc)))
            continue
        plan_ms = 1000 * (time.perf_counter() - planning)
        try:
            run_started = time.perf_counter()
            got = session.run(planned)[1]
            cbo_s = time.perf_counter() - run_started
        except (CboError, Exception) as exc:   # report and go on: one failure must not hide the others
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
            rows.append(WorkloadRow(query.name, "failed", plan_ms=plan_ms, detail=first))
            continue
        _, expected, duckdb_s = reference.run(query.sql)
        verdict = compare(expected, got, ordered=is_ordered(query.sql, DIALECT))
        rows.append(WorkloadRow(query.name, "match" if verdict.matches else "DIFFERS", len(got), plan_ms, cbo_s,
                                duckdb_s, verdict.detail))
    print(f"\nTPC-DS sf {sf:g}, placement {placement}: cbo's plan on Spark, checked against DuckDB")
    print(f"{'query':<6} {'rows':>6}  {'answer':<8} {'plan ms':>8} {'cbo s':>7} {'duckdb s':>9}")
    for r in rows:
        print(f"{r.query:<6} {r.rows if r.rows is not None else '-':>6}  {r.outcome:<8} {r.plan_ms:>8.0f} "
              f"{r.cbo_s:>7.3f} {r.duckdb_s:>9.3f}" + (f"  {r.detail}" if r.detail else ""))
    counts = {o: sum(r.outcome == o for r in rows) for o in ("match", "DIFFERS", "failed", "refused")}
    print(f"{counts['match']}/{len(rows) - counts['refused']} planned answers match DuckDB "
          f"({counts['refused']} refused by cbo, {counts['DIFFERS']} differ, {counts['failed']} failed); "
          f"cbo on Spark {sum(r.cbo_s for r in rows):.2f} s; wall time {time.perf_counter() - started:.1f} s")
    return 0 if counts["DIFFERS"] == 0 and counts["failed"] == 0 else 1
