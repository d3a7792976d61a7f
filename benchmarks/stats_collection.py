"""Statistics collection time: cbo's Spark collector vs Spark's own ANALYZE, and PostgreSQL's path.

    python -m benchmarks.stats_collection --sf 1

In one run, on the all-spark TPC-H tables: (a) cbo's Spark collector (counts, NULLs, HLL
distinct counts, min/max, widths, MCVs with exact counts, equi-depth histograms with per-bucket
distinct counts, column groups) and (b) Spark's ``ANALYZE TABLE ... COMPUTE STATISTICS FOR ALL
COLUMNS`` with ``spark.sql.statistics.histogram.enabled=true`` (no MCVs, no string histograms),
over the same Parquet files registered as tables; then (c) cbo's PostgreSQL path (reading
pg_class/pg_stats, no ANALYZE) for the all-postgres tables. Prints a table and the ratio a/b,
saves JSON to benchmarks/results/stats-collection-sf<X>.json.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.machine import machine_info
from cbo.sources.catalog import load_catalog
from cbo.engines.spark import read_table, spark_session
from cbo.app.progress import say
from cbo.sources.statistics import column_groups, fingerprint
from cbo.workloads import tpch
from cbo.connectors.postgres.statistics import collect as pg_collect
from stats.spark_collector import collect as spark_collect

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stats_collection", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    catalogs = tpch.prepare(args.sf, postgres="local", progress=say)
    catalog = load_catalog(catalogs["all-spark"])
    spark = spark_session(catalog.spark)
    spark.conf.set("spark.sql.statistics.histogram.enabled", "true")
    spark.range(10).count()  # warm the JVM so neither side pays the start-up

    rows = []
    for table in catalog.tables():
        frame = read_table(spark, catalog, table)
        started = time.perf_counter()
        spark_collect(frame, table.qualified_name, fingerprint(catalog, table), column_groups=column_groups(table))
        ours = time.perf_counter() - started
        name = f"cbo_bench_{table.name}"
        spark.sql(f"drop table if exists {name}")
        spark.catalog.createTable(name, path=str(table.path), source="parquet")
        started = time.perf_counter()
        spark.sql(f"analyze table {name} compute statistics for all columns")
        theirs = time.perf_counter() - started
        spark.sql(f"drop table if exists {name}")
        rows.append({"table": table.name, "cbo_spark_s": round(ours, 3), "spark_analyze_s": round(theirs, 3)})
        say(f"{table.name}: cbo {ours:.2f} s, Spark ANALYZE {theirs:.2f} s")

    from cbo.connectors.postgres import client as postgres

    pg_catalog = load_catalog(catalogs["all-postgres"])
    source = pg_catalog.sources["pg"]
    started = time.perf_counter()
    with postgres.connect(postgres.address_of(source)) as conn:
        for table in pg_catalog.tables():
            pg_collect(conn, source.schema or "public", table.name, table.qualified_name)
    postgres_s = time.perf_counter() - started

    ours_total = sum(r["cbo_spark_s"] for r in rows)
    theirs_total = sum(r["spark_analyze_s"] for r in rows)
    print(f"{'table':<10} {'cbo (s)':>9} {'Spark ANALYZE (s)':>18}")
    for r in rows:
        print(f"{r['table']:<10} {r['cbo_spark_s']:>9.2f} {r['spark_analyze_s']:>18.2f}")
    print(f"{'total':<10} {ours_total:>9.2f} {theirs_total:>18.2f}   ratio cbo/Spark = {ours_total / theirs_total:.2f}")
    print(f"PostgreSQL path, all {len(list(pg_catalog.tables()))} tables: {postgres_s:.3f} s")
    report = {"benchmark": "stats-collection", "scale_factor": args.sf, "machine": machine_info(), "tables": rows,
              "cbo_spark_total_s": ours_total, "spark_analyze_total_s": theirs_total,
              "ratio": ours_total / theirs_total, "postgres_path_s": postgres_s}
    out = args.out or RESULTS / f"stats-collection-sf{args.sf:g}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    say(f"saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
