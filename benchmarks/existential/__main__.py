"""The existential query family (IN subqueries as early-out joins) on Spark: each form of the
semi join forced, cbo free, and Spark's own optimizer; then the byte-reduction threshold swept.

    python -m benchmarks.existential --sf 0.1
    python -m benchmarks.existential --sf 0.01 --repeat 1

Cases (``benchmarks.existential.cases``): one customer, 0.1 %, 1 %, 20 % or all of them, IN a
filtering side with duplicates, with duplicates and a filter, or without duplicates. Forms:

* ``spark``: the query text through Spark SQL with its defaults (adaptive execution on);
* ``3.1``, ``3.2``, ``3.3``: cbo with ``existential_form`` forcing the DISTINCT above the inner
  join, the DISTINCT below it, or the semi join (table pushdown off, so 3.2 stays 3.2);
* ``free``: cbo as it is (cost picks among what the threshold lets into the memo).

Every configuration runs once untimed, then ``--repeat`` rounds in rotated order; the fastest
time counts; every answer is compared with DuckDB's. cbo's planning is not timed (it is
reported). The sweep plans the free form at thresholds 0, 0.25, 0.5, 1, 2 and infinity and
records the form chosen at the semi join and its time. JSON and a plot go to
``benchmarks/results/existential-sf<X>.{json,png}``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.cli import run_main
from benchmarks.existential.cases import Case, cases
from benchmarks.machine import machine_info
from benchmarks.tpch.run import SparkTables, ensure_statistics
from cbo.answers import compare
from cbo.app.progress import say
from cbo.errors import CboError
from cbo.sources.catalog import load_catalog
from cbo.workloads import tpch

RESULTS = Path(__file__).resolve().parents[1] / "results"
FORMS = {"3.1": {"existential_form": "DISTINCT_ABOVE", "push_table_through_subquery": "false"},
         "3.2": {"existential_form": "DISTINCT_BELOW", "push_table_through_subquery": "false"},
         "3.3": {"existential_form": "SEMI_JOIN"},
         "free": {}}
CONFIGS = ("spark", *FORMS)
THRESHOLDS = (0.0, 0.25, 0.5, 1.0, 2.0, float("inf"))
RULE_FORMS = {"SemiJoinToInnerDistinctAbove": "3.1", "SemiJoinToInnerDistinctBelow": "3.2"}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.existential", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=0.1, help="scale factor (default 0.1)")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds per case and form (default 3)")
    parser.add_argument("--no-sweep", action="store_true", help="skip the threshold sweep")
    parser.add_argument("--out", type=Path, help="JSON file (default benchmarks/results/existential-sf<X>.json)")
    parser.add_argument("--case", action="append", default=[],
                        help="run only the cases whose name contains this string (repeatable; e.g. "
                             "'20 %% / orders (' or '/ customer'): for re-measuring a few")
    return parser.parse_args(argv)


def select_cases(wanted: list[str]) -> list[Case]:
    """The family's cases whose name contains one of ``wanted`` (all of them when it is empty)."""
    found = [c for c in cases() if not wanted or any(w in c.name for w in wanted)]
    if not found:
        raise CboError(f"no existential case name contains any of {wanted!r}")
    return found


def chosen_forms(planned) -> list[str]:  # type: ignore[no-untyped-def]
    """The form chosen at each group of the plan that holds a semi join: 3.1, 3.2 or 3.3."""
    from cbo.ir.operators import Join
    from cbo.memo.render import chosen_winners

    optimized = planned.optimized
    memo = optimized.memo
    found = []
    for gid, winner in sorted(chosen_winners(optimized).items()):
        group = memo.groups[gid]
        if not any(isinstance(e, Join) and e.kind == "semi" for e in group.expressions):
            continue
        expression = winner.expression   # the memo expression the plan runs in that group
        found.append(RULE_FORMS.get(memo.added_by.get(expression, ""),
                                    "3.3" if isinstance(expression, Join) else "other"))
    return found


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    catalog_path = tpch.prepare(args.sf, postgres=None, progress=say)["all-spark"]
    statistics = ensure_statistics(catalog_path)

    from cbo.app.session import Session
    from cbo.engines.duckdb_engine import DuckDBEngine

    say("starting Spark ...")
    session = Session(catalog_path)
    session.query("select count(*) from region")
    tables = SparkTables(session._spark().spark, load_catalog(catalog_path))
    tables.create("tpch_plain")
    reference = DuckDBEngine(load_catalog(catalog_path))

    selected = select_cases(args.case)
    records = []
    print(f"{'case':<48}" + "".join(f"{c:>9}" for c in CONFIGS) + "  free chose  answers", flush=True)
    for case in selected:
        record = run_case(case, session, tables, reference, args.repeat)
        if not args.no_sweep:
            record["sweep"] = sweep(case, session, reference)
        records.append(record)
        cells = "".join(f"{record['seconds'].get(c, float('nan')):>9.3f}" for c in CONFIGS)
        verdict = "ok" if all(record["matches"].values()) else "MISMATCH " + json.dumps(record["problems"])
        print(f"{case.name:<48}{cells}  {','.join(record['forms']['free']):>10}  {verdict}", flush=True)
    summary = summarize(records)
    print(json.dumps(summary, indent=2))
    report = {"benchmark": "existential", "scale_factor": args.sf, "repeat": args.repeat, "configs": list(CONFIGS),
              "cbo_statistics": statistics, "machine": machine_info(), "summary": summary, "cases": records}
    out = args.out or RESULTS / f"existential-sf{args.sf:g}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, default=str))
    from benchmarks.existential.plot import plot

    plot(report, out.with_suffix(".png"))
    say(f"saved {out} and {out.with_suffix('.png')}")
    return 0 if summary["all_answers_match"] else 1


