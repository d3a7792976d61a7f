"""Join enumeration benchmark: optimization time, memo size and join pairs per graph shape.

    python -m benchmarks.join_enumeration [--max-n 20] [--repeat 3] [--out FILE.json]

For chain, cycle, star, clique and snowflake join graphs of 2..N relations (synthetic
statistics, no data), it optimizes the written left-deep plan through the memo:

* exhaustively (``max_reordered_joins`` raised to N) where the shape's csg-cmp pair count is at
  most ``--max-pairs`` (a 20-relation star has 5 million): time, groups, expressions, join pairs
  the enumerator built next to the known pair count (equal: the enumeration is duplicate-free);
* with the default settings (exhaustive up to 12 relations, greedy above);
* greedily (``max_reordered_joins=1``), reporting the greedy plan's cost over the exhaustive one;
* the fallback targets: 50-relation chain and star (and snowflake, cycle) under the defaults;
* and the 22 TPC-H queries at SF 1 statistics (``--no-tpch`` skips them).

Times are the best of ``--repeat`` runs (the machine is noisy), in wall-clock and in CPU time
(``process_time``; on a shared 2-core machine wall-clock also counts waiting for a core). It prints a table and writes
JSON and a PNG plot (time and memo size against relations, per shape).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.join_enumeration.shapes import SHAPES, build, expected_pairs
from cbo.estimate import Estimator
from cbo.memo.search import Optimizer
from cbo.settings import OptimizerSettings

RESULTS = Path(__file__).resolve().parents[1] / "results"


def measure(shape: str, n: int, settings: OptimizerSettings, repeat: int, seed: int) -> dict[str, Any]:
    workload = build(shape, n, seed)
    best, best_cpu = None, None
    for _ in range(repeat):
        # what the last search left (the search holds the cyclic collector off) is collected
        # here, not inside the next timed search
        gc.collect()
        optimizer = Optimizer(Estimator(workload.stats), settings)
        started, started_cpu = time.perf_counter(), time.process_time()
        result = optimizer.optimize(workload.plan)
        cpu = (time.process_time() - started_cpu) * 1000.0
        elapsed = (time.perf_counter() - started) * 1000.0
        if best is None or elapsed < best[0]:
            best = (elapsed, result)
        best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
    assert best is not None and best_cpu is not None
    elapsed, result = best
    return {"ms": round(elapsed, 2), "cpu_ms": round(best_cpu, 2),
            "groups": len(result.memo), "expressions": result.memo.expression_count,
            "join_pairs": result.counters.join_pairs, "cost": result.cost,
            "heuristic": result.counters.heuristic_regions > 0}


def run(max_n: int, repeat: int, max_pairs: int, seed: int, progress=print) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    rows = []
    for shape in SHAPES:
        for n in range(2, max_n + 1):
            known = expected_pairs(shape, n)
            row: dict[str, Any] = {"shape": shape, "n": n, "expected_pairs": known}
            if known <= max_pairs:
                exhaustive = OptimizerSettings(max_reordered_joins=max(n, 2), max_join_pairs=max_pairs + 1)
                row["exhaustive"] = measure(shape, n, exhaustive, repeat, seed)
            row["default"] = measure(shape, n, OptimizerSettings(), repeat, seed)
            row["greedy"] = measure(shape, n, OptimizerSettings(max_reordered_joins=1), 1, seed)
            if "exhaustive" in row:
                row["greedy_cost_ratio"] = row["greedy"]["cost"] / row["exhaustive"]["cost"]
                row["default_cost_ratio"] = row["default"]["cost"] / row["exhaustive"]["cost"]
            rows.append(row)
            progress(_line(row))
    fallback = []
    for shape in ("chain", "star", "snowflake", "cycle"):
        result = measure(shape, 50, OptimizerSettings(), repeat, seed)
        fallback.append({"shape": shape, "n": 50, "default": result})
        progress(f"{shape:<10} 50  default (greedy) {result['ms']:>9.1f} ms  groups {result['groups']}")
    return {"benchmark": "join_enumeration", "seed": seed, "repeat": repeat, "max_pairs": max_pairs,
            "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                        "processor": platform.processor() or platform.machine()},
            "rows": rows, "fallback": fallback}


def _line(row: dict[str, Any]) -> str:
    ex = row.get("exhaustive")
    ok = "" if ex is None else ("ok" if ex["join_pairs"] == row["expected_pairs"] else "MISMATCH")
    ex_text = "-" if ex is None else f"{ex['ms']:>9.1f} ms {ex['cpu_ms']:>9.1f} CPU ms " \
                                     f"{ex['groups']:>6} groups {ex['expressions']:>7} expr " \
                                     f"{ex['join_pairs']:>7} pairs {ok}"
    ratio = f"{row['greedy_cost_ratio']:.3f}" if "greedy_cost_ratio" in row else "-"
    return (f"{row['shape']:<10} {row['n']:>2}  known {row['expected_pairs']:>9}  exhaustive {ex_text}  "
            f"default {row['default']['ms']:>8.1f} ms  greedy/exhaustive cost {ratio}")


def markdown(report: dict[str, Any]) -> str:
    cpu = any("cpu_ms" in (row.get("exhaustive") or {}) for row in report["rows"])   # older reports lack it
    lines = ["| shape | N | known pairs | exhaustive ms | " + ("exhaustive CPU ms | " if cpu else "")
             + "groups | expressions | pairs built | default ms | greedy ms | greedy cost / exhaustive |",
             "|---|---:|---:|---:|" + ("---:|" if cpu else "") + "---:|---:|---:|---:|---:|---:|"]
    for row in report["rows"]:
        ex = row.get("exhaustive")
        cells = [row["shape"], str(row["n"]), f"{row['expected_pairs']:,}"]
        if ex:
            cells += [f"{ex['ms']:.1f}"] + ([f"{ex['cpu_ms']:.1f}"] if cpu else []) \
                + [f"{ex['groups']:,}", f"{ex['expressions']:,}", f"{ex['join_pairs']:,}"]
        else:
            cells += ["—"] * (5 if cpu else 4)
        cells += [f"{row['default']['ms']:.1f}", f"{row['greedy']['ms']:.1f}",
                  f"{row['greedy_cost_ratio']:.3f}" if "greedy_cost_ratio" in row else "—"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("| fallback (default settings) | N | ms | groups |")
    lines.append("|---|---:|---:|---:|")
    for row in report["fallback"]:
        lines.append(f"| {row['shape']} | {row['n']} | {row['default']['ms']:.1f} | {row['default']['groups']} |")
    if "tpch" in report:
        tpch = report["tpch"]
        tpch_cpu = "median_cpu_ms" in tpch
        lines += ["", f"TPC-H at SF 1 statistics: median {tpch['median_ms']:.1f} ms, max {tpch['max_ms']:.1f} ms"
                  + (f" (CPU time: median {tpch['median_cpu_ms']:.1f} ms, max {tpch['max_cpu_ms']:.1f} ms)"
                     if tpch_cpu else ""), "",
                  "| query | ms | " + ("CPU ms | " if tpch_cpu else "") + "groups | expressions | join pairs |",
                  "|---|---:|" + ("---:|" if tpch_cpu else "") + "---:|---:|---:|"]
        lines += [f"| {r['query']} | {r['ms']:.1f} | " + (f"{r['cpu_ms']:.1f} | " if tpch_cpu else "")
                  + f"{r['groups']} | {r['expressions']} | {r['join_pairs']} |" for r in tpch["rows"]]
    return "\n".join(lines)


def plot(report: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for shape in SHAPES:
        rows = [r for r in report["rows"] if r["shape"] == shape and "exhaustive" in r]
        if rows:
            ns = [r["n"] for r in rows]
            left.plot(ns, [r["exhaustive"]["ms"] for r in rows], marker="o", label=f"{shape} (exhaustive)")
            right.plot(ns, [r["exhaustive"]["join_pairs"] for r in rows], marker="o", label=f"{shape} built")
            right.plot(ns, [r["expected_pairs"] for r in rows], linestyle=":", color="black", linewidth=0.8)
        greedy = [r for r in report["rows"] if r["shape"] == shape and r["default"]["heuristic"]]
        if greedy:
            left.plot([r["n"] for r in greedy], [r["default"]["ms"] for r in greedy], linestyle="--",
                      label=f"{shape} (greedy, default)")
    left.axhline(1000, color="red", linewidth=0.8, label="1 s target")
    for axis, title, ylabel in ((left, "optimization time", "ms (best of runs)"),
                                (right, "join pairs built vs known csg-cmp pairs (dotted)", "pairs")):
        axis.set_yscale("log")
        axis.set_xlabel("relations")
        axis.set_ylabel(ylabel)
        axis.set_title(title)
        axis.grid(True, alpha=0.3)
    left.legend(fontsize=7)
    right.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.join_enumeration", description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=int, default=20, help="largest number of relations (default 20)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per point; the best time counts (default 3)")
    parser.add_argument("--max-pairs", type=int, default=60_000,
                        help="run the exhaustive enumeration only where the shape has at most this many pairs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-tpch", action="store_true", help="skip the 22 TPC-H queries at SF 1 statistics")
    parser.add_argument("--out", type=Path, default=RESULTS / "join-enumeration.json")
    args = parser.parse_args(argv)
    if args.max_n < 2:
        parser.error("--max-n must be at least 2")
    report = run(args.max_n, args.repeat, args.max_pairs, args.seed)
    if not args.no_tpch:
        from benchmarks.join_enumeration.tpch import run_tpch

        report["tpch"] = run_tpch(args.repeat)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    temporary = args.out.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(report, indent=1))
    temporary.replace(args.out)
    plot(report, args.out.with_suffix(".png"))
    print()
    print(markdown(report))
    print(f"\nwrote {args.out} and {args.out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
