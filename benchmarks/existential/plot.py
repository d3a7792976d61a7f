"""Plot the existential benchmark: seconds per case and form; the threshold sweep's choices.

    python -m benchmarks.existential.plot benchmarks/results/existential-sf0.1.json
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

COLORS = {"spark": "#2e86c1", "3.1": "#27ae60", "3.2": "#f39c12", "3.3": "#8e44ad", "free": "#c0392b"}
MARKERS = {"3.1": "o", "3.2": "s", "3.3": "^"}


def plot(report: dict, out: Path) -> None:
    configs, records = report["configs"], report["cases"]
    names = [r["case"].replace(" / ", "\n") for r in records]
    width = 0.8 / len(configs)
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(max(12, len(records) * 1.1), 10),
                                         gridspec_kw={"height_ratios": [3, 2]})
    for index, config in enumerate(configs):
        heights = [r["seconds"].get(config, np.nan) for r in records]
        top.bar(np.arange(len(records)) + index * width, heights, width, label=config, color=COLORS.get(config))
    top.set_xticks(np.arange(len(records)) + 0.4 - width / 2)
    top.set_xticklabels(names, fontsize=7, rotation=25, ha="right")
    top.set_yscale("log")
    top.set_ylabel("seconds (best of runs)")
    top.set_title(f"IN subqueries as early-out joins, TPC-H SF {report['scale_factor']:g} on Spark: "
                  "forms forced, cbo free, Spark")
    top.legend(ncol=len(configs))
    sweeps = [r for r in records if r.get("sweep")]
    points = sweeps[0]["sweep"] if sweeps else []
    labels = ["∞" if math.isinf(t["threshold"]) else f"{t['threshold']:g}" for t in points]
    for column, record in enumerate(sweeps):
        for row, point in enumerate(record["sweep"]):
            form = point["forms"][0] if point["forms"] else "3.3"
            bottom.scatter(column, row, marker=MARKERS.get(form, "x"), color=COLORS.get(form, "black"), s=60)
            bottom.annotate(f"{point['seconds']:.2f}", (column, row), textcoords="offset points", xytext=(8, -3),
                            fontsize=6)
    bottom.set_yticks(range(len(labels)))
    bottom.set_yticklabels(labels)
    bottom.set_ylabel("threshold")
    bottom.set_xticks(range(len(sweeps)))
    bottom.set_xticklabels([r["case"].replace(" / ", "\n") for r in sweeps], fontsize=7, rotation=25, ha="right")
    bottom.set_title("form cbo chooses at each threshold (○ 3.1, □ 3.2, △ 3.3) and its seconds")
    figure.tight_layout()
    figure.savefig(out, dpi=100)
    plt.close(figure)


if __name__ == "__main__":
    path = Path(sys.argv[1])
    plot(json.loads(path.read_text()), path.with_suffix(".png"))
    print(f"saved {path.with_suffix('.png')}")
