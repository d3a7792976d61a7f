"""``cbo stats show``: stored statistics as text, and a column's histogram as a PNG."""

from __future__ import annotations

from pathlib import Path

from cbo.catalog import Catalog
from cbo.errors import CboError
from cbo.statistics import store_for
from stats.model import ColumnStats, TableStats


def show(catalog: Catalog, target: str, plot: Path | None = None) -> str:
    table_name, column_name = _split(catalog, target)
    table = catalog.table(table_name)
    loaded = store_for(catalog).load(table.qualified_name)
    if loaded.stats is None:
        why = loaded.problem or f"no statistics for {table.qualified_name}: run `cbo analyze {table.name}`"
        raise CboError(why)
    stats = loaded.stats
    if column_name is None:
        if plot is not None:
            raise CboError("--plot needs a column: TABLE.COLUMN")
        return _table_text(stats)
    if column_name not in stats.columns:
        raise CboError(f"no column '{column_name}' in the statistics of {table.qualified_name} "
                       f"(columns: {', '.join(stats.columns)})")
    column = stats.columns[column_name]
    if plot is not None:
        _plot(stats, column, plot)
    return _column_text(stats, column) + (f"\nplot saved to {plot}" if plot else "")


def _split(catalog: Catalog, target: str) -> tuple[str, str | None]:
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        try:
            catalog.table(name)
        except CboError:
            continue
        rest = ".".join(parts[cut:])
        return name, rest or None
    catalog.table(parts[0])  # raises with the closest names
    raise AssertionError


def _short(value) -> str:  # type: ignore[no-untyped-def]
    text = "NULL" if value is None else str(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _table_text(stats: TableStats) -> str:
    lines = [f"{stats.table}: {stats.row_count:,.0f} rows"
             + (f", {stats.size_bytes / 1e6:,.1f} MB" if stats.size_bytes else "")
             + f"; collected {stats.collected_at} by {stats.collector}"
             + (f" (sample {stats.sampled_fraction:g})" if stats.sampled_fraction < 1 else ""),
             f"{'column':<18} {'kind':<9} {'null %':>7} {'distinct':>12} {'min':>24} {'max':>24} "
             f"{'width':>6} {'mcv':>4} {'buckets':>7}"]
    for c in stats.columns.values():
        lines.append(f"{c.name:<18} {c.kind:<9} {100 * c.null_fraction:>7.2f} {c.distinct:>12,.0f} "
                     f"{_short(c.min):>24} {_short(c.max):>24} {c.avg_width:>6.1f} {len(c.mcv):>4} {len(c.histogram):>7}")
    for group, distinct in stats.column_groups.items():
        lines.append(f"column group ({group}): {distinct:,.0f} distinct")
    return "\n".join(lines)


def _column_text(stats: TableStats, c: ColumnStats) -> str:
    lines = [f"{stats.table}.{c.name} ({c.kind}): {100 * c.null_fraction:.2f}% NULL, {c.distinct:,.0f} distinct, "
             f"min {_short(c.min)}, max {_short(c.max)}, width avg {c.avg_width:.1f} max {c.max_width}"]
    if c.mcv:
        lines.append(f"most common values ({len(c.mcv)}):")
        lines += [f"  {_short(v):<26} {100 * f:6.2f}%" for v, f in c.mcv]
    if c.histogram:
        lines.append(f"equi-depth histogram ({len(c.histogram)} buckets, MCVs excluded):")
        shown = c.histogram if len(c.histogram) <= 12 else c.histogram[:6] + c.histogram[-6:]
        for i, b in enumerate(shown):
            if len(c.histogram) > 12 and i == 6:
                lines.append("  ...")
            lines.append(f"  [{_short(b.lower)} .. {_short(b.upper)}]  rows {b.rows:,.0f}  distinct {b.distinct:,.0f}")
    return "\n".join(lines)


def _plot(stats: TableStats, c: ColumnStats, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = (1 if c.histogram else 0) + (1 if c.mcv else 0)
    if panels == 0:
        raise CboError(f"{stats.table}.{c.name} has neither a histogram nor MCVs to plot")
    fig, axes = plt.subplots(1, panels, figsize=(7 * panels, 4), squeeze=False)
    index = 0
    if c.histogram:
        ax = axes[0][index]
        ax.bar(range(len(c.histogram)), [b.rows for b in c.histogram], width=1.0, edgecolor="white")
        ax.set_title(f"{stats.table}.{c.name}: equi-depth histogram ({len(c.histogram)} buckets)")
        ax.set_xlabel(f"bucket ({_short(c.histogram[0].lower)} .. {_short(c.histogram[-1].upper)})")
        ax.set_ylabel("rows")
        index += 1
    if c.mcv:
        ax = axes[0][index]
        ax.bar([_short(v) for v, _ in c.mcv], [f * stats.row_count for _, f in c.mcv])
        ax.set_title(f"most common values ({len(c.mcv)})")
        ax.set_ylabel("rows")
        ax.tick_params(axis="x", rotation=70)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
