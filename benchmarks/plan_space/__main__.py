"""How far is the chosen plan from the best plan in its space (a limit, not a peer): for each
TPC-H query, cbo's chosen plan and K plans drawn at random from its memo run on Spark.

    python -m benchmarks.plan_space --sf 1
    python -m benchmarks.plan_space --sf 1 --queries q03,q05,q09 --k 10 --minutes 13
    python -m benchmarks.plan_space --sf 0.01 --k 3        # smoke run

A draw (``Planner.draw``) is a plan drawn uniformly from the memo's plan space (every complete
physical plan it holds, join orders, strategies and exchanges, equally likely: ``cbo.memo.space``,
after Waas and Galindo-Legaria), costed by the same model as the chosen plan; each plan is
reported with its number in the space (``cbo plans QUERY --number N`` shows it again), and each
query with the size of its space. Draws equal to the chosen plan or to an earlier draw are
drawn again (up to 5K tries), so a query with a small space gets fewer than K. The chosen plan runs once untimed and ``--repeat``
times timed (the fastest counts); each draw runs once, cut off at ``--cutoff`` (10) times the
chosen plan's time (its Spark job group cancelled) and reported as cut off; a draw faster than
the chosen plan runs again, and so does the chosen plan, before the ratio is taken (noise). Each
draw's answer is compared with the chosen plan's.

Reported per query: chosen/fastest (fastest of the chosen plan and the finished draws), the
chosen plan's rank by time (1 = fastest), Spearman's correlation of estimated cost and time.
Overall: the median and worst chosen/fastest, and Spearman over all plans drawn (raw, and as
ratios to the chosen plan of their query; a cut-off draw counts at the cut-off time). JSON and a
plot go to ``benchmarks/results/plan-space-sf<X>.{json,png}``; the JSON is saved after every query.
"""

from __future__ import annotations

import argparse
import json
import random
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks.cli import run_main
from benchmarks.machine import machine_info
from benchmarks.plan_space.stats import median, spearman
from benchmarks.tpch.queries import select
from benchmarks.tpch.run import ensure_statistics
from cbo.answers import compare
from cbo.app.progress import say
from cbo.workloads import tpch

RESULTS = Path(__file__).resolve().parents[1] / "results"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.plan_space", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
    parser.add_argument("--queries", help="comma-separated TPC-H queries (default all 22)")
    parser.add_argument("--k", type=int, default=10, help="plans drawn per query (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs of the chosen plan (default 2)")
    parser.add_argument("--cutoff", type=float, default=10.0, help="cut a draw off at this many times the chosen "
                        "plan's time (default 10)")
    parser.add_argument("--minutes", type=float, help="start no query after this many minutes (partial report)")
    parser.add_argument("--out", type=Path, help="JSON file (default benchmarks/results/plan-space-sf<X>.json)")
    return parser.parse_args(argv)


def distinct_draws(planner, planned, k: int, rng: random.Random) -> list:  # type: ignore[no-untyped-def]
    """Up to ``k`` plans drawn from the memo, none equal to the chosen plan or to another draw."""
    seen = {planner.plan_rank(planned)}
    draws = []
    for _ in range(5 * k):
        if len(draws) == k or len(seen) == planner.plan_count(planned):
            break
        drawn = planner.draw(planned, rng)
        if drawn.number in seen:
            continue
        seen.add(drawn.number)
        draws.append(drawn)
    return draws


class Runner:
    """Runs planned queries on the session's Spark, each in its own job group so that one too
    slow can be cancelled."""

    def __init__(self, session):  # type: ignore[no-untyped-def]
        self.session = session
        self.context = session._spark().spark.sparkContext

    def run(self, planned, timeout: float | None) -> tuple[float | None, list[tuple] | None, str | None]:  # type: ignore[no-untyped-def]
        """(seconds, rows, error); seconds None when cut off after ``timeout`` seconds."""
        group = f"plan-space-{uuid.uuid4().hex[:12]}"
        outcome: dict[str, Any] = {}

        def work() -> None:
            self.context.setJobGroup(group, "benchmarks.plan_space", interruptOnCancel=True)
            try:
                outcome["rows"] = self.session.run(planned)[1]
            except Exception as exc:  # reported with the draw; a cancelled job lands here too
                outcome["error"] = str(exc).splitlines()[0][:300]
            outcome["seconds"] = time.perf_counter() - started

        started = time.perf_counter()
        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            self.context.cancelJobGroup(group)
            thread.join(120)
            return None, None, None
        return outcome["seconds"], outcome.get("rows"), outcome.get("error")


