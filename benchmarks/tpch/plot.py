"""Plot and tabulate native baseline results: per-query times of each engine.

    python -m benchmarks.tpch.plot --sf 1 [--out benchmarks/results/native-sf1.png]

Reads every ``benchmarks/results/native-*-sf<X>.json``, prints a Markdown table (seconds per
query and engine, "timeout" where the limit was hit) and draws one bar group per query; a
query that timed out is drawn at its time limit, hatched; a failed one is left out.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"


def load(sf: float, directory: Path = RESULTS) -> list[dict]:
    reports = [json.loads(p.read_text()) for p in sorted(directory.glob(f"native-*-sf{sf:g}.json"))]
    return [r for r in reports if r.get("benchmark") == "tpch-native"]


def plot(reports: list[dict], out: Path) -> None:
    queries = [q["query"] for q in reports[0]["queries"]]
    width = 0.8 / len(reports)
    fig, ax = plt.subplots(figsize=(14, 5))
    for index, report in enumerate(reports):
        by_query = {q["query"]: q for q in report["queries"]}
        xs, heights, hatches = [], [], []
        for position, name in enumerate(queries):
            record = by_query.get(name)
            if not record or record["status"] == "error":
                continue
            xs.append(position + index * width)
            heights.append(record["seconds"])
            hatches.append("//" if record["status"] == "timeout" else "")
        label = f"{report['engine']} ({report['placement']})"
        bars = ax.bar(xs, heights, width, label=label)
        for bar, hatch in zip(bars, hatches):
            bar.set_hatch(hatch)
    ax.set_xticks(np.arange(len(queries)) + 0.4 - width / 2)
    ax.set_xticklabels(queries)
    ax.set_yscale("log")
    ax.set_ylabel("seconds (log scale; hatched = timed out)")
    machine = reports[0]["machine"]
    ax.set_title(f"TPC-H SF {reports[0]['scale_factor']:g}, native planners — {machine['cores']} cores, "
                 f"{machine['memory_gib']} GiB")
    ax.legend()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def table(reports: list[dict]) -> str:
    """A Markdown table: one row per query, one column per engine (and placement)."""
    headers = [f"{r['engine']} ({r['placement']})" for r in reports]
    by_engine = [{q["query"]: q for q in r["queries"]} for r in reports]
    lines = ["| query | " + " | ".join(headers) + " |", "|---" * (len(headers) + 1) + "|"]
    for name in [q["query"] for q in reports[0]["queries"]]:
        cells = []
        for records in by_engine:
            record = records.get(name)
            if record is None or record["status"] == "error":
                cells.append("error")
            elif record["status"] == "timeout":
                cells.append(f"timeout ({record['seconds']:.0f})")
            else:
                cells.append(f"{record['seconds']:.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    totals = []
    for records in by_engine:
        finished = [r["seconds"] for r in records.values() if r["status"] == "ok"]
        totals.append(f"{sum(finished):.2f} ({len(finished)}/{len(records)} ran)")
    lines.append("| total | " + " | ".join(totals) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tpch.plot", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    reports = load(args.sf)
    if not reports:
        print(f"no results for sf {args.sf:g} in {RESULTS}: run python -m benchmarks.tpch.native first")
        return 2
    out = args.out or RESULTS / f"native-sf{args.sf:g}.png"
    print(table(reports))
    plot(reports, out)
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
