"""``cbo stats show``: stored statistics as text, and a column's histogram as a PNG."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cbo.errors import CboError
from cbo.sources.catalog import Catalog
from cbo.sources.statistics import store_for
from stats.model import ColumnStats, TableStats

if TYPE_CHECKING:
    from matplotlib.figure import Figure


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


def _short(value: object) -> str:
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
                     f"{_short(c.min):>24} {_short(c.max):>24} {c.avg_width:>6.1f} {len(c.mcv):>4} "
                     f"{len(c.histogram):>7}")
    for group, distinct in stats.column_groups.items():
        lines.append(f"column group ({group}): {distinct:,.0f} distinct")
    unique = stats.unique_columns()
    if unique:   # what the planner takes as unique keys while the statistics are fresh
        lines.append(f"unique by exact distinct counts: {', '.join(unique)}")
    return "\n".join(lines)


def _column_text(stats: TableStats, c: ColumnStats) -> str:
    lines = [f"{stats.table}.{c.name} ({c.kind}): {100 * c.null_fraction:.2f}% NULL, {c.distinct:,.0f} distinct"
             f"{' (counted)' if c.distinct_exact else ''}, "
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
    save_plot(column_figure(stats, c), out)


def save_plot(figure: Figure, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=100)


def column_figure(stats: TableStats, c: ColumnStats) -> Figure:
    """A column's distribution on its value axis: each histogram bucket a bar spanning its
    bounds, so wide buckets look wide, with area equal to its rows (height is rows per unit of
    value: per day for dates); the MCVs as stems at their values on the same axis, in rows
    (right scale). Numbers, dates and timestamps have a real axis; strings and booleans an
    ordinal one (the sorted values, evenly spaced, not to scale), and the axis says so."""
    # A Figure of its own, not pyplot's: no backend is chosen or switched, so a notebook's
    # inline drawing keeps working, and the CLI saves it without a display.
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    if not c.histogram and not c.mcv:
        raise CboError(f"{stats.table}.{c.name} has neither a histogram nor MCVs to plot")
    values = [b.lower for b in c.histogram] + [b.upper for b in c.histogram] + [v for v, _ in c.mcv]
    position, unit, ordinal = _value_axis(c.kind, [v for v in values if v is not None])
    figure = Figure(figsize=(9, 4.5))
    ax = figure.subplots()
    for bucket in c.histogram:
        left = position(bucket.lower)
        # Bounds are inclusive: an integer, date or ordinal bucket covers upper - lower + 1 units.
        width = position(bucket.upper) - left + unit
        if width <= 0:
            width = 1e-9
        ax.add_patch(Rectangle((left, 0), width, bucket.rows if ordinal else bucket.rows / width,
                               facecolor="#4a78b0", edgecolor="white", linewidth=0.5, label="histogram bucket"))
    ax.autoscale_view()
    ax.set_ylabel("rows" if ordinal else f"rows per {'day' if c.kind == 'date' else 'unit'} (bucket area = rows)")
    ax.set_title(f"{stats.table}.{c.name}: {len(c.histogram)} histogram buckets (MCVs apart), {len(c.mcv)} MCVs")
    if c.mcv:
        mcv_ax = ax.twinx() if c.histogram else ax   # MCVs alone: one scale
        xs = [position(v) for v, _ in c.mcv]
        rows = [f * stats.row_count for _, f in c.mcv]
        mcv_ax.vlines(xs, 0, rows, colors="#c0392b", linewidth=1.5, label="MCV")
        mcv_ax.plot(xs, rows, "o", color="#c0392b", markersize=3)
        mcv_ax.set_ylim(bottom=0)
        mcv_ax.set_ylabel("MCV rows", color="#c0392b")
    if ordinal:
        ordered = sorted({v for v in values if v is not None}, key=_order_key)
        step = max(1, len(ordered) // 12)
        ax.set_xticks([position(v) for v in ordered[::step]])
        ax.set_xticklabels([_short(v) for v in ordered[::step]], rotation=60, ha="right", fontsize=8)
        ax.set_xlabel(f"{c.name} ({c.kind}s on an ordinal axis: sorted values evenly spaced, not to scale)")
    else:
        if c.kind in ("date", "timestamp"):
            ax.xaxis_date()
        ax.set_xlabel(f"{c.name} ({c.kind})")
    figure.tight_layout()
    return figure


def _order_key(value: Any) -> tuple[str, Any]:
    return (str(type(value)), value)


def _value_axis(kind: str, values: list[Any]) -> tuple[Callable[[Any], float], float, bool]:
    """(value -> x, the width of one value, whether the axis is ordinal)."""
    from matplotlib.dates import date2num

    if kind in ("date", "timestamp"):
        # One day per unit; a date bucket's inclusive upper bound adds a day, a timestamp's nothing.
        return (lambda v: float(date2num(v))), (1.0 if kind == "date" else 0.0), False
    if kind == "number":
        discrete = all(isinstance(v, int) or (isinstance(v, float) and v.is_integer()) for v in values)
        return (lambda v: float(v)), (1.0 if discrete else 0.0), False
    ordered = sorted(set(values), key=_order_key)
    index = {v: float(i) for i, v in enumerate(ordered)}
    return (lambda v: index[v]), 1.0, True
