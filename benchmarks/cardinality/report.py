"""q-error summaries and box plots of the harness's records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

SYSTEMS = ("cbo", "cbo_upper", "postgres", "duckdb", "spark")


def q_error(estimate: float, true: float) -> float:
    """max(est/true, true/est), both clamped to at least 1 (PostgreSQL's convention for 0 rows)."""
    e, t = max(float(estimate), 1.0), max(float(true), 1.0)
    return max(e / t, t / e)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per system, overall and per join count: count, median, p90, p95, max, share under-estimated;
    then the same over whole queries only (``whole``, ``whole:<joins>``) where records mark them."""
    systems = [s for s in SYSTEMS if any(r.get(s) is not None for r in records)]
    joins = sorted({r["joins"] for r in records})
    summary: dict[str, Any] = {}
    for system in systems:
        rows = [r for r in records if r.get(s := system) is not None and r.get("true") is not None]
        summary[system] = {"all": _stats(rows, s)}
        for j in joins:
            summary[system][str(j)] = _stats([r for r in rows if r["joins"] == j], s)
        whole = [r for r in rows if r.get("whole")]
        if whole:
            summary[system]["whole"] = _stats(whole, s)
            for j in joins:
                summary[system][f"whole:{j}"] = _stats([r for r in whole if r["joins"] == j], s)
    return summary


def on_the_same(records: list[dict[str, Any]], systems: list[str]) -> list[dict[str, Any]]:
    """The records every one of ``systems`` estimated: their summaries compare the systems on
    the same sub-plans (each system's own summary also counts what only it estimated)."""
    return [r for r in records if all(r.get(s) is not None for s in systems)]


def _stats(rows: list[dict[str, Any]], system: str) -> dict[str, float]:
    if not rows:
        return {"n": 0}
    errors = np.array([q_error(r[system], r["true"]) for r in rows])
    under = np.mean([max(r[system], 1.0) < max(r["true"], 1.0) for r in rows])
    return {"n": len(rows), "median": float(np.median(errors)), "p90": float(np.percentile(errors, 90)),
            "p95": float(np.percentile(errors, 95)), "max": float(errors.max()), "under": float(under)}


def markdown(summary: dict[str, Any], title: str) -> str:
    lines = [f"### {title}", "", "| system | joins | sub-plans | median | p90 | p95 | max | under-estimated |",
             "|---|---|---|---|---|---|---|---|"]
    for system, parts in summary.items():
        for key, s in parts.items():
            if not s.get("n"):
                continue
            label = "all" if key == "all" else key
            lines.append(f"| {system} | {label} | {s['n']} | {s['median']:.2f} | {s['p90']:.2f} | {s['p95']:.2f} | "
                         f"{s['max']:.3g} | {s['under']:.0%} |")
    return "\n".join(lines)


def plot(records: list[dict[str, Any]], path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = [s for s in SYSTEMS if any(r.get(s) is not None for r in records)]
    joins = sorted({r["joins"] for r in records})
    figure, axis = plt.subplots(figsize=(max(6, 1.6 * len(joins) * len(systems) / 2), 4.5))
    width = 0.8 / max(len(systems), 1)
    colours = {"cbo": "#1f77b4", "cbo_upper": "#9467bd", "postgres": "#d62728", "duckdb": "#2ca02c", "spark": "#ff7f0e"}
    for k, system in enumerate(systems):
        data = [[q_error(r[system], r["true"]) for r in records if r["joins"] == j and r.get(system) is not None]
                or [1.0] for j in joins]
        positions = [i + (k - (len(systems) - 1) / 2) * width for i in range(len(joins))]
        parts = axis.boxplot(data, positions=positions, widths=width * 0.9, patch_artist=True, showfliers=True,
                             whis=(5, 95), flierprops={"markersize": 2})
        for box in parts["boxes"]:
            box.set_facecolor(colours.get(system, "#888"))
            box.set_alpha(0.7)
        axis.plot([], [], color=colours.get(system, "#888"), linewidth=6, alpha=0.7, label=system)
    axis.set_yscale("log")
    axis.set_xticks(range(len(joins)))
    axis.set_xticklabels([str(j) for j in joins])
    axis.set_xlabel("joins in the sub-plan")
    axis.set_ylabel("q-error (log scale; whiskers p5-p95)")
    axis.set_title(title)
    axis.legend()
    axis.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
