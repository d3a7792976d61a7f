"""Plot an end-to-end TPC-H run (``benchmarks.tpch.run``): seconds per query and configuration.

    python -m benchmarks.tpch.plot_run benchmarks/results/tpch-run-all-spark-sf1.json

Top: one bar group per query (log scale), geometric means at the right. Bottom: cbo's time
divided by the faster Spark configuration's, per query, with the 1.2x limit drawn.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

COLORS = {"cbo": "#c0392b", "cbo-oracle": "#e59866", "spark-default": "#2e86c1", "spark-cbo": "#85c1e9"}


def plot(report: dict, out: Path) -> None:
    configs = report["configs"]
    records = report["queries"]
    names = [r["query"] for r in records] + ["geomean"]
    width = 0.8 / len(configs)
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(15, 8), gridspec_kw={"height_ratios": [2, 1]})
    for index, config in enumerate(configs):
        heights = [r["seconds"].get(config, np.nan) for r in records]
        heights.append(report["summary"]["geomean_seconds"].get(config) or np.nan)
        top.bar(np.arange(len(names)) + index * width, heights, width, label=config, color=COLORS.get(config))
    top.set_xticks(np.arange(len(names)) + 0.4 - width / 2)
    top.set_xticklabels(names)
    top.set_yscale("log")
    top.set_ylabel("seconds (best of runs)")
    top.set_title(f"TPC-H SF {report['scale_factor']:g} on Spark ({report['placement']}): cbo vs Spark's optimizer")
    top.legend(ncol=len(configs))
    ratios = [r.get("cbo_vs_faster_spark", np.nan) for r in records]
    bottom.bar(np.arange(len(records)), ratios, color=["#c0392b" if x > 1.2 else "#27ae60" for x in ratios])
    bottom.axhline(1.0, color="grey", linewidth=0.8)
    bottom.axhline(1.2, color="#c0392b", linewidth=0.8, linestyle="--")
    bottom.set_xticks(np.arange(len(records)))
    bottom.set_xticklabels([r["query"] for r in records])
    bottom.set_ylabel("cbo / faster Spark")
    figure.tight_layout()
    figure.savefig(out, dpi=110)
    plt.close(figure)


if __name__ == "__main__":
    path = Path(sys.argv[1])
    plot(json.loads(path.read_text()), path.with_suffix(".png"))
    print(f"saved {path.with_suffix('.png')}")
