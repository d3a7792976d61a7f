"""Equivalence testing at scale: fresh random cases of one family, every alternative the family
forces out of the memo checked against a reference engine and against TLP.

    python -m benchmarks.equivalence --family reorder --cases 10000 --minutes 30
    python -m benchmarks.equivalence --family semijoin --cases 200 --seed 7
    python -m benchmarks.equivalence --family pushdown --cases 100
    python -m benchmarks.equivalence --summary

Families (``benchmarks.equivalence.families``; ``pushdown`` in ``benchmarks.equivalence.pushdown``;
``fuzz`` and ``mutants`` in ``benchmarks.equivalence.fuzz``; ``cert`` in
``benchmarks.equivalence.cert``): ``decorrelation``, ``reorder``,
``semijoin``, ``table-pushdown``, ``eager-aggregation``, ``windows``, ``grouping-sets``, ``pushdown``, ``fuzz``
(random valid queries over TPC-H's schema; ``fuzz-tpcds`` over TPC-DS's store star), ``mutants`` (token
mutations of valid queries) and ``cert`` (no
engine: a strictly more restrictive variant of a query must never get a larger estimate at any
memo group, after Ba and Rigger's CERT). Cases are
drawn by hypothesis, not derandomized (``--seed`` reproduces a run),
in batches until ``--cases`` cases ran or ``--minutes`` passed. For each case:

* the chosen plan and the family's forced alternatives, rendered to SQL, give DuckDB's answer
  on the original query (PostgreSQL's, on a throwaway server, where DuckDB fails internally:
  counted as reference failures);
* TLP (ternary logic partitioning, Rigger and Su, OOPSLA 2020), which needs no reference
  engine: Q's rows are the multiset union of Q WHERE p, Q WHERE NOT p and Q WHERE p IS NULL
  (p random over Q's output columns), each partition planned by cbo (its chosen plan).

A failure is shrunk by hypothesis to a minimal case, printed, saved in the JSON and appended to
``tests/data/equivalence_regressions.txt``, which ``tests/quick/test_equivalence_families.py``
replays.

Runs add up: each saves its own JSON, ``benchmarks/results/equivalence/<family>-<commit>-<time>.json``,
with the git commit it ran (and whether cbo or the benchmark had uncommitted changes), its seed
(drawn fresh unless ``--seed`` is given, so every run is new and reproducible), its counts and its
cases per second. ``--summary`` adds up the runs of each commit per family (runs of uncommitted
code apart); ``docs/results.md`` shows the same table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import secrets
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from benchmarks import machine
from benchmarks.cli import run_main
from benchmarks.machine import machine_info

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
CORPUS = ROOT / "tests" / "data" / "equivalence_regressions.txt"
SERVERS = ROOT / ".cache" / "equivalence"   # the benchmark's own throwaway servers, never the user's
FAMILY_NAMES = ("decorrelation", "reorder", "semijoin", "table-pushdown", "eager-aggregation", "windows",
                "grouping-sets", "pushdown", "fuzz", "fuzz-tpcds", "mutants", "cert")
BATCH = 500   # cases per hypothesis run (each run starts over from the simplest cases)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.equivalence", description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", choices=FAMILY_NAMES)
    parser.add_argument("--cases", type=int, default=1000, help="cases to run (default 1000)")
    parser.add_argument("--minutes", type=float, help="stop after this many minutes even if fewer cases ran")
    parser.add_argument("--seed", type=int, help="hypothesis seed (default: a fresh one, saved in the JSON)")
    parser.add_argument("--out", type=Path, help="JSON file (default: a new file in benchmarks/results/equivalence/)")
    parser.add_argument("--no-corpus", action="store_true", help="do not append failures to the regression corpus")
    parser.add_argument("--spark-every", type=int, default=0,
                        help="fuzz and mutants: also run every N-th answered case through cbo on Spark (local mode)")
    parser.add_argument("--timeout", type=float, help="fuzz and mutants: seconds per case before it counts as a hang "
                        "(default 30)")
    parser.add_argument("--variants", help="cert: comma-separated variants to draw (default all: "
                        "conjunct,range,inner,semi)")
    parser.add_argument("--summary", action="store_true",
                        help="print the saved runs added up per commit and family, and run nothing")
    args = parser.parse_args(argv)
    if not args.summary and args.family is None:
        parser.error("--family is required (or --summary)")
    return args


def git_commit() -> tuple[str, bool]:
    """The commit of the checkout, and whether cbo or the benchmark differ from it."""
    return machine.git_commit("cbo", "benchmarks/equivalence")


class Run:
    """The counts of one run, and its failures (each the minimal case hypothesis shrank to)."""

    def __init__(self, family: str, checker: Any, strategy: st.SearchStrategy[dict], deadline: float | None):
        self.family, self.checker, self.strategy, self.deadline = family, checker, strategy, deadline
        self.cases = self.plans = self.tlp = self.shrink_runs = 0
        self.distinct: set[int] = set()   # hashes of the distinct cases (hypothesis repeats some)
        self.by_reference: dict[str, int] = {}
        self.outcomes: Counter = Counter()   # what cases that did not fail came to (fuzzing families)
        self.messages: Counter = Counter()   # ... their refusals and errors, by message class
        self.examples: dict[str, str] = {}   # ... one query of each message class
        self.failures: list[dict] = []

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def batch(self, size: int, seed: int | None) -> None:
        failing: dict[str, Any] = {}

        def check(case: dict) -> None:
            if failing:
                if self.out_of_time():   # out of time: stop shrinking, keep the smallest failure so far
                    return
                self.shrink_runs += 1
            elif self.out_of_time():
                return
            else:
                self.cases += 1
            try:
                report = self.checker.check(case)
            except Exception as exc:
                # the last failing call is the minimal case (hypothesis replays it to report)
                failing.update(case=case, error=f"{type(exc).__name__}: {exc}",
                               kind="mismatch" if isinstance(exc, AssertionError) else
                               "hang" if type(exc).__name__ == "Hang" else "error",
                               trace=traceback.format_exc(limit=6))
                raise
            if not failing:
                # a case of several queries over one set of rows counts each query as a case
                subcases = report.subcases or [case]
                self.cases += len(subcases) - 1
                self.distinct.update(hash(json.dumps(c, sort_keys=True)) for c in subcases)
                self.plans += report.plans
                self.tlp += report.tlp
                for reference, count in (report.references or {report.reference: 1}).items():
                    self.by_reference[reference] = self.by_reference.get(reference, 0) + count
                outcome = getattr(report, "outcome", None)
                if outcome is not None:
                    self.outcomes[outcome] += 1
                    if report.message:
                        from benchmarks.equivalence.fuzz import message_class

                        key = f"{outcome}: {message_class(report.message)}"
                        self.messages[key] += 1
                        self.examples.setdefault(key, case["sql"])

        test = settings(max_examples=size, deadline=None, database=None, derandomize=False,
                        phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck),
                        print_blob=False)(given(case=self.strategy)(check))
        if seed is not None:
            test = hypothesis_seed(seed)(test)
        try:
            test()
        except Exception as exc:
            if not failing:
                raise
            failing.setdefault("error", str(exc))
            self.failures.append(failing)
            print(f"FAILURE ({failing['kind']}), minimized:\n{json.dumps(failing['case'])}\n{failing['error']}",
                  flush=True)


def append_to_corpus(family: str, failure: dict) -> bool:
    """One JSON line per failure, after a comment naming it; False if the case is already there."""
    line = json.dumps({"family": family, **failure["case"]})
    existing = CORPUS.read_text().splitlines() if CORPUS.exists() else []
    if line in existing:
        return False
    comment = "# " + failure["error"].splitlines()[0][:200]
    with CORPUS.open("a") as handle:
        handle.write(f"{comment}\n{line}\n")
    return True


def make_checker(family: str, workdir: Path, timeout: float | None = None,  # type: ignore[no-untyped-def]
                 spark_every: int = 0, variants: str | None = None):
    """The checker of ``family`` and what to close when the run ends."""
    if family in ("fuzz", "fuzz-tpcds", "mutants"):
        from benchmarks.equivalence.fuzz import FUZZ_FAMILIES, FuzzChecker

        fuzz_checker = FuzzChecker(FUZZ_FAMILIES[family], workdir, timeout, spark_every)
        return fuzz_checker, FUZZ_FAMILIES[family].cases(), fuzz_checker.close
    if family == "cert":
        from benchmarks.equivalence.cert import VARIANTS, CertChecker

        chosen = tuple(variants.split(",")) if variants else VARIANTS
        unknown = sorted(set(chosen) - set(VARIANTS))
        if unknown:
            raise SystemExit(f"unknown cert variants: {', '.join(unknown)} (known: {', '.join(VARIANTS)})")
        cert = CertChecker(workdir, chosen)
        return cert, cert.cases(), cert.close
    if family == "pushdown":
        from benchmarks.equivalence.pushdown import PushdownChecker

        checker = PushdownChecker(workdir, SERVERS)
        return checker, checker.cases(), checker.close
    from benchmarks.equivalence.families import FAMILIES, Checker
    from benchmarks.equivalence.tables import RandomTables, References

    spec = FAMILIES[family]
    references = References(RandomTables(workdir, spec.tables), SERVERS / family / "postgres")
    return Checker(spec, references.tables, references), spec.cases(), references.close


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.summary:
        from benchmarks.equivalence.summary import print_totals

        print_totals(RESULTS / "equivalence")
        return 0
    commit, dirty = git_commit()
    seed = args.seed if args.seed is not None else secrets.randbelow(2 ** 31)
    started, cpu_started = time.monotonic(), time.process_time()
    when = dt.datetime.now(dt.UTC)
    deadline = started + args.minutes * 60 if args.minutes else None
    with tempfile.TemporaryDirectory(prefix=f"cbo-equivalence-{args.family}-") as directory:
        checker, strategy, close = make_checker(args.family, Path(directory), args.timeout, args.spark_every,
                                                args.variants)
        run = Run(args.family, checker, strategy, deadline)
        index = 0
        try:
            while run.cases < args.cases and not run.out_of_time():
                # (a pushdown case holds several queries, each counted as a case)
                per_example = getattr(checker, "queries_per_example", 1)
                run.batch(min(BATCH, -(-(args.cases - run.cases) // per_example)), seed + index)
                index += 1
                elapsed = time.monotonic() - started
                print(f"{args.family}: {run.cases} cases, {len(run.failures)} failures, "
                      f"{run.cases / elapsed:.2f} cases/s", flush=True)
        finally:
            close()
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu_started
    report = {
        "benchmark": "equivalence", "family": args.family, "commit": commit, "uncommitted_changes": dirty,
        "seed": seed, "requested_cases": args.cases, "minutes": args.minutes, "variants": args.variants,
        "groups_compared": getattr(checker, "compared", None),
        "cases": run.cases, "seconds": round(elapsed, 1), "cases_per_second": round(run.cases / elapsed, 3),
        "cpu_seconds": round(cpu, 1), "cases_per_cpu_second": round(run.cases / cpu, 3) if cpu else None,
        "plans_checked": run.plans, "tlp_checked": run.tlp,
        "mismatches": sum(f["kind"] == "mismatch" for f in run.failures),
        "errors": sum(f["kind"] in ("error", "hang") for f in run.failures),   # hangs count as errors too
        "hangs": sum(f["kind"] == "hang" for f in run.failures),
        "outcomes": dict(run.outcomes),
        "spark": {"every": args.spark_every, "outcomes": dict(getattr(checker, "spark", {})),
                  "problems": getattr(checker, "spark_problems", [])},
        "messages": [{"message": k, "count": n, "example": run.examples[k]} for k, n in run.messages.most_common()],
        "shrink_runs": run.shrink_runs,
        "distinct_cases": len(run.distinct), "distinct_queries": len(getattr(checker, "queries", ())),
        "plannings": getattr(checker, "planned", None), "plannings_reused": getattr(checker, "reused", None),
        "cases_by_reference": run.by_reference,
        "reference_failures": checker.reference_counts(),
        "failures": [{k: f[k] for k in ("kind", "case", "error")} for f in run.failures],
        "load_average": os.getloadavg(), "niceness": os.nice(0),
        "machine": machine_info(),
    }
    if not args.no_corpus:
        report["added_to_corpus"] = sum(append_to_corpus(args.family, f) for f in run.failures)
    out = args.out or RESULTS / "equivalence" / f"{args.family}-{commit[:10]}-{when:%Y%m%dT%H%M%S}-{seed}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print_summary(report)
    print(f"saved {out}")
    return 1 if run.failures else 0


def print_summary(report: dict) -> None:
    refs = report["reference_failures"]
    print(f"{'family':<18}{'cases':>8}{'cases/s':>9}{'plans':>8}{'TLP':>7}{'mismatch':>9}{'errors':>7}"
          f"{'ref fail':>9}{'by PG':>7}")
    print(f"{report['family']:<18}{report['cases']:>8}{report['cases_per_second']:>9.2f}{report['plans_checked']:>8}"
          f"{report['tlp_checked']:>7}{report['mismatches']:>9}{report['errors']:>7}"
          f"{refs.get('duckdb_internal_errors', 0):>9}{refs.get('answered_by_postgres', 0):>7}")


if __name__ == "__main__":
    run_main(main)
