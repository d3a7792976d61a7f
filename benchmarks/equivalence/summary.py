"""The saved runs of ``python -m benchmarks.equivalence`` added up: cases, mismatches and errors
per family, for each git commit the runs ran (``--summary``, and the ``equivalence`` table of
``docs/results.md``).

Only runs of one commit add up: a claim such as "10,000 cases with 0 mismatches" is about one
version of cbo. Runs made with uncommitted changes to cbo or the benchmark count for no commit
and are shown apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Totals:
    commit: str
    family: str
    runs: int = 0
    cases: int = 0
    distinct: int = 0                # distinct cases within each run, summed (runs may repeat a case)
    mismatches: int = 0
    errors: int = 0
    plans: int = 0
    tlp: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    seeds: list[int | None] = field(default_factory=list)
    last: str = ""                   # when the latest run started (UTC)

    @property
    def cases_per_second(self) -> float:
        return self.cases / self.seconds if self.seconds else 0.0

    @property
    def cases_per_cpu_second(self) -> float:
        return self.cases / self.cpu_seconds if self.cpu_seconds else 0.0


def load_runs(directory: Path) -> list[dict]:
    """Every run saved in ``directory`` (files that are not runs of this benchmark are skipped)."""
    runs = []
    for path in sorted(directory.glob("*.json")):
        body = json.loads(path.read_text())
        if isinstance(body, dict) and body.get("benchmark") == "equivalence":
            runs.append(body)
    return runs


def totals(runs: Iterable[dict]) -> list[Totals]:
    """Per (commit, family): the runs added up; a run of uncommitted code under the commit
    ``"<commit>+uncommitted"``. Ordered by commit (latest run first), then family."""
    found: dict[tuple[str, str], Totals] = {}
    for run in runs:
        commit = str(run.get("commit") or "unknown")
        if run.get("uncommitted_changes", True):
            commit += "+uncommitted"
        key = (commit, run["family"])
        entry = found.setdefault(key, Totals(commit, run["family"]))
        entry.runs += 1
        entry.cases += run["cases"]
        entry.distinct += run.get("distinct_cases", run["cases"])
        entry.mismatches += run["mismatches"]
        entry.errors += run["errors"]
        entry.plans += run.get("plans_checked", 0)
        entry.tlp += run.get("tlp_checked", 0)
        entry.seconds += run.get("seconds", 0.0)
        entry.cpu_seconds += run.get("cpu_seconds") or 0.0
        entry.seeds.append(run.get("seed"))
        entry.last = max(entry.last, (run.get("machine") or {}).get("when", ""))
    latest: dict[str, str] = {}
    for entry in found.values():
        latest[entry.commit] = max(latest.get(entry.commit, ""), entry.last)
    return sorted(found.values(), key=lambda t: (-_stamp(latest[t.commit]), t.commit, t.family))


def _stamp(when: str) -> float:
    import datetime as dt

    try:
        return dt.datetime.fromisoformat(when).timestamp()
    except ValueError:
        return 0.0


def markdown(entries: list[Totals]) -> str:
    lines = ["| commit | family | runs | cases | distinct | mismatches | errors | plans checked | TLP checked | "
             "cases/s | cases/CPU s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for t in entries:
        lines.append(f"| `{t.commit[:10]}{'+uncommitted' if t.commit.endswith('+uncommitted') else ''}` "
                     f"| {t.family} | {t.runs} | {t.cases:,} | {t.distinct:,} | {t.mismatches} | {t.errors} "
                     f"| {t.plans:,} | {t.tlp:,} | {t.cases_per_second:.2f} | {t.cases_per_cpu_second:.2f} |")
    return "\n".join(lines)


def print_totals(directory: Path) -> None:
    entries = totals(load_runs(directory))
    if not entries:
        print(f"no saved runs in {directory}")
        return
    print(f"{'commit':<24}{'family':<19}{'runs':>5}{'cases':>9}{'distinct':>9}{'mismatch':>9}{'errors':>7}{'plans':>9}"
          f"{'TLP':>8}{'cases/s':>9}{'per CPU s':>10}")
    for t in entries:
        commit = t.commit[:10] + ("+uncommitted" if t.commit.endswith("+uncommitted") else "")
        print(f"{commit:<24}{t.family:<19}{t.runs:>5}{t.cases:>9}{t.distinct:>9}{t.mismatches:>9}{t.errors:>7}{t.plans:>9}"
              f"{t.tlp:>8}{t.cases_per_second:>9.2f}{t.cases_per_cpu_second:>10.2f}")