def _planned(session, sql: str, values: dict):  # type: ignore[no-untyped-def]
    from cbo.settings import OptimizerSettings

    session.planner.settings = OptimizerSettings().with_values(values)
    return session.planner.plan(sql)


def run_case(case: Case, session, tables, reference, repeat: int) -> dict:  # type: ignore[no-untyped-def]
    record: dict = {"case": case.name, "outer": case.outer, "filtering": case.filtering, "sql": case.sql,
                    "seconds": {}, "times": {}, "matches": {}, "problems": {}, "forms": {}, "cost": {},
                    "plan_ms": {}, "same_plan_as_free": []}
    shapes = {}
    _, expected, _ = reference.run(case.sql)
    runs = {"spark": lambda: tables.run("tpch_plain", case.sql, {})}
    for name, values in FORMS.items():
        planned = _planned(session, case.sql, values)
        record["forms"][name] = chosen_forms(planned)
        record["cost"][name] = planned.optimized.cost
        record["plan_ms"][name] = round(planned.optimized.counters.elapsed_ms, 2)
        shapes[name] = planned.physical.text()
        runs[name] = (lambda p: lambda: session.run(p)[1])(planned)
    for run in runs.values():   # warm-up, untimed
        try:
            run()
        except Exception:  # the timed rounds report it
            pass
    for index in range(max(1, repeat)):
        order = list(runs)[index % len(runs):] + list(runs)[: index % len(runs)]
        for name in order:
            if record["problems"].get(name):
                continue
            try:
                started = time.perf_counter()
                rows = runs[name]()
                record["times"].setdefault(name, []).append(round(time.perf_counter() - started, 4))
                verdict = compare(expected, rows, ordered=False)
                record["matches"][name] = record["matches"].get(name, True) and verdict.matches
                if not verdict.matches:
                    record["problems"][name] = verdict.detail
            except Exception as exc:  # one failure must not hide the rest
                record["matches"][name] = False
                record["problems"][name] = str(exc).strip().splitlines()[0][:300]
    for name, times in record["times"].items():
        if not record["problems"].get(name):
            record["seconds"][name] = min(times)
    # Forced forms whose physical plan is exactly free's: their runs are runs of free's plan, so
    # a gap between them is the machine's run-to-run variation, not the choice.
    record["same_plan_as_free"] = [f for f in ("3.1", "3.2", "3.3") if shapes.get(f) == shapes.get("free")]
    return record


def sweep(case: Case, session, reference) -> list[dict]:  # type: ignore[no-untyped-def]
    """The free form at each threshold: the form chosen at the semi join, and its time."""
    _, expected, _ = reference.run(case.sql)
    found = []
    for threshold in THRESHOLDS:
        planned = _planned(session, case.sql,
                           {"push_aggregation_below_join_byte_reduction_threshold": str(threshold)})
        session.run(planned)   # warm-up
        started = time.perf_counter()
        _, rows = session.run(planned)
        seconds = time.perf_counter() - started
        found.append({"threshold": threshold, "forms": chosen_forms(planned), "seconds": round(seconds, 4),
                      "cost": planned.optimized.cost, "matches": compare(expected, rows, ordered=False).matches})
    return found


def summarize(records: list[dict]) -> dict:
    free_vs_best, free_vs_spark, plan_vs_best = [], [], []
    for r in records:
        seconds = r["seconds"]
        forced = [seconds[f] for f in ("3.1", "3.2", "3.3") if f in seconds]
        if "free" in seconds and forced:
            free_vs_best.append(seconds["free"] / min(forced))
            # free's plan timed in every run of it: free's own and those of the identical forced form
            pooled = min([seconds["free"]] + [seconds[f] for f in r.get("same_plan_as_free", []) if f in seconds])
            plan_vs_best.append(pooled / min(forced))
        if "free" in seconds and "spark" in seconds:
            free_vs_spark.append(seconds["free"] / seconds["spark"])
    return {"worst_free_vs_fastest_forced": max(free_vs_best) if free_vs_best else None,
            "worst_free_vs_spark": max(free_vs_spark) if free_vs_spark else None,
            "cases_free_within_1.1x_of_fastest_forced": sum(x <= 1.1 for x in free_vs_best),
            # the same with free's plan timed in all its runs (free's and the identical forced form's)
            "worst_free_plan_vs_fastest_forced": max(plan_vs_best) if plan_vs_best else None,
            "cases_free_plan_within_1.1x_of_fastest_forced": sum(x <= 1.1 for x in plan_vs_best),
            "cases": len(records),
            "all_answers_match": all(all(r["matches"].values()) for r in records)
            and all(s["matches"] for r in records for s in r.get("sweep", []))}


if __name__ == "__main__":
    run_main(main)
