"""A value that does not compare with a column's histogram bounds (a string against numbers) is
recognized by an explicit check (``ColumnEstimate.comparable``), estimated as the first
histogram segment's average, and noted as a default where a filter estimate rests on it."""

from __future__ import annotations

from cbo.estimate import Estimator
from cbo.ir import types as T
from cbo.ir.expressions import ColumnFactory, Constant, compare
from cbo.ir.operators import Filter
from stats.from_values import table_stats
from tests.quick.test_estimator import col, make_scan, num


def _numbers():  # type: ignore[no-untyped-def]
    values = list(range(1, 1001))   # no MCVs: all in the histogram
    stats = {"t.n": table_stats("t.n", {"x": values}, sample_size=0)}
    scan = make_scan(ColumnFactory(), "t.n", ["x"])
    return Estimator(stats), scan


def test_comparable_is_an_explicit_check() -> None:
    estimator, scan = _numbers()
    column = estimator.estimate(scan).column(scan.columns[0])
    assert column.comparable(5)
    assert column.comparable(5000)            # outside the bounds, still comparable
    assert not column.comparable("abc")
    first = column.segments[0]
    assert column.rows_equal("abc") == first.rows / max(first.domain, 1.0)
    assert column.presence("abc") == min(1.0, first.distinct / max(first.domain, 1.0))
    assert column.rows_equal(5000) == 0.0     # placed: beyond the last bound


def test_a_filter_on_an_incomparable_value_notes_the_default() -> None:
    estimator, scan = _numbers()
    x = col(scan, "x")
    placed = estimator.estimate(Filter(scan, compare("eq", x, num(7))))
    assert not any("does not compare" in note for note in placed.notes)
    unplaced = estimator.estimate(Filter(scan, compare("eq", x, Constant("abc", T.VARCHAR))))
    assert any(note.startswith("default") and "does not compare" in note for note in unplaced.notes)
    assert unplaced.rows > 0
