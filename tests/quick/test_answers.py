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
