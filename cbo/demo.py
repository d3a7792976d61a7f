"""``cbo demo``: TPC-H end to end on the embedded default set-up.

Generates TPC-H (SF 0.1 by default) into the cache directory unless present, starts the local
PostgreSQL, loads it, writes the three placement catalogs, then runs the 22 queries on Spark
over the federated placement (customer, orders, nation, region read from PostgreSQL over JDBC;
the rest from Parquet) through cbo's own plan, and checks every answer against DuckDB on the
Parquet copies. Spark's own planner runs each query too, for comparison of times. Statistics
of every table are collected into the store first (skipped when fresh); the estimator that
will use them lands with the next issues.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from cbo.workloads.tpch_queries import select
from cbo.answers import compare, is_ordered
from cbo.catalog import load_catalog
from cbo.engines.native import DuckDBNative, SparkNative
from cbo.progress import say, step
from cbo.session import Session
from cbo.statistics import analyze
from cbo.workloads import tpch


@dataclass
class DemoRow:
    query: str
    rows: int | None
    matches: bool
    cbo_s: float
    spark_s: float
    duckdb_s: float
    detail: str = ""


def run_demo(sf: float = 0.1, postgres: str | None = "local", placement: str = "federated",
             queries: list[str] | None = None) -> int:
    started = time.perf_counter()
    with step(f"preparing TPC-H sf {sf:g} ({placement})"):
        catalogs = tpch.prepare(sf, postgres=postgres if placement != "all-spark" else None, progress=say)
    catalog = load_catalog(catalogs[placement])
    reference = DuckDBNative(load_catalog(catalogs["all-spark"]))
    with step("Spark: registering the catalog's tables"):  # Spark itself says when it starts
        native = SparkNative(catalog)
        session = Session(catalog, engine="spark")
    with step("collecting statistics (skipped where fresh)"):
        analyze(catalog, progress=say)
    chosen = select(queries)
    rows: list[DemoRow] = []
    for index, query in enumerate(chosen, start=1):
        say(f"[{index}/{len(chosen)}] {query.name}")
        try:
            cbo_started = time.perf_counter()
            _, got = session.query(query.sql)
            cbo_s = time.perf_counter() - cbo_started
            _, _, spark_s = native.run(query.sql)
        except Exception as exc:  # report and go on: one failure must not hide the others
            rows.append(DemoRow(query.name, None, False, 0.0, 0.0, 0.0, str(exc).strip().splitlines()[0][:120]))
            continue
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
