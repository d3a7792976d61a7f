"""The drawings: every label fits its box and nothing is cut; ``stats show --plot`` draws
histogram buckets on the value axis with the MCVs on the same axis."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from cbo.workloads.tpch_queries import QUERY_DIR
from cbo.sources.catalog import load_catalog
from cbo.estimate import Estimator
from cbo.app.explain import NodeInfo, add_estimate, add_physical_details, describe, to_svg
from cbo.memo.render import memo_svg
from cbo.planner import Planner
from stats.store import StatsStore
from tests.plan_files import TPCH_STATS

QUERIES = QUERY_DIR
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def store() -> StatsStore:
    return StatsStore(TPCH_STATS)


@pytest.fixture(scope="module")
def estimator(store) -> Estimator:  # type: ignore[no-untyped-def]
    return Estimator({table: store.load(table).stats for table in store.tables()})


def boxes(svg: str) -> list[tuple[dict[str, float], list[tuple[float, float, str]]]]:
    """(rect, [(x, y, text)]) per box; asserts every text lies inside its box, measured
    conservatively (a monospace glyph 0.6 em wide)."""
    root = ET.fromstring(svg)
    size = float(root.get("font-size"))  # type: ignore[arg-type]
    found: list[tuple[dict[str, float], list[tuple[float, float, str]]]] = []
    for element in root.iter():   # document order: a box's rect, then its texts
        if element.tag == SVG + "rect":
            found.append(({k: float(element.get(k)) for k in ("x", "y", "width", "height")}, []))  # type: ignore[arg-type]
        elif element.tag == SVG + "text":
            found[-1][1].append((float(element.get("x")), float(element.get("y")), element.text or ""))  # type: ignore[arg-type]
    for r, texts in found:
        for x, y, text in texts:
            assert r["x"] <= x and x + len(text) * size * 0.6 <= r["x"] + r["width"], \
                f"label runs past its box: {text!r}"
            assert r["y"] + size <= y <= r["y"] + r["height"], f"label outside its box vertically: {text!r}"
    return found


@pytest.mark.parametrize("query", ["q05", "q08", "q02"])
def test_plan_drawing_fits_every_label(query, tpch_parquet_catalog, estimator):
    planned = Planner(load_catalog(tpch_parquet_catalog), estimator=estimator).plan(
        (QUERIES / f"{query}.sql").read_text())
    infos: list[NodeInfo] = []

    def annotate(node, info):  # type: ignore[no-untyped-def]
        add_estimate(info, node, planned)
        add_physical_details(info, node, planned.operator(node))
        infos.append(info)

    svg = to_svg(describe(planned.plan, annotate))
    drawn = boxes(svg)
    assert len(drawn) == len(infos)
    lines = {text for _, texts in drawn for _, _, text in texts}
    for info in infos:   # the figures are whole ("est. rows 600,57" was cut from 600,572)
        assert f"est. rows {info.estimated_rows:,.0f}" in lines
        if info.details.get("strategy"):
            assert info.details["strategy"] in lines
    # Boxes do not overlap.
    rects = [r for r, _ in drawn]
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"] \
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"]


def test_memo_drawing_fits_every_label(tpch_parquet_catalog, estimator):
    planned = Planner(load_catalog(tpch_parquet_catalog), estimator=estimator).plan(
        (QUERIES / "q05.sql").read_text())
    assert planned.optimized is not None
    drawn = boxes(memo_svg(planned.optimized))
    assert len(drawn) == len(planned.optimized.memo.groups)
    lines = {text for _, texts in drawn for _, _, text in texts}
    for group in planned.optimized.memo.groups:
        assert f"G{group.id}: {len(group.expressions)} expr · {group.rows:,.1f} rows" in lines


def test_histogram_is_drawn_on_the_value_axis(store, tmp_path):
    import datetime

    from matplotlib.dates import date2num
    from matplotlib.patches import Rectangle

    from cbo.app.stats_view import column_figure, save_plot

    stats = store.load("lake.lineitem").stats
    for name in ("l_quantity", "l_shipdate"):
        column = stats.columns[name]
        figure = column_figure(stats, column)
        ax = figure.axes[0]
        bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_label() == "histogram bucket"]
        assert len(bars) == len(column.histogram)

        def x(value):  # type: ignore[no-untyped-def]
            return date2num(value) if isinstance(value, datetime.date) else float(value)

        for bar, bucket in zip(bars, column.histogram):
            # Each bar spans its bucket's bounds (inclusive: integers and dates one unit more),
            # so bucket widths show; its area is its rows.
            assert bar.get_x() == pytest.approx(x(bucket.lower))
            right = bar.get_x() + bar.get_width()
            assert x(bucket.upper) - 1e-6 <= right <= x(bucket.upper) + 1 + 1e-6
            assert bar.get_width() * bar.get_height() == pytest.approx(bucket.rows)
        mcv_x = sorted(line for line in _mcv_positions(figure))
        assert mcv_x == pytest.approx(sorted(x(v) for v, _ in column.mcv))
    # Strings: an ordinal axis, and the drawing says so.
    segment = store.load("lake.customer").stats.columns["c_mktsegment"]
    figure = column_figure(store.load("lake.customer").stats, segment)
    assert "ordinal" in figure.axes[0].get_xlabel()
    save_plot(figure, tmp_path / "plot.png")
    assert (tmp_path / "plot.png").stat().st_size > 1000


def _mcv_positions(figure) -> list[float]:  # type: ignore[no-untyped-def]
    found = []
    for ax in figure.axes:
        for collection in ax.collections:
            if collection.get_label() == "MCV":
                found += [float(segment[0][0]) for segment in collection.get_segments()]
    return found
