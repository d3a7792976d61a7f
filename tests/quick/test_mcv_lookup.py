"""The lookups of many most common values at once (``matching.rows_equal_each`` and the parts
of ``matching_tuples``, ``joint``, ``joins.matching_pairs`` and ``joins.matched_rows`` built on
them) give the per-value methods' numbers to the last bit, so which path runs never changes an
estimate: on random whole-number columns (scaled, thinned, with bounds shared between
segments) and on every whole-number column of TPC-DS's SF 1 statistics."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from cbo.estimate.column import ColumnEstimate, Segment
from cbo.estimate.joins import _mcv_matched, _mcv_matched_per_value, _mcv_pairs, _mcv_pairs_per_value
from cbo.estimate.matching import (
    _joint_mcv, _joint_mcv_per_value, _mcv_tuples, _mcv_tuples_per_value, presence_each, rows_equal_each)

TPCDS_STATS = Path(__file__).parents[1] / "testdata" / "stats" / "tpcds-sf1"


def _column(rng: random.Random) -> ColumnEstimate:
    bounds = sorted(rng.sample(range(-40, 300), rng.randint(0, 6) * 2))
    segments = []
    for lower, upper in zip(bounds[::2], bounds[1::2]):
        if segments and rng.random() < 0.3:
            lower = segments[-1].upper   # a bound shared with the segment before
        domain = float(upper - lower + 1)
        segments.append(Segment(lower, upper, rng.choice([0.0, rng.uniform(1, 1e5), 2.0]),
                                rng.choice([domain, domain * rng.random(), 1.0]), domain))
    values = rng.sample(range(-50, 320), rng.randint(0, 12))
    mcv = tuple((v, rng.choice([rng.uniform(0.1, 1e4), 0.5, 40.0])) for v in values)
    column = ColumnEstimate("number", 0.0, mcv, tuple(segments))
    for _ in range(rng.randint(0, 2)):
        column = column.scaled(rng.choice([0.3, 2.5, rng.uniform(0.001, 10.0)]))
    return column


def _probes(columns: list[ColumnEstimate], rng: random.Random) -> list[int]:
    found = {v for c in columns for v, _ in c.mcv}
    found |= {b for c in columns for s in c.segments for b in (s.lower, s.upper, s.lower - 1, s.upper + 1)}
    found |= set(rng.sample(range(-60, 330), 20))
    return sorted(found)


def test_lookups_equal_the_per_value_methods_on_random_columns() -> None:
    rng = random.Random(41)
    for _ in range(600):
        columns = [_column(rng) for _ in range(rng.randint(2, 4))]
        probes = _probes(columns, rng)
        values = np.array(probes, dtype=np.float64)
        for c in columns:
            assert rows_equal_each(c, values).tolist() == [c.rows_equal(v) for v in probes]  # type: ignore[union-attr]
            assert presence_each(c, values, c.survival == 1.0).tolist() == [c.presence(v) for v in probes]  # type: ignore[union-attr]
            assert presence_each(c, values, True).tolist() == [c.live.presence(v) for v in probes]  # type: ignore[union-attr]
        assert _mcv_tuples(columns) == _mcv_tuples_per_value(columns)
        assert _joint_mcv(columns) == _joint_mcv_per_value(columns)
        a, b = columns[0], columns[1]
        assert _mcv_pairs(a, b) == _mcv_pairs_per_value(a.live, b.live)
        assert _mcv_matched(a, b) == _mcv_matched_per_value(a.live, b.live)


def test_lookups_equal_the_per_value_methods_on_tpcds_columns() -> None:
    from stats.store import StatsStore

    store = StatsStore(TPCDS_STATS)
    columns = []
    for table in store.tables():
        stats = store.load(table).stats
        assert stats is not None
        for column in stats.columns.values():
            estimate = ColumnEstimate.from_stats(column, stats.row_count)
            if estimate.kind == "number" and all(type(v) is int for v, _ in estimate.mcv):
                columns.append(estimate)
    rng = random.Random(43)
    looked_up = both = 0
    for _ in range(300):
        a, b = rng.sample(columns, 2)
        a, b = a.scaled(rng.uniform(0.001, 1.0)), b.scaled(rng.choice([1.0, rng.uniform(0.01, 3.0)]))
        probes = _probes([a, b], rng)
        values = np.array(probes, dtype=np.float64)
        found = rows_equal_each(b, values)
        if found is None:
            continue
        looked_up += 1
        assert found.tolist() == [b.rows_equal(v) for v in probes]
        assert presence_each(b, values, True).tolist() == [b.live.presence(v) for v in probes]  # type: ignore[union-attr]
        assert _mcv_tuples([a, b]) == _mcv_tuples_per_value([a, b])
        # (None: ``a``'s histogram is not over whole numbers, and the callers go value by value)
        pairs, matched = _mcv_pairs(a, b), _mcv_matched(a, b)
        assert pairs is None or pairs == _mcv_pairs_per_value(a.live, b.live)
        assert matched is None or matched == _mcv_matched_per_value(a.live, b.live)
        both += pairs is not None and matched is not None
    assert looked_up > 100 and both > 50


def test_values_of_other_kinds_take_the_per_value_path() -> None:
    text = ColumnEstimate("string", 0.0, (("a", 3.0),), (Segment("b", "k", 10.0, 5.0, 5.0),))
    number = ColumnEstimate("number", 0.0, ((1.5, 2.0),), ())
    values = np.array([1.0, 2.0])
    assert rows_equal_each(text, values) is None
    assert rows_equal_each(number, values) is None
    assert _mcv_pairs(text, number) is None