def run_query(query, session, runner: Runner, args: argparse.Namespace, rng: random.Random) -> dict:  # type: ignore[no-untyped-def]
    planner = session.planner
    planned = planner.plan(query.sql)
    draws = distinct_draws(planner, planned, args.k, rng)
    record: dict[str, Any] = {"query": query.name, "memo_groups": len(planned.optimized.memo),
                              "plans": planner.plan_count(planned),
                              "chosen": {"number": planner.plan_rank(planned), "cost": planned.optimized.cost,
                                         "times": [],
                                         "plan": planned.physical.text() if planned.physical else None},
                              "draws": []}
    runner.run(planned, None)   # warm-up, untimed
    expected = None
    for _ in range(max(1, args.repeat)):
        seconds, expected, error = runner.run(planned, None)
        if error:
            record["chosen"]["error"] = error
            return record
        record["chosen"]["times"].append(seconds)
    chosen = min(record["chosen"]["times"])
    for drawn in draws:
        seconds, rows, error = runner.run(drawn, args.cutoff * chosen)
        entry: dict[str, Any] = {"number": drawn.number, "cost": drawn.optimized.cost, "seconds": seconds,
                                 "cut_off": seconds is None,
                                 "error": error}
        if seconds is not None and error is None and seconds < chosen:
            again, rows_again, _ = runner.run(drawn, args.cutoff * chosen)
            entry["seconds"] = min(seconds, again) if again is not None else seconds
            rerun, _, _ = runner.run(planned, None)
            if rerun is not None:
                record["chosen"]["times"].append(rerun)
                chosen = min(record["chosen"]["times"])
        if rows is not None and expected is not None:
            entry["matches"] = compare(expected, rows, ordered=False).matches
        if entry["seconds"] is not None and entry["seconds"] < chosen and drawn.physical is not None:
            entry["plan"] = drawn.physical.text()   # to tell why it beat the chosen plan
        record["draws"].append(entry)
    record["chosen"]["seconds"] = chosen
    finished = [d["seconds"] for d in record["draws"] if d["seconds"] is not None and not d["error"]]
    fastest = min([chosen, *finished])
    record["fastest_seconds"] = fastest
    record["chosen_over_fastest"] = chosen / fastest
    record["rank"] = 1 + sum(1 for s in finished if s < chosen)
    record["plans_timed"] = 1 + len(finished)
    record["cut_off"] = sum(d["cut_off"] for d in record["draws"])
    costs, times = _points(record, args.cutoff)
    record["spearman"] = spearman(costs, times)
    return record


def _points(record: dict, cutoff: float) -> tuple[list[float], list[float]]:
    """(cost, seconds) of the chosen plan and every draw without an error; a cut-off draw at
    the cut-off time."""
    chosen = record["chosen"]["seconds"]
    costs, times = [record["chosen"]["cost"]], [chosen]
    for draw in record["draws"]:
        if draw["error"]:
            continue
        costs.append(draw["cost"])
        times.append(draw["seconds"] if draw["seconds"] is not None else cutoff * chosen)
    return costs, times


def summarize(records: list[dict], cutoff: float) -> dict:
    done = [r for r in records if "chosen_over_fastest" in r]
    ratios = [r["chosen_over_fastest"] for r in done]
    raw_costs, raw_times, rel_costs, rel_times = [], [], [], []
    for record in done:
        costs, times = _points(record, cutoff)
        raw_costs += costs
        raw_times += times
        rel_costs += [c / costs[0] for c in costs]
        rel_times += [t / times[0] for t in times]
    per_query = [r["spearman"] for r in done if r["spearman"] is not None]
    return {
        "queries": len(done),
        "median_chosen_over_fastest": median(ratios),
        "worst_chosen_over_fastest": max(ratios) if ratios else None,
        "worst_query": max(done, key=lambda r: r["chosen_over_fastest"])["query"] if done else None,
        "within_1_1": sum(r <= 1.1 for r in ratios), "within_1_5": sum(r <= 1.5 for r in ratios),
        "chosen_fastest": sum(r["rank"] == 1 for r in done),
        "draws": sum(len(r["draws"]) for r in done), "cut_off": sum(r["cut_off"] for r in done),
        "answers_differ": [r["query"] for r in done if any(d.get("matches") is False for d in r["draws"])],
        "draw_errors": sum(1 for r in done for d in r["draws"] if d["error"]),
        "spearman_all_plans": spearman(raw_costs, raw_times),
        "spearman_ratios_to_chosen": spearman(rel_costs, rel_times),
        "median_spearman_per_query": median(per_query),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    catalog_path = tpch.prepare(args.sf, postgres=None, progress=say)["all-spark"]
    statistics = ensure_statistics(catalog_path)
    from cbo.app.session import Session

    say("starting Spark ...")
    session = Session(catalog_path)
    session.query("select count(*) from region")
    runner = Runner(session)
    rng = random.Random(args.seed)
    out = args.out or RESULTS / f"plan-space-sf{args.sf:g}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    base = {"benchmark": "plan-space", "scale_factor": args.sf, "k": args.k, "seed": args.seed,
            "repeat": args.repeat, "cutoff": args.cutoff, "cbo_statistics": statistics, "machine": machine_info()}
    queries = select(args.queries.split(",") if args.queries else None)
    records: list[dict] = []
    print(f"{'query':<6}{'chosen s':>10}{'fastest s':>10}{'ratio':>7}{'rank':>6}{'draws':>6}{'cut':>5}{'rho':>7}",
          flush=True)
    for query in queries:
        if args.minutes and time.monotonic() - started > args.minutes * 60:
            say(f"--minutes {args.minutes:g} reached: {query.name} and later not run")
            break
        record = run_query(query, session, runner, args, rng)
        records.append(record)
        if "chosen_over_fastest" in record:
            rho = record["spearman"]
            print(f"{query.name:<6}{record['chosen']['seconds']:>10.3f}{record['fastest_seconds']:>10.3f}"
                  f"{record['chosen_over_fastest']:>7.2f}{record['rank']:>6}{len(record['draws']):>6}"
                  f"{record['cut_off']:>5}{'' if rho is None else f'{rho:.2f}':>7}", flush=True)
        else:
            print(f"{query.name:<6} chosen plan failed: {record['chosen'].get('error')}", flush=True)
        report = {**base, "complete": False, "summary": summarize(records, args.cutoff), "queries": records}
        out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    summary = summarize(records, args.cutoff)
    report = {**base, "complete": len(records) == len(queries), "summary": summary, "queries": records}
    out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(json.dumps(summary, indent=2))
    from benchmarks.plan_space.plot import plot

    plot(report, out.with_suffix(".png"))
    say(f"saved {out} and {out.with_suffix('.png')}")
    return 0 if not summary["answers_differ"] else 1


if __name__ == "__main__":
    run_main(main)
