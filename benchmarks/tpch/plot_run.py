"""Plot an end-to-end TPC-H run (``benchmarks.tpch.run``): seconds per query and configuration.

    python -m benchmarks.tpch.plot_run benchmarks/results/tpch-run-all-spark-sf1.json

Top: one bar group per query (log scale), geometric means at the right. Bottom: cbo's time
divided by the faster Spark configuration's, per query, and (with cbo-eager/cbo-local)
AUTOMATIC's divided by the better forced strategy's, with the 1.1x limit drawn. A query a
configuration did not finish in its time limit is a hatched bar up to the limit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

COLORS = {"cbo": "#c0392b", "cbo-eager": "#f1948a", "cbo-local": "#922b21", "cbo-oracle": "#e59866",
          "spark-default": "#2e86c1", "spark-cbo": "#85c1e9", "spark-dsv2": "#1a5276", "postgres": "#7d3c98"}


def plot(report: dict, out: Path) -> None:
    configs = report["configs"]
    records = report["queries"]
    names = [r["query"] for r in records] + ["geomean"]
    width = 0.8 / len(configs)
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(15, 8), gridspec_kw={"height_ratios": [2, 1]})
    for index, config in enumerate(configs):
        heights = [r["seconds"].get(config, np.nan) for r in records]
        heights.append(report["summary"]["geomean_seconds"].get(config) or np.nan)
        positions = np.arange(len(names)) + index * width
        top.bar(positions, heights, width, label=config, color=COLORS.get(config))
        # A cancelled query: a hatched bar up to the limit, never a time.
        for position, r in zip(positions, records):
            limit = r.get("timeouts", {}).get(config)
            if limit:
                top.bar(position, limit, width, color="none", edgecolor=COLORS.get(config), hatch="//")
                top.text(position, limit, "timeout", rotation=90, ha="center", va="bottom", fontsize=7)
    top.set_xticks(np.arange(len(names)) + 0.4 - width / 2)
    top.set_xticklabels(names)
    top.set_yscale("log")
    top.set_ylabel("seconds (best of runs)")
    top.set_title(f"TPC-H SF {report['scale_factor']:g} on Spark ({report['placement']}): cbo vs Spark's optimizer")
    top.legend(ncol=len(configs))
    series = [("cbo_vs_faster_spark", "cbo / faster Spark", "#c0392b")]
    if any("automatic_vs_better_forced" in r for r in records):
        series.append(("automatic_vs_better_forced", "AUTOMATIC / better of eager, local", "#7f8c8d"))
    bar = 0.8 / len(series)
    for index, (key, label, color) in enumerate(series):
        ratios = [r.get(key, np.nan) for r in records]
        bottom.bar(np.arange(len(records)) + index * bar, ratios, bar, label=label, color=color)
    bottom.axhline(1.0, color="grey", linewidth=0.8)
    bottom.axhline(1.1, color="#c0392b", linewidth=0.8, linestyle="--")
    bottom.set_xticks(np.arange(len(records)) + 0.4 - bar / 2)
    bottom.set_xticklabels([r["query"] for r in records])
    bottom.set_ylabel("ratio (< 1: cbo faster)")
    bottom.legend()
    figure.tight_layout()
    figure.savefig(out, dpi=110)
    plt.close(figure)


if __name__ == "__main__":
    path = Path(sys.argv[1])
    plot(json.loads(path.read_text()), path.with_suffix(".png"))
    print(f"saved {path.with_suffix('.png')}")
