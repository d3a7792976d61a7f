"""The plain-Python sweep of a few segments (``matching._pieces_small``) gives the numpy sweep's
result to the last bit, so which one runs never changes an estimate."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cbo.estimate.column import Segment
from cbo.estimate.matching import _array_sum, _arrays_of, _bounds, _histogram_tuples, _pieces_numpy, _pieces_small


def _segments(rng: random.Random) -> tuple[Segment, ...]:
    bounds = sorted(rng.sample(range(-50, 400), rng.randint(1, 4) * 2))
    found = []
    for lower, upper in zip(bounds[::2], bounds[1::2]):
        domain = float(upper - lower + 1)
        distinct = rng.choice([domain, domain * rng.random(), 1.0])
        found.append(Segment(lower, upper, rng.choice([0.0, rng.uniform(1, 1e6), 3.0]), distinct, domain))
    return tuple(found)


def test_small_sweep_equals_numpy_sweep() -> None:
    rng = random.Random(7)
    compared = 0
    for _ in range(2000):
        members = [_segments(rng) for _ in range(rng.randint(2, 4))]
        arrays = [_arrays_of(m) for m in members]
        assert all(a is not None for a in arrays)
        small, vectorized = _pieces_small(arrays), _pieces_numpy(arrays)  # type: ignore[arg-type]
        assert (small is None) == (vectorized is None)
        if small is not None and vectorized is not None:
            compared += 1
            for a, b in zip(small, vectorized):
                assert a.tolist() == b.tolist()   # exactly, not approximately
            assert float(small[2].sum()) == float(vectorized[2].sum())
    assert compared > 500


def test_histogram_tuples_of_single_segments() -> None:
    a = _arrays_of((Segment(1, 100, 1000.0, 100.0, 100.0),))
    b = _arrays_of((Segment(51, 150, 200.0, 100.0, 100.0),))
    # 50 shared values, 10 rows each on one side and 2 on the other.
    assert _histogram_tuples([a, b]) == 50 * 10.0 * 2.0  # type: ignore[list-item]
    assert np.isclose(_histogram_tuples([a, b, a]), 50 * 10.0 * 2.0 * 10.0)  # type: ignore[list-item]


def test_array_sum_is_numpys_sum_to_the_last_bit() -> None:
    # The small sweep's rows are summed without an array; numpy's pairwise summation adds in
    # another order than a plain loop from eight values on, so the two must agree bit for bit.
    rng = random.Random(11)
    for _ in range(20000):
        values = [rng.choice([rng.uniform(0, 1e9), rng.expovariate(1) * 10 ** rng.randint(-5, 12), 1.0, 0.0])
                  for _ in range(rng.randint(0, 140))]
        assert _array_sum(values) == float(np.array(values).sum()), values


def test_histogram_tuples_of_a_few_segments_equal_the_numpy_sweep() -> None:
    rng = random.Random(13)
    for _ in range(2000):
        arrays = [_arrays_of(_segments(rng)) for _ in range(rng.randint(2, 3))]
        vectorized = _pieces_numpy(arrays)  # type: ignore[arg-type]
        expected = 0.0 if vectorized is None else float(vectorized[2].sum())
        assert _histogram_tuples(arrays) == expected  # type: ignore[arg-type]


def test_matched_histogram_equals_the_general_sweep() -> None:
    # Whole-number segments are matched in numpy (``matched_histogram``); others by the sweep
    # over aligned parts (``joins.aligned``). On whole numbers the two count the same rows
    # (numpy adds in another order: equal to rounding), scaled and thinned or not.
    from cbo.estimate.column import ColumnEstimate
    from cbo.estimate.joins import aligned
    from cbo.estimate.matching import matched_histogram

    rng = random.Random(29)
    compared = 0
    for _ in range(500):
        a, b = (ColumnEstimate("number", 0.0, (), _segments(rng)) for _ in range(2))
        a, b = a.scaled(rng.choice([1.0, 0.4, 3.0])), b.scaled(rng.choice([1.0, 0.25, 2.0]))
        fast = matched_histogram(a, b)
        assert fast is not None
        a_live, b_live = a.live, b.live
        swept = sum(sa.rows * min(1.0, sb.distinct / max(sa.domain, sb.domain, 1.0))
                    for sa, sb in aligned(a_live.segments, b_live.segments))
        assert fast == pytest.approx(swept, rel=1e-9, abs=1e-9)
        compared += swept > 0
    assert compared > 100


def test_bounds_are_numpys_unique_bounds() -> None:
    # ``_bounds`` stands for ``np.unique`` of the members' bounds: the same values, in order,
    # each once (shared bounds, adjacent segments, one-value segments, a single member)
    rng = random.Random(11)
    for _ in range(500):
        members = [_segments(rng) for _ in range(rng.randint(1, 4))]
        arrays = [_arrays_of(m) for m in members]
        assert all(a is not None for a in arrays)
        expected = np.unique(np.concatenate([np.concatenate([a[0], a[1] + 1.0]) for a in arrays]))  # type: ignore[index]
        assert _bounds(arrays).tolist() == expected.tolist()  # type: ignore[arg-type]
    one = (np.array([5.0]), np.array([5.0]), np.array([1.0]), np.array([1.0]), np.array([1.0]))
    assert _bounds([one, one]).tolist() == [5.0, 6.0]
