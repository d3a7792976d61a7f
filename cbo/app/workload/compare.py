"""Two results side by side: plans that changed, estimates that moved, times as ratios.

For every query and configuration the two results share:

* **plans**: a cbo configuration's plan changed when its shape differs (the EXPLAIN tree
  without its estimates: ``engines.plan_shape``), shown as a diff with both costs;
* **estimates**: sub-plans (``engines.node_key``: an operator over a set of tables) whose
  estimated rows moved by more than ``factor`` either way, largest moves first;
* **times**: B / A of the fastest runs, with the spread of that ratio over every pair of their
  timed runs (the slowest of B over the fastest of A, and the fastest of B over the slowest
  of A): a ratio whose spread includes 1 is within the runs' own noise. Per configuration, the
  geometric mean of the per-query ratios and their range;
* **answers**: queries one side answered wrongly, failed or timed out and the other did not.

This generalizes the plan files' diff (plans and estimates) and ``join_enumeration.ab`` (timing
two checkouts) to any workload: ``cbo workload compare --commits`` makes the two results.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from typing import Any

from cbo.app.workload.results import Result


@dataclass
class Comparison:
    a: Result
    b: Result
    configs: list[str]
    queries: list[str]
    plans: list[dict[str, Any]] = field(default_factory=list)       # changed plans
    same_plans: int = 0
    estimates: list[dict[str, Any]] = field(default_factory=list)   # moved beyond the factor
    times: list[dict[str, Any]] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)
    factor: float = 2.0

    def to_json(self) -> dict[str, Any]:
        return {"a": str(self.a.path), "b": str(self.b.path), "configs": self.configs, "queries": self.queries,
                "changed_plans": self.plans, "same_plans": self.same_plans, "factor": self.factor,
                "moved_estimates": self.estimates, "times": self.times, "time_summary": self.time_summary(),
                "answers": self.answers}

    def time_summary(self) -> dict[str, Any]:
        found = {}
        for config in self.configs:
            ratios = [t["ratio"] for t in self.times if t["config"] == config]
            if ratios:
                found[config] = {"geomean": math.exp(sum(map(math.log, ratios)) / len(ratios)),
                                 "min": min(ratios), "max": max(ratios), "queries": len(ratios),
                                 "beyond_noise": sum(1 for t in self.times if t["config"] == config
                                                     and not t["spread"][0] <= 1.0 <= t["spread"][1])}
        return found


def compare(a: Result, b: Result, factor: float = 2.0) -> Comparison:
    configs = [c for c in a.configs if c in b.configs]
    queries = [r["query"] for r in a.records if b.record(r["query"]) is not None]
    result = Comparison(a, b, configs, queries, factor=factor)
    for query in queries:
        ra, rb = a.record(query), b.record(query)
        assert ra is not None and rb is not None
        for config in configs:
            _plans(result, query, config, ra, rb)
            _times(result, query, config, ra, rb)
            _answers(result, query, config, ra, rb)
    result.estimates.sort(key=lambda e: -max(e["ratio"], 1 / e["ratio"]) if e["ratio"] else 0)
    return result


def _plan(record: dict[str, Any], config: str) -> dict[str, Any] | None:
    return (record.get("plans") or {}).get(config)


def _plans(result: Comparison, query: str, config: str, ra: dict[str, Any], rb: dict[str, Any]) -> None:
    pa, pb = _plan(ra, config), _plan(rb, config)
    if not pa or not pb:
        return
    if pa.get("shape") == pb.get("shape"):
        result.same_plans += 1
    else:
        diff = "\n".join(difflib.unified_diff(pa.get("shape", "").splitlines(), pb.get("shape", "").splitlines(),
                                              "A", "B", lineterm="", n=1))
        result.plans.append({"query": query, "config": config, "cost_a": pa.get("cost"), "cost_b": pb.get("cost"),
                             "diff": diff})
    ea, eb = pa.get("estimates") or {}, pb.get("estimates") or {}
    for key in ea:
        if key in eb:
            before, after = ea[key], eb[key]
            ratio = (max(after, 1.0) / max(before, 1.0))
            if ratio > result.factor or ratio < 1 / result.factor:
                result.estimates.append({"query": query, "config": config, "node": key, "a": before, "b": after,
                                         "ratio": ratio})


def _times(result: Comparison, query: str, config: str, ra: dict[str, Any], rb: dict[str, Any]) -> None:
    sa, sb = ra.get("seconds", {}).get(config), rb.get("seconds", {}).get(config)
    if not sa or not sb:
        return
    ta = ra.get("times", {}).get(config) or [sa]
    tb = rb.get("times", {}).get(config) or [sb]
    result.times.append({"query": query, "config": config, "a": sa, "b": sb, "ratio": sb / sa,
                         "spread": [min(tb) / max(ta), max(tb) / min(ta)], "runs": [len(ta), len(tb)]})


def _state(record: dict[str, Any], config: str) -> str:
    if config in record.get("timeouts", {}):
        return "timeout"
    kind = record.get("failures", {}).get(config)
    if kind:
        return kind
    return "ok" if config in record.get("seconds", {}) else "not run"


def _answers(result: Comparison, query: str, config: str, ra: dict[str, Any], rb: dict[str, Any]) -> None:
    state_a, state_b = _state(ra, config), _state(rb, config)
    if state_a != state_b:
        result.answers.append({"query": query, "config": config, "a": state_a, "b": state_b,
                               "problem_a": ra.get("problems", {}).get(config),
                               "problem_b": rb.get("problems", {}).get(config)})


def _describe(result: Result) -> str:
    cbo = result.manifest.get("cbo") or {}
    commit = (cbo.get("commit") or "")[:10]
    where = f"commit {commit}" + (" (dirty)" if cbo.get("dirty") else "") if commit else "no commit recorded"
    return f"{result.path} ({where})"


def text(comparison: Comparison) -> str:
    c = comparison
    lines = [f"A: {_describe(c.a)}", f"B: {_describe(c.b)}",
             f"{len(c.queries)} queries, configurations {', '.join(c.configs) or '(none in common)'}", ""]
    total = c.same_plans + len(c.plans)
    lines.append(f"Plans: {len(c.plans)} of {total} changed" + (":" if c.plans else "."))
    for plan in c.plans:
        costs = ""
        if plan["cost_a"] is not None and plan["cost_b"] is not None:
            costs = f": cost {plan['cost_a']:.4g} -> {plan['cost_b']:.4g}"
            if plan["cost_a"]:
                costs += f" ({plan['cost_b'] / plan['cost_a']:.2f}x)"
        lines.append(f"  {plan['query']} {plan['config']}{costs}")
        lines += ["    " + line for line in plan["diff"].splitlines()[2:]]
    lines.append("")
    lines.append(f"Estimates that moved beyond {c.factor:g}x: {len(c.estimates)}" + (":" if c.estimates else "."))
    for moved in c.estimates[:60]:
        lines.append(f"  {moved['query']} {moved['config']} {moved['node']}: {moved['a']:,.0f} -> {moved['b']:,.0f} "
                     f"({moved['ratio']:.3g}x)")
    if len(c.estimates) > 60:
        lines.append(f"  ... and {len(c.estimates) - 60} more (--format json lists them all)")
    lines.append("")
    if c.times:
        lines.append("Times, B / A of the fastest runs; spread: over every pair of their timed runs")
        lines.append(f"  {'query':<8} {'configuration':<28} {'A s':>9} {'B s':>9} {'B/A':>7}  spread")
        for t in c.times:
            mark = "" if t["spread"][0] <= 1.0 <= t["spread"][1] else "  *"
            lines.append(f"  {t['query']:<8} {t['config']:<28} {t['a']:>9.3f} {t['b']:>9.3f} {t['ratio']:>7.3f}  "
                         f"[{t['spread'][0]:.3f}, {t['spread'][1]:.3f}]{mark}")
        for config, s in c.time_summary().items():
            lines.append(f"  {config}: geometric mean B/A {s['geomean']:.3f} over {s['queries']} queries "
                         f"(range {s['min']:.3f} .. {s['max']:.3f}; {s['beyond_noise']} beyond their spread, *)")
    else:
        lines.append("Times: none to compare (plans only, or no query finished on both sides).")
    if c.answers:
        lines += ["", "Outcomes that differ:"]
        for answer in c.answers:
            lines.append(f"  {answer['query']} {answer['config']}: A {answer['a']}, B {answer['b']}"
                         + (f" ({answer['problem_b'] or answer['problem_a']})"
                            if answer["problem_a"] or answer["problem_b"] else ""))
    return "\n".join(lines)
