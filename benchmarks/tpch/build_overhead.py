"""What cbo costs before Spark runs a query: planning, and building the plan's DataFrame.

    python -m benchmarks.tpch.build_overhead --sf 1

Per TPC-H query, best of ``--repeat``: cbo's planning (parse, normalize, search), building the
DataFrame of the chosen plan (``SparkExecutor.dataframe``: rendering the plan's Spark SQL
statement, then Spark's parse and analysis of it), and, for
comparison, Spark SQL's parse and analysis of the query text over the same tables (temporary
views). Nothing is executed. Prints a table, saves JSON under ``benchmarks/results``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from benchmarks.cli import run_main
from benchmarks.machine import machine_info
from benchmarks.tpch.queries import select
from cbo.app.progress import say
from cbo.workloads import tpch

RESULTS = Path(__file__).resolve().parents[1] / "results"


def best_ms(action, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000.0)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tpch.build_overhead", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per query, best counts (default 3)")
    parser.add_argument("--out", type=Path, help="JSON file (default benchmarks/results/build-overhead-sf<X>.json)")
    args = parser.parse_args(argv)
    catalog_path = tpch.prepare(args.sf, postgres=None, progress=say)["all-spark"]

    from cbo.engines.spark import register_catalog
    from cbo.app.session import Session

    say("starting Spark ...")
    session = Session(catalog_path)
    session.query("select count(*) from region")
    spark = session._spark().spark
    register_catalog(spark, session.catalog)
    rows = []
    print(f"{'query':<6}{'plan ms':>10}{'DataFrame ms':>14}{'Spark SQL ms':>14}", flush=True)
    for query in select(None):
        planned = session.planner.plan(query.sql)
        executor = session._spark(planned)
        with executor.own_join_order():
            executor.dataframe(planned.plan, planned.names)   # first build: table views made
            row = {"query": query.name,
                   "plan_ms": best_ms(lambda: session.planner.plan(query.sql), args.repeat),
                   "dataframe_ms": best_ms(lambda: executor.dataframe(planned.plan, planned.names), args.repeat)}
        row["spark_sql_ms"] = best_ms(lambda: spark.sql(query.sql), args.repeat)
        rows.append({k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()})
        print(f"{query.name:<6}{row['plan_ms']:>10.1f}{row['dataframe_ms']:>14.1f}{row['spark_sql_ms']:>14.1f}", flush=True)
    summary = {key: {"median": statistics.median(r[key] for r in rows), "max": max(r[key] for r in rows)}
               for key in ("plan_ms", "dataframe_ms", "spark_sql_ms")}
    for key, values in summary.items():
        print(f"{key}: median {values['median']:.1f}, max {values['max']:.1f}")
    out = args.out or RESULTS / f"build-overhead-sf{args.sf:g}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_suffix(".json.tmp")
    temporary.write_text(json.dumps({"benchmark": "build-overhead", "scale_factor": args.sf, "repeat": args.repeat,
                                     "machine": machine_info(), "summary": summary, "queries": rows}, indent=2))
    temporary.replace(out)
    say(f"saved {out}")
    return 0


if __name__ == "__main__":
    run_main(main)
