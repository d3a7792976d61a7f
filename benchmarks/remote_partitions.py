"""A/B: pushed remote queries read whole vs in parallel partitions (``cbo.exec.remote_partitions``).

    python -m benchmarks.remote_partitions --sf 1 --placement all-postgres
    python -m benchmarks.remote_partitions --sf 1 --queries q17,big_join --repeat 1

One cbo session (``join_pushdown_strategy`` AUTOMATIC: the plans are the same in both arms);
the arms differ only in how each pushed subplan's query is read: ``whole`` (one JDBC partition,
as before) or ``partitioned`` (split on a column of its result where that is sound, at most one
partition per core). Each query runs once untimed in both arms, then ``--repeat`` rounds
alternating which arm goes first; the fastest time counts. A time is planning plus running the
plan with its rows counted and summed into an order-free checksum in Spark (every row read and
computed, none collected into Python, so a query with a large result measures the read, not
Python); every run's answer (count and checksum) must be the same in both arms. A query whose
remote queries are read the same way in both arms (none split) gets one timed round.

Besides TPC-H queries (``q17``, ``q3`` ...), ``big_join`` is a pushed join with a large result
(lineitem joined with the orders of 1992-1993, about 1.85 million rows at SF 1).

The table goes to stdout; JSON and a plot to ``benchmarks/results/remote-partitions-<placement>-sf<X>``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from benchmarks.cli import run_main
from benchmarks.machine import machine_info
from cbo.errors import CboError

EXTRA_QUERIES = {
    "big_join": "select l_orderkey, l_extendedprice, l_discount, o_orderdate, o_custkey "
                "from lineitem join orders on l_orderkey = o_orderkey where o_orderdate < date '1994-01-01'",
}
ARMS = ("whole", "partitioned")
RESULTS = Path(__file__).parent / "results"


def _query_text(name: str) -> str:
    if name in EXTRA_QUERIES:
        return EXTRA_QUERIES[name]
    from cbo.workloads.tpch_queries import QUERY_DIR

    number = int(name.lstrip("qQ"))
    path = QUERY_DIR / f"q{number:02d}.sql"
    if not path.is_file():
        raise CboError(f"unknown query {name!r} (TPC-H q1..q22 or one of {', '.join(EXTRA_QUERIES)})")
    return path.read_text()


def _catalog(sf: float, placement: str) -> Path:
    from cbo.paths import cache_dir

    path = cache_dir() / "tpch" / f"sf{sf:g}" / "catalogs" / f"{placement}.toml"
    if not path.is_file():
        raise CboError(f"no catalog {path}: run `cbo datagen tpch --sf {sf:g}` first")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--placement", default="all-postgres")
    parser.add_argument("--queries", default="q17,q20,q03,big_join")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows-per-partition", type=float, default=None,
                        help="estimated result rows per partition (default: cbo's, 250,000); lower for small runs")
    parser.add_argument("--catalog", type=Path, help="a catalog file instead of the cache's for --sf and --placement")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    import cbo
    from cbo.exec.remote import RemoteQueries

    session = cbo.Session(args.catalog or _catalog(args.sf, args.placement))
    session.query("select count(*) from region")      # Spark up, the executor made
    executor = session._spark()
    views = executor.views
    per = {"rows_per_partition": args.rows_per_partition} if args.rows_per_partition else {}
    remotes = {"whole": RemoteQueries(session.catalog, pushed_partitions=0, **per),
               "partitioned": RemoteQueries(session.catalog, pushed_partitions=views.partitions, **per)}

    def run(arm: str, sql: str) -> tuple[float, tuple[int, int], list[str]]:
        """Plan and run in ``arm``: seconds, (rows, checksum) of the answer, how each remote
        query was read."""
        from pyspark.sql import functions as F

        views.remote = remotes[arm]
        started = time.perf_counter()
        planned = session.planner.plan(sql)
        planned_executor = session._spark(planned)
        frame = planned_executor.dataframe(planned.plan, planned.names)
        # every row read and computed, and summed into an order-free checksum in Spark: none
        # goes to Python, so a large result measures the read
        digest = frame.agg(F.count(F.lit(1)), F.sum(F.xxhash64(*frame.columns).cast("decimal(38,0)")))
        with planned_executor.own_join_order():
            row = digest.collect()[0]
        seconds = time.perf_counter() - started
        splits = [r.describe_partitions() or "whole"
                  for r in remotes[arm].pushed(planned.plan, planned_executor.operators).values()]
        return seconds, (int(row[0]), int(row[1] or 0)), splits

    out = args.out or RESULTS / f"remote-partitions-{args.placement}-sf{args.sf:g}"
    results: list[dict[str, Any]] = []

    def save() -> None:   # after every query: a run cut short keeps what it measured
        body = {"benchmark": "remote-partitions", "placement": args.placement, "scale_factor": args.sf,
                "repeat": args.repeat, "read_partitions": views.partitions,
                "rows_per_partition": args.rows_per_partition or "default", "machine": machine_info(),
                "queries": results}
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(body, indent=2, default=str))
        _plot(body, out.with_suffix(".png"))

    for name in [q.strip() for q in args.queries.split(",") if q.strip()]:
        sql = _query_text(name)
        entry: dict[str, Any] = {"query": name, "times": {a: [] for a in ARMS}, "reads": {}}
        answers: dict[str, set[tuple[int, int]]] = {a: set() for a in ARMS}
        for arm in ARMS:                                   # warm-up
            _, answer, entry["reads"][arm] = run(arm, sql)
            answers[arm].add(answer)
        # the same reads in both arms (nothing split): one timed round is enough
        entry["split"] = entry["reads"]["whole"] != entry["reads"]["partitioned"]
        rounds = args.repeat if entry["split"] else 1
        for round_ in range(rounds):
            for arm in (ARMS if round_ % 2 == 0 else ARMS[::-1]):
                seconds, answer, _ = run(arm, sql)
                entry["times"][arm].append(round(seconds, 4))
                answers[arm].add(answer)
        entry["rows"] = next(iter(answers["whole"]))[0]
        entry["answers_match"] = len(answers["whole"] | answers["partitioned"]) == 1
        entry["seconds"] = {a: min(entry["times"][a]) for a in ARMS}
        entry["partitioned_vs_whole"] = round(entry["seconds"]["partitioned"] / entry["seconds"]["whole"], 3)
        results.append(entry)
        seconds = entry["seconds"]
        print(f"{name:10} whole {seconds['whole']:7.2f} s  partitioned {seconds['partitioned']:7.2f} s"
              f"  ratio {entry['partitioned_vs_whole']:.3f}  rows {entry['rows']:,}  match {entry['answers_match']}"
              f"  reads: {'; '.join(entry['reads']['partitioned']) or 'no remote query'}"
              f"{'' if entry['split'] else ' (the same reads in both arms)'}", flush=True)
        save()
    print(f"saved {out.with_suffix('.json')} and .png")

    return 0 if all(r["answers_match"] for r in results) else 1


def _plot(body: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    queries = [r["query"] for r in body["queries"]]
    fig, ax = plt.subplots(figsize=(1.6 * len(queries) + 2, 3.5))
    for i, arm in enumerate(ARMS):
        ax.bar([x + (i - 0.5) * 0.4 for x in range(len(queries))], [r["seconds"][arm] for r in body["queries"]],
               0.4, label=arm)
    ax.set_xticks(range(len(queries)), queries)
    ax.set_ylabel("seconds (fastest of rounds)")
    ax.set_title(f"pushed queries read whole vs partitioned, {body['placement']} SF {body['scale_factor']:g}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    run_main(main)
