"""Merge the JSON files of several ``benchmarks.tpch.run`` runs of one placement (each over a
subset of the queries, ``--queries ... --out ...``) into one report, as one run would write it.

    python -m benchmarks.tpch.merge_runs --out benchmarks/results/tpch-run-all-postgres-sf1.json a.json b.json

A run over all 22 queries takes longer than a timing slot on a shared machine; split into
pieces, each piece's machine facts (load, start time) are kept under ``pieces``. The pieces
must share placement, scale factor, configurations and run options.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.tpch.run import print_summary, save, summarize

SAME = ("benchmark", "placement", "scale_factor", "repeat", "max_rounds", "budget_seconds", "long_warm_up_s",
        "cold_run", "postgres_timeout_s", "configs")


def merge(reports: list[dict]) -> dict:
    first = reports[0]
    for other in reports[1:]:
        different = [k for k in SAME if other.get(k) != first.get(k)]
        if different:
            raise SystemExit(f"the runs differ in {', '.join(different)}: not one benchmark")
    records = [q for r in reports for q in r["queries"]]
    names = [q["query"] for q in records]
    if len(set(names)) != len(names):
        raise SystemExit(f"a query is in more than one run: {sorted(n for n in set(names) if names.count(n) > 1)}")
    records.sort(key=lambda q: q["query"])
    merged = {k: v for k, v in first.items() if k not in ("summary", "queries", "complete")}
    merged["pieces"] = [{"queries": [q["query"] for q in r["queries"]], "machine": r.get("machine")} for r in reports]
    merged["complete"] = all(r.get("complete") for r in reports)
    merged["summary"] = summarize(records, first["configs"])
    merged["queries"] = records
    return merged


def read_run(path: Path) -> dict:
    """One run's JSON, or a one-line exit naming the file and what is wrong with it."""
    try:
        report = json.loads(path.read_text())
    except OSError as exc:
        raise SystemExit(f"merge_runs: cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise SystemExit(f"merge_runs: {path} is not JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(report, dict) or report.get("benchmark") != "tpch-run" \
            or not isinstance(report.get("queries"), list):
        raise SystemExit(f"merge_runs: {path} is not a benchmarks.tpch.run report")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    report = merge([read_run(p) for p in args.runs])
    print_summary(report["summary"])
    save(args.out, report, plot_too=True)
    print(f"saved {args.out} and {args.out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
