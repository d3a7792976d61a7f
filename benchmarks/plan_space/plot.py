"""The plan-space figure: chosen/fastest per query, and each draw's time against its cost,
both as ratios to its query's chosen plan."""

from __future__ import annotations

from pathlib import Path


def plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [r for r in report["queries"] if "chosen_over_fastest" in r]
    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    names = [r["query"] for r in done]
    left.bar(names, [r["chosen_over_fastest"] for r in done], color="#4c72b0")
    for level, style in ((1.1, "--"), (1.5, ":")):
        left.axhline(level, color="grey", linestyle=style, linewidth=1, label=f"{level}x")
    left.set_ylabel("chosen / fastest plan drawn (time)")
    left.set_title(f"TPC-H SF {report['scale_factor']:g}: chosen plan against {report['k']} random plans")
    left.tick_params(axis="x", rotation=60)
    left.legend(loc="upper right")
    for record in done:
        chosen_cost, chosen_time = record["chosen"]["cost"], record["chosen"]["seconds"]
        for draw in record["draws"]:
            if draw["error"]:
                continue
            x = draw["cost"] / chosen_cost
            if draw["seconds"] is None:
                right.scatter(x, report["cutoff"], marker="x", color="#c44e52", s=20)
            else:
                right.scatter(x, draw["seconds"] / chosen_time, color="#4c72b0", s=12, alpha=0.7)
    right.axhline(1, color="grey", linewidth=1)
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("estimated cost / chosen plan's")
    right.set_ylabel("time / chosen plan's (x: cut off)")
    rho = report["summary"].get("spearman_ratios_to_chosen")
    right.set_title("draws" + ("" if rho is None else f" (Spearman {rho:.2f})"))
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
