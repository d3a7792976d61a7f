"""Native baseline: the 22 TPC-H queries run directly on one engine with its own planner.

    python -m benchmarks.tpch.native --sf 1 --engine spark
    python -m benchmarks.tpch.native --sf 1 --engine postgres --timeout 300
    python -m benchmarks.tpch.native --sf 0.1 --engine spark --placement federated --check

With ``--repeat N`` each query runs N times and the fastest counts (all times are saved).
Prints a table and saves per-query times, row counts and answer digests as JSON (default
``benchmarks/results/native-<engine>-<placement>-sf<X>.json``), with the machine and the
engine's planner settings. This is the yardstick every later optimizer result is compared
against. A query that exceeds ``--timeout`` (PostgreSQL only; it cancels server side) is
recorded as ``timeout``. ``--check`` also compares every answer with DuckDB's.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.cli import run_main
from benchmarks.machine import machine_info
from benchmarks.tpch.queries import select
from cbo.answers import compare, digest, is_ordered
from cbo.sources.catalog import load_catalog
from cbo.engines.native import ENGINES, open_engine
from cbo.errors import CboError, QueryTimeout
from cbo.app.progress import say
from cbo.workloads import tpch

DEFAULT_PLACEMENT = {"duckdb": "all-spark", "spark": "all-spark", "postgres": "all-postgres"}
RESULTS = Path(__file__).resolve().parents[1] / "results"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tpch.native", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
    parser.add_argument("--engine", choices=ENGINES, required=True)
    parser.add_argument("--placement", choices=tpch.PLACEMENTS,
                        help="where the tables live (default: all-spark for duckdb/spark, all-postgres for postgres)")
    parser.add_argument("--queries", help="comma-separated subset, e.g. q1,q6 (default: all 22)")
    parser.add_argument("--timeout", type=float, default=300.0, help="per-query limit in seconds for PostgreSQL (default 300)")
    parser.add_argument("--postgres", default="local",
                        help="'local' (cbo's throwaway server, default) or a PostgreSQL URL")
    parser.add_argument("--mariadb", default="local",
                        help="for federated3: 'local' (cbo's throwaway server, default) or a MariaDB URL")
    parser.add_argument("--data-dir", type=Path, help="where the Parquet files are (default: the cache directory)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each query N times and report the fastest (default 1; all times are saved)")
    parser.add_argument("--check", action="store_true", help="also compare every answer with DuckDB's")
    parser.add_argument("--out", type=Path, help="JSON file to write")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    placement = args.placement or DEFAULT_PLACEMENT[args.engine]
    if args.engine == "postgres" and placement != "all-postgres":
        raise CboError("the postgres engine runs the all-postgres placement")
    if args.engine == "duckdb" and placement in ("federated", "federated3"):
        say("note: DuckDB reads the Parquet copies of the PostgreSQL and MariaDB tables")
    queries = select(args.queries.split(",") if args.queries else None)
    needs_pg = placement != "all-spark"
    catalogs = tpch.prepare(args.sf, data_dir=args.data_dir, postgres=args.postgres if needs_pg else None,
                            mariadb=args.mariadb if placement == "federated3" else None, progress=say)
    catalog = load_catalog(catalogs[placement])
    reference = open_engine("duckdb", load_catalog(catalogs["all-spark"])) if args.check else None

    say(f"starting {args.engine} ...")
    engine = open_engine(args.engine, catalog, timeout_s=args.timeout)
    for key, value in engine.settings().items():
        say(f"  {key} = {value}")
    results = []
    header = f"{'query':<6} {'status':<8} {'rows':>7} {'seconds':>9}  digest" + ("            matches" if reference else "")
    print(header)
    for query in queries:
        record: dict[str, object] = {"query": query.name}
        started = time.perf_counter()
        try:
            times = []
            for _ in range(max(1, args.repeat)):
                _, rows, seconds = engine.run(query.sql)
                times.append(round(seconds, 4))
            ordered = is_ordered(query.sql)
            record.update(status="ok", seconds=min(times), times=times, rows=len(rows),
                          digest=digest(rows, ordered=ordered))
            if reference:
                _, expected, _ = reference.run(query.sql)
                verdict = compare(expected, rows, ordered=ordered)
                record["matches_duckdb"] = verdict.matches
                if not verdict.matches:
                    record["mismatch"] = verdict.detail
        except QueryTimeout:
            record.update(status="timeout", seconds=round(time.perf_counter() - started, 4), rows=None, digest=None)
        except Exception as exc:  # one failing query must not hide the other 21
            record.update(status="error", seconds=round(time.perf_counter() - started, 4), rows=None, digest=None,
                          error=str(exc).strip().splitlines()[0][:300])
        results.append(record)
        line = (f"{query.name:<6} {record['status']:<8} {record['rows'] if record['rows'] is not None else '-':>7} "
                f"{record['seconds']:>9.3f}  {record['digest'] or '-':<16}")
        if reference and "matches_duckdb" in record:
            line += "  " + ("yes" if record["matches_duckdb"] else f"NO: {record.get('mismatch')}")
        if record["status"] == "error":
            line += f"  {record['error']}"
        print(line, flush=True)

    ok = [r for r in results if r["status"] == "ok"]
    total = sum(float(r["seconds"]) for r in ok)  # type: ignore[arg-type]
    print(f"{len(ok)}/{len(results)} finished; total {total:.2f} s over finished queries")
    report = {"benchmark": "tpch-native", "engine": args.engine, "placement": placement, "scale_factor": args.sf,
              "repeat": max(1, args.repeat),
              "timeout_s": args.timeout if args.engine == "postgres" else None,
              "machine": machine_info(), "settings": engine.settings(), "queries": results}
    out = args.out or RESULTS / f"native-{args.engine}-{placement}-sf{args.sf:g}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=2))
    tmp.replace(out)
    say(f"saved {out}")
    engine.close()
    failed = [r for r in results if r["status"] == "error" or r.get("matches_duckdb") is False]
    return 1 if failed else 0


if __name__ == "__main__":
    run_main(main)
