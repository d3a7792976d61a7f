"""Answer comparison across engines: types normalized, numbers within tolerance, order when asked."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from cbo.answers import compare, digest, is_ordered


def test_decimal_float_and_date_forms_of_one_answer_match():
    spark = [("A", Decimal("25.501234"), dt.date(1995, 3, 15), 4)]
    duckdb = [("A", 25.50123401, dt.date(1995, 3, 15), 4)]
    assert compare(duckdb, spark, ordered=True).matches


def test_a_wrong_number_is_reported_with_its_position():
    verdict = compare([("A", 1.0), ("B", 2.0)], [("A", 1.0), ("B", 2.5)], ordered=True)
    assert not verdict.matches
    assert verdict.detail == "row 1 column 1: 2.5, expected 2.0"


def test_row_counts_and_nulls_matter():
    assert compare([(1,)], [(1,), (1,)], ordered=False).detail == "2 rows, expected 1"
    assert not compare([(None,)], [(0,)], ordered=False).matches


def test_order_is_compared_only_when_asked():
    rows, flipped = [(1, "a"), (2, "b")], [(2, "b"), (1, "a")]
    assert compare(rows, flipped, ordered=False).matches
    assert not compare(rows, flipped, ordered=True).matches


def test_is_ordered_looks_at_the_outermost_query_only():
    assert is_ordered("select a from t order by a")
    assert not is_ordered("select a from (select a from t order by a limit 3) s")
    assert is_ordered("with c as (select 1 as a) select a from c order by a")


def test_digest_ignores_order_of_unordered_answers_and_sees_changes():
    rows = [(1, Decimal("2.50")), (2, Decimal("3.75"))]
    assert digest(rows, ordered=False) == digest(list(reversed(rows)), ordered=False)
    assert digest(rows, ordered=True) != digest(list(reversed(rows)), ordered=True)
    assert digest(rows, ordered=False) != digest([(1, Decimal("2.51")), (2, Decimal("3.75"))], ordered=False)


rows_strategy = st.lists(st.tuples(st.one_of(st.none(), st.integers(-1000, 1000)),
                                   st.one_of(st.none(), st.text(max_size=3)),
                                   st.floats(-1e6, 1e6, allow_nan=False)), max_size=20)


@given(rows_strategy, st.randoms())
def test_any_permutation_matches_as_a_multiset(rows, rnd):
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    assert compare(rows, shuffled, ordered=False).matches


@given(rows_strategy.filter(bool), st.data())
def test_dropping_a_row_never_matches(rows, data):
    index = data.draw(st.integers(0, len(rows) - 1))
    assert not compare(rows, rows[:index] + rows[index + 1:], ordered=False).matches


def test_rows_that_tie_after_rounding_are_not_paired_by_input_order():
    # Rounding before sorting made 0.0 and 0.00390625 tie, and a stable sort then paired rows
    # by their input order: a shuffle of an answer was reported as a mismatch.
    rows = [(None, None, 0.0), (None, None, 0.00390625)]
    assert compare(rows, list(reversed(rows)), ordered=False).matches
    assert compare(list(reversed(rows)), rows, ordered=False).matches


def test_near_equal_floats_are_paired_across_columns():
    # Exact sorting puts these in opposite orders; each row still has a partner within tolerance.
    expected = [(0.3, 1.0), (0.30000000000000004, 2.0)]
    actual = [(0.30000000000000004, 1.0), (0.3, 2.0)]
    assert compare(expected, actual, ordered=False).matches
    verdict = compare(expected, [(0.3, 1.0), (0.3, 1.0)], ordered=False)
    assert not verdict.matches and "2.0" in verdict.detail


close_floats = st.floats(-1e3, 1e3, allow_nan=False).flatmap(
    lambda v: st.sampled_from([v, v + 1e-9, v - 1e-9, round(v, 2)]))


@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 2)), close_floats, close_floats), max_size=12),
       st.randoms())
def test_a_permutation_with_last_digit_noise_matches(rows, rnd):
    noisy = [(a, b * (1 + 1e-12), c) for a, b, c in rows]
    rnd.shuffle(noisy)
    assert compare(rows, noisy, ordered=False).matches
