"""The cardinality estimator on small hand-checked cases, and invariants on random ones."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cbo.estimate import Estimator
from cbo.ir import types as T
from cbo.ir.expressions import (Call, ColumnFactory, ColumnRef, Constant, SpecialForm, compare, conjunction, is_null,
                                negate)
from cbo.ir.operators import Aggregate, AssumedKey, Filter, Join, Scan, Values
from stats.from_values import table_stats


def make_scan(factory: ColumnFactory, table: str, names: list[str], keys: tuple[str, ...] = ()) -> Scan:
    columns = tuple(factory.new(n, T.INTEGER) for n in names)
    by_name = dict(zip(names, columns))
    return Scan(table, columns, tuple(names), (tuple(by_name[k] for k in keys),) if keys else ())


def col(scan: Scan, name: str) -> ColumnRef:
    return ColumnRef(scan.columns[scan.column_names.index(name)])


def num(value: int) -> Constant:
    return Constant(value, T.INTEGER)


def close(estimate: float, truth: float, tolerance: float) -> bool:
    return max(estimate, 1) / max(truth, 1) <= tolerance and max(truth, 1) / max(estimate, 1) <= tolerance


# ------------------------------------------------------------------------------------------------
# Hand-checked cases


def test_skewed_column_uses_mcvs_for_the_common_value_and_the_histogram_for_the_rest():
    values = [0] * 900 + list(range(1, 101))
    stats = {"t.skew": table_stats("t.skew", {"x": values}, sample_size=0)}
    factory = ColumnFactory()
    scan = make_scan(factory, "t.skew", ["x"])
    estimator = Estimator(stats)
    x = col(scan, "x")
    assert close(estimator.rows(Filter(scan, compare("eq", x, num(0)))), 900, 1.01)
    assert close(estimator.rows(Filter(scan, compare("eq", x, num(50)))), 1, 1.5)
    assert close(estimator.rows(Filter(scan, compare("lte", x, num(50)))), 950, 1.05)
    assert close(estimator.rows(Filter(scan, compare("gt", x, num(50)))), 50, 1.1)
    assert estimator.rows(Filter(scan, compare("gt", x, num(1000)))) == 0


def test_decimal_constants_meet_the_statistics_numbers_as_the_values_they_name():
    # l_discount holds 0.00 to 0.10 (eleven values, all most common), as floats in the
    # statistics; the query's literals are decimals. A decimal and a float compare exactly:
    # 0.07 the float is above 0.07 the decimal, and the two hash apart.
    import decimal

    values = [round(k / 100, 2) for k in range(11) for _ in range(100)]
    stats = {"t.l": table_stats("t.l", {"d": values}, sample_size=200)}    # (not the whole table)
    factory = ColumnFactory()
    scan = make_scan(factory, "t.l", ["d"])

    def rows(predicate) -> float:  # type: ignore[no-untyped-def]
        return Estimator(stats).rows(Filter(scan, predicate))

    seven = Constant(decimal.Decimal("0.07"), T.decimal(3, 2))
    five = Constant(decimal.Decimal("0.05"), T.decimal(3, 2))
    assert abs(rows(compare("eq", col(scan, "d"), seven)) - 100) < 1e-6
    assert abs(rows(compare("lte", col(scan, "d"), seven)) - 800) < 1e-6
    between = SpecialForm("BETWEEN", (col(scan, "d"), five, seven), T.BOOLEAN)
    assert abs(rows(between) - 300) < 1e-6
    # On the sample (a whole-table one, which answers exactly), bounds computed from
    # decimals: 0.06 + 0.01 folded in floats is 0.06999999999999999, below the float 0.07.
    whole = {"t.l": table_stats("t.l", {"d": values})}
    hundredth = Constant(decimal.Decimal("0.01"), T.decimal(3, 2))
    six = Constant(decimal.Decimal("0.06"), T.decimal(3, 2))
    low, high = Call("subtract", (six, hundredth), T.decimal(4, 2)), Call("add", (six, hundredth), T.decimal(4, 2))
    folded = SpecialForm("BETWEEN", (col(scan, "d"), low, high), T.BOOLEAN)
    assert abs(Estimator(whole).rows(Filter(scan, folded)) - 300) < 1e-6
    # Decimals that are values, not statistics (a VALUES list), meet the same constants.
    d = factory.new("d", T.decimal(3, 2))
    listed = Values((d,), tuple((Constant(decimal.Decimal(v), T.decimal(3, 2)),) for v in ("0.07", "0.05", "0.07")))
    assert abs(Estimator({}).rows(Filter(listed, compare("eq", ColumnRef(d), seven))) - 2) < 1e-6
    # and statistics made from decimals (``table_stats``) hold them as the collectors do
    exact = {"t.l": table_stats("t.l", {"d": [decimal.Decimal(str(v)) for v in values]}, sample_size=200)}
    assert abs(Estimator(exact).rows(Filter(scan, compare("eq", col(scan, "d"), seven))) - 100) < 1e-6


def test_correlated_pair_is_estimated_from_the_sample_where_independence_fails():
    n = 20_000
    a = [i % 10 for i in range(n)]
    columns = {"a": a, "b": list(a)}        # b equals a: fully correlated
    predicate = lambda s: conjunction([compare("eq", col(s, "a"), num(3)), compare("eq", col(s, "b"), num(3))])  # noqa: E731
    factory = ColumnFactory()
    scan = make_scan(factory, "t.pair", ["a", "b"])
    without = Estimator({"t.pair": table_stats("t.pair", columns, sample_size=0)})
    assert close(without.rows(Filter(scan, predicate(scan))), 200, 1.05)   # the independence baseline
    with_sample = Estimator({"t.pair": table_stats("t.pair", columns, sample_size=2_000)})
    assert close(with_sample.rows(Filter(scan, predicate(scan))), 2_000, 1.2)


def _orders_items(sample_size: int, null_share: float = 0.0, only_even: bool = False):  # type: ignore[no-untyped-def]
    orders = {"id": list(range(1, 1001)), "flag": [i % 2 for i in range(1, 1001)]}
    fks = []
    for i in range(5000):
        value = i % 1000 + 1
        if only_even and value % 2:
            value += 1 if value < 1000 else -1
        fks.append(None if i < 5000 * null_share else value)
    items = {"fk": fks}
    stats = {"t.orders": table_stats("t.orders", orders, sample_size=sample_size),
             "t.items": table_stats("t.items", items, sample_size=sample_size)}
    factory = ColumnFactory()
    return Estimator(stats), make_scan(factory, "t.orders", ["id", "flag"], ("id",)), make_scan(factory, "t.items", ["fk"])


def test_key_foreign_key_join_with_filters_on_the_key_side():
    estimator, orders, items = _orders_items(sample_size=0)
    on = compare("eq", col(items, "fk"), col(orders, "id"))
    assert close(estimator.rows(Join("inner", items, orders, on)), 5000, 1.05)
    by_key = Filter(orders, compare("lte", col(orders, "id"), num(100)))
    assert close(estimator.rows(Join("inner", items, by_key, on)), 500, 1.1)
    by_other_column = Filter(orders, compare("eq", col(orders, "flag"), num(1)))
    assert close(estimator.rows(Join("inner", items, by_other_column, on)), 2500, 1.1)


def test_join_correlated_with_a_filter_is_corrected_by_the_samples():
    # Items reference even order ids only; flag = 1 keeps odd ids: no item matches them.
    estimator, orders, items = _orders_items(sample_size=10_000, only_even=True)
    on = compare("eq", col(items, "fk"), col(orders, "id"))
    odd = Filter(orders, compare("eq", col(orders, "flag"), num(1)))
    even = Filter(orders, compare("eq", col(orders, "flag"), num(0)))
    assert estimator.rows(Join("inner", items, odd, on)) < 50           # independence would say 2,500
    assert close(estimator.rows(Join("inner", items, even, on)), 5000, 1.1)


def test_semi_and_anti_joins_split_the_probe_side():
    estimator, orders, items = _orders_items(sample_size=0)
    on = compare("eq", col(items, "fk"), col(orders, "id"))
    first_hundred = Filter(orders, compare("lte", col(orders, "id"), num(100)))
    semi = estimator.rows(Join("semi", items, first_hundred, on))
    anti = estimator.rows(Join("anti", items, first_hundred, on))
    assert close(semi, 500, 1.1)
    assert close(anti, 4500, 1.05)
    assert math.isclose(semi + anti, 5000, rel_tol=1e-6)


def test_an_exists_mark_is_true_on_the_semi_joins_rows_and_a_filter_reads_it():
    # A mark with a TRUE mark predicate (EXISTS, or an IN made two-valued) is TRUE exactly where
    # the semi join keeps the row: a filter on it, alone, negated or in an OR, counts from that
    # share instead of a default half.
    estimator, orders, items = _orders_items(sample_size=0)
    on = compare("eq", col(items, "fk"), col(orders, "id"))
    first_hundred = Filter(orders, compare("lte", col(orders, "id"), num(100)))
    factory = ColumnFactory()
    mark = factory.new("mark", T.BOOLEAN)
    marked = Join("mark", items, first_hundred, on, mark, Constant(True, T.BOOLEAN))
    semi = estimator.rows(Join("semi", items, first_hundred, on))
    assert math.isclose(estimator.rows(marked), 5000, rel_tol=1e-6)
    assert math.isclose(estimator.rows(Filter(marked, ColumnRef(mark))), semi, rel_tol=1e-6)
    assert math.isclose(estimator.rows(Filter(marked, negate(ColumnRef(mark)))), 5000 - semi, rel_tol=1e-6)
    either = SpecialForm("OR", (ColumnRef(mark), compare("gt", col(items, "fk"), num(900))), T.BOOLEAN)
    assert semi < estimator.rows(Filter(marked, either)) < 5000 * 0.5
    # IN's three-valued mark (its predicate x = y) depends on NULLs: no share is claimed.
    three = Join("mark", items, first_hundred, Constant(True, T.BOOLEAN), mark,
                 compare("eq", col(items, "fk"), col(orders, "id")))
    assert estimator.rows(Filter(three, ColumnRef(mark))) == pytest.approx(5000 * 0.5)


def test_nulls_never_join_and_outer_joins_keep_their_preserved_side():
    estimator, orders, items = _orders_items(sample_size=0, null_share=0.2)
    fk = col(items, "fk")
    on = compare("eq", fk, col(orders, "id"))
    assert close(estimator.rows(Join("inner", items, orders, on)), 4000, 1.05)
    assert close(estimator.rows(Filter(items, is_null(fk))), 1000, 1.01)
    assert close(estimator.rows(Filter(items, negate(is_null(fk)))), 4000, 1.01)
    assert estimator.rows(Join("left", items, orders, on)) >= 5000
    assert close(estimator.rows(Join("anti", items, orders, on)), 1000, 1.1)


def test_group_by_a_key_counts_its_distinct_values():
    estimator, orders, items = _orders_items(sample_size=0)
    assert close(estimator.rows(Aggregate(items, (items.columns[0],))), 1000, 1.05)
    joined = Join("inner", items, orders, compare("eq", col(items, "fk"), col(orders, "id")))
    # id is the key of orders: grouping by (id, flag) has as many groups as ids
    assert close(estimator.rows(Aggregate(joined, (orders.columns[0], orders.columns[1]))), 1000, 1.05)


def test_missing_statistics_fall_back_to_defaults_and_say_so():
    factory = ColumnFactory()
    scan = make_scan(factory, "t.unknown", ["x"])
    estimate = Estimator({}).estimate(Filter(scan, compare("eq", col(scan, "x"), num(1))))
    assert math.isfinite(estimate.rows) and estimate.rows > 0
    assert any("no statistics for t.unknown" in note for note in estimate.notes)


# ------------------------------------------------------------------------------------------------
# Invariants on random data and predicates

values_strategy = st.lists(st.one_of(st.none(), st.integers(0, 12)), min_size=1, max_size=300)


def predicates(scan: Scan):  # type: ignore[no-untyped-def]
    column = st.sampled_from([ColumnRef(c) for c in scan.columns])
    constant = st.integers(-2, 14).map(num)
    comparison = st.builds(lambda op, c, k: compare(op, c, k),
                           st.sampled_from(["eq", "neq", "lt", "lte", "gt", "gte"]), column, constant)
    membership = st.builds(lambda c, ks: SpecialForm("IN", (c, *ks), T.BOOLEAN), column,
                           st.lists(constant, min_size=1, max_size=4))
    nullness = st.builds(lambda c, neg: negate(is_null(c)) if neg else is_null(c), column, st.booleans())
    atom = st.one_of(comparison, membership, nullness)
    return st.recursive(atom, lambda inner: st.one_of(
        st.builds(lambda a, b: SpecialForm("OR", (a, b), T.BOOLEAN), inner, inner),
        st.builds(negate, inner)), max_leaves=4)


@st.composite
def filtered_tables(draw):  # type: ignore[no-untyped-def]
    size = draw(st.integers(1, 300))
    a = draw(st.lists(st.one_of(st.none(), st.integers(0, 12)), min_size=size, max_size=size))
    b = draw(st.lists(st.one_of(st.none(), st.integers(0, 12)), min_size=size, max_size=size))
    sample = draw(st.sampled_from([0, 50, 10_000]))
    factory = ColumnFactory()
    scan = make_scan(factory, "t.r", ["a", "b"])
    stats = {"t.r": table_stats("t.r", {"a": a, "b": b}, sample_size=sample, buckets=8, mcv_size=4)}
    first, second = draw(predicates(scan)), draw(predicates(scan))
    return Estimator(stats), scan, first, second


@settings(max_examples=150, deadline=None)
@given(filtered_tables())
def test_estimates_are_finite_and_a_conjunction_is_never_above_either_side(case):
    estimator, scan, first, second = case
    both = estimator.rows(Filter(scan, conjunction([first, second])))
    alone = [estimator.rows(Filter(scan, first)), estimator.rows(Filter(scan, second))]
    for value in [both, *alone]:
        assert math.isfinite(value) and value >= 0
    assert both <= min(alone) * (1 + 1e-9) + 1e-9


@st.composite
def joined_tables(draw):  # type: ignore[no-untyped-def]
    left_values = draw(values_strategy)
    right_values = draw(values_strategy)
    factory = ColumnFactory()
    left = make_scan(factory, "t.l", ["k"])
    right = make_scan(factory, "t.r", ["k"])
    sample = draw(st.sampled_from([0, 10_000]))
    stats = {"t.l": table_stats("t.l", {"k": left_values}, sample_size=sample, buckets=8, mcv_size=4),
             "t.r": table_stats("t.r", {"k": right_values}, sample_size=sample, buckets=8, mcv_size=4)}
    left_plan = Filter(left, draw(predicates(left))) if draw(st.booleans()) else left
    right_plan = Filter(right, draw(predicates(right))) if draw(st.booleans()) else right
    return Estimator(stats), left_plan, right_plan, compare("eq", ColumnRef(left.columns[0]), ColumnRef(right.columns[0]))


@settings(max_examples=150, deadline=None)
@given(joined_tables())
def test_join_estimates_respect_their_kinds(case):
    estimator, left, right, on = case
    L, R = estimator.rows(left), estimator.rows(right)
    rows = {kind: estimator.rows(Join(kind, left, right, on)) for kind in ("inner", "left", "right", "full", "semi", "anti")}
    for value in rows.values():
        assert math.isfinite(value) and value >= 0
    assert rows["left"] >= L - 1e-6
    assert rows["right"] >= R - 1e-6
    assert rows["full"] >= max(L, R) - 1e-6
    assert rows["semi"] <= L + 1e-6 and rows["anti"] <= L + 1e-6
    assert rows["semi"] + rows["anti"] == pytest.approx(L, rel=1e-6, abs=1e-6)


def test_a_join_residual_that_nothing_passes_leaves_no_matched_rows():
    # found by the random subquery test: a residual estimated at 0 (over a near-empty input)
    # divided by zero instead of answering "no row passes"
    from cbo.estimate.joins import _with_residual

    assert _with_residual(1.0, 0.0, 1.3e-12, 0.0) == 0.0
    assert 0.0 < _with_residual(0.5, 10.0, 100.0, 0.5) <= 0.5


def test_a_join_estimate_that_falls_back_to_the_uniform_formula_says_so():
    # A column without value statistics cannot be matched value by value: the uniform formula
    # answers, and a note tells EXPLAIN (it used to switch formulas silently).
    from cbo.estimate.column import ColumnEstimate
    from cbo.estimate.joins import matched_rows, matching_pairs

    unknown, known = ColumnEstimate.unknown(1000.0), ColumnEstimate.of_values([1, 2, 2, 3])
    notes: list[str] = []
    assert matching_pairs(unknown, known, notes) > 0
    assert notes and "without value statistics" in notes[0] and "uniform" in notes[0]
    same: list[str] = []
    matching_pairs(known, ColumnEstimate.of_values([2, 3]), same)
    matched_rows(known, ColumnEstimate.of_values([2, 3]), same)
    assert same == []   # comparable values: matched value by value, nothing to note


def test_a_value_is_found_in_its_segment_by_bisection_as_by_scanning():
    # rows_equal and presence bisect the segments' upper bounds; the scan they replace is the
    # reference, for values inside, between, on and beyond the bounds.
    from cbo.estimate.column import ColumnEstimate
    from stats.from_values import table_stats

    stats = table_stats("t", {"x": [i % 700 for i in range(5000)] + [3] * 400})
    column = ColumnEstimate.from_stats(stats.columns["x"], stats.row_count)
    live = column.live
    assert len(live.segments) > 10

    def scanned(value):  # type: ignore[no-untyped-def]
        from cbo.estimate.column import _in_segment

        for i, s in enumerate(live.segments):
            if _in_segment(value, live.segments, i):
                return s.rows / max(s.domain, 1.0)
        return 0.0

    bounds = [s.lower for s in live.segments] + [s.upper for s in live.segments]
    for value in [-5, 0, 1, 350, 699, 700, 10_000, *bounds, *(b + 0.5 for b in bounds)]:
        if value in dict(live.mcv):
            continue
        assert column.rows_equal(value) == scanned(value), value


def test_a_string_bound_outside_a_bucket_keeps_the_whole_bucket():
    """A bucket's strings are placed by their characters after the bucket's common prefix; a
    bound beyond the bucket need not share that prefix, and it cuts nothing off the bucket."""
    from cbo.estimate.values import fraction_within

    lower, upper = "almond antique cyan", "almond spring mint"
    assert fraction_within(lower, upper, lower, "antique sienna") == 1.0
    assert fraction_within(lower, upper, "aa", "antique sienna") == 1.0
    inside = fraction_within(lower, upper, lower, "almond m")
    assert inside is not None and 0.0 < inside < 1.0
    assert fraction_within(lower, upper, "antique", None) == 0.0


def test_a_string_met_by_a_date_column_is_the_date_it_spells():
    # ``d_date BETWEEN '2000-01-27' AND DATE '2000-04-26'``: the engines cast the string to a
    # date; read as a string it compared with no bound, and the range took a default share
    # (a fifth of a 200-year calendar for a quarter of a year).
    import datetime as dt

    days = [dt.date(1900, 1, 1) + dt.timedelta(days=k) for k in range(73_000)]
    stats = {"t.d": table_stats("t.d", {"d": days}, sample_size=0)}
    factory = ColumnFactory()
    d = factory.new("d", T.DATE)
    scan = Scan("t.d", (d,), ("d",))
    low, high = Constant("2000-01-27", T.VARCHAR), Constant(dt.date(2000, 4, 26), T.DATE)
    between = SpecialForm("BETWEEN", (ColumnRef(d), low, high), T.BOOLEAN)
    assert close(Estimator(stats).rows(Filter(scan, between)), 91, 1.1)
    later = compare("gte", ColumnRef(d), Constant("2090-01-01", T.VARCHAR))
    assert close(Estimator(stats).rows(Filter(scan, later)), sum(1 for day in days if day >= dt.date(2090, 1, 1)), 1.1)


def test_a_conjunct_over_constants_alone_keeps_every_row_or_none():
    # ``'c' = 's'``: a CTE's branch tag met by its reader's filter. It holds for no row; its
    # twin ``'c' = 'c'`` for every row (both were a default 0.005).
    stats = {"t.a": table_stats("t.a", {"a": list(range(1000))}, sample_size=0)}
    factory = ColumnFactory()
    scan = make_scan(factory, "t.a", ["a"])
    c, s = Constant("c", T.VARCHAR), Constant("s", T.VARCHAR)
    estimator = Estimator(stats)
    assert estimator.rows(Filter(scan, compare("eq", c, s))) == 0
    assert estimator.rows(Filter(scan, compare("eq", c, c))) == 1000
    either = SpecialForm("OR", (compare("eq", c, s), compare("lt", col(scan, "a"), num(100))), T.BOOLEAN)
    assert close(estimator.rows(Filter(scan, either)), 100, 1.05)


def test_a_column_compared_with_another_moved_by_a_constant_matches_their_distributions():
    # ``r1.rank = r2.rank + 1`` (a row and its neighbour by rank) and ``d3 > d1 + 5``: one side
    # a column moved by a constant. Matched value by value (as a join class is), the shift
    # decides: 1 to 100 against 2 to 101 meets on 99 values; against 1001 to 1100, on none.
    # (It was a default 0.005, the equality's, and a third for the range.)
    import datetime as dt

    stats = {"t.r": table_stats("t.r", {"k": list(range(1, 101))}, sample_size=0),
             "t.s": table_stats("t.s", {"k": list(range(1, 101))}, sample_size=0),
             "t.d": table_stats("t.d", {"d": [dt.date(2000, 1, 1) + dt.timedelta(days=k) for k in range(100)]},
                                sample_size=0)}
    factory = ColumnFactory()
    r, s = make_scan(factory, "t.r", ["k"]), make_scan(factory, "t.s", ["k"])
    estimator = Estimator(stats)

    def moved(op: str, amount: int, constant=num):  # type: ignore[no-untyped-def]
        return Join("inner", r, s, compare("eq", col(r, "k"), Call(op, (col(s, "k"), constant(amount)), T.INTEGER)))

    assert close(estimator.rows(moved("add", 1)), 99, 1.05)
    assert close(estimator.rows(moved("subtract", 10)), 90, 1.05)
    assert estimator.rows(moved("add", 1000)) == 0
    d1 = factory.new("d", T.DATE)
    d3 = factory.new("d", T.DATE)
    days1, days3 = Scan("t.d", (d1,), ("d",)), Scan("t.d", (d3,), ("d",))
    later = compare("gt", ColumnRef(d3), Call("add_days", (ColumnRef(d1), num(5)), T.DATE))
    truth = sum(1 for a in range(100) for b in range(100) if b > a + 5)
    assert close(estimator.rows(Join("inner", days3, days1, later)), truth, 1.1)


def test_a_column_every_disjunct_of_an_or_restricts_keeps_the_disjuncts_values():
    # ``year = 1999 OR (year = 1998 AND month = 12) OR (year = 2000 AND month = 1)``: the rows
    # passing hold three years, 1999's twelve times the others'. Left unnarrowed, the year kept
    # all its values, and ``year = 1999`` above (a CTE's reader) kept a 200th of the rows.
    years = [1900 + k // 365 for k in range(73_000)]
    months = [min((k % 365) // 30, 11) + 1 for k in range(73_000)]
    stats = {"t.d": table_stats("t.d", {"year": years, "month": months}, sample_size=0)}
    factory = ColumnFactory()
    scan = make_scan(factory, "t.d", ["year", "month"])
    year, month = col(scan, "year"), col(scan, "month")
    either = SpecialForm("OR", (compare("eq", year, num(1999)),
                                conjunction([compare("eq", year, num(1998)), compare("eq", month, num(12))]),
                                conjunction([compare("eq", year, num(2000)), compare("eq", month, num(1))])), T.BOOLEAN)
    passing = Filter(scan, either)
    estimator = Estimator(stats)
    rows = estimator.rows(passing)
    truth = sum(1 for y, m in zip(years, months) if y == 1999 or (y == 1998 and m == 12) or (y == 2000 and m == 1))
    assert close(rows, truth, 1.1)
    above = estimator.rows(Filter(passing, compare("eq", year, num(1999))))
    assert close(above, 365, 1.15), above
    # ranges: the disjuncts' ranges of one column, summed where they meet
    ranges = SpecialForm("OR", (SpecialForm("BETWEEN", (year, num(1950), num(1954)), T.BOOLEAN),
                                SpecialForm("BETWEEN", (year, num(1952), num(1960)), T.BOOLEAN)), T.BOOLEAN)
    kept = Filter(scan, ranges)
    assert estimator.rows(Filter(kept, compare("gt", year, num(1960)))) < 1
    assert close(estimator.rows(Filter(kept, compare("lte", year, num(1954)))), estimator.rows(kept) * 5 / 11, 1.3)


def test_a_union_all_column_holds_its_inputs_values():
    # The channel tag of each branch and the years each reads: a filter on them above the
    # union (a CTE of three channels, read once per channel and year) keeps the branch's rows,
    # where the union's columns, known only by their distinct values, kept a default share.
    from cbo.ir.operators import Project, SetOp

    stats = {"t.s": table_stats("t.s", {"y": [1998 + k % 5 for k in range(5000)]}, sample_size=0),
             "t.w": table_stats("t.w", {"y": [2000 + k % 5 for k in range(2000)]}, sample_size=0)}
    factory = ColumnFactory()
    store, web = make_scan(factory, "t.s", ["y"]), make_scan(factory, "t.w", ["y"])
    tags = []
    for scan, tag in ((store, "s"), (web, "w")):
        c = factory.new("channel", T.VARCHAR)
        tags.append((Project(scan, ((c, Constant(tag, T.VARCHAR)), (scan.columns[0], col(scan, "y")))), c))
    channel, year = factory.new("channel", T.VARCHAR), factory.new("y", T.INTEGER)
    union = SetOp("union", False, tuple(p for p, _ in tags), (channel, year),
                  tuple((c, p.input.columns[0]) for p, c in tags))
    estimator = Estimator(stats)
    assert estimator.rows(union) == 7000
    stores_2001 = conjunction([compare("eq", ColumnRef(channel), Constant("s", T.VARCHAR)),
                               compare("eq", ColumnRef(year), num(2001))])
    assert close(estimator.rows(Filter(union, stores_2001)), 1000, 1.1)
    assert close(estimator.rows(Filter(union, compare("gte", ColumnRef(year), num(2003)))), 800, 1.1)


def test_an_expression_over_a_joined_column_is_estimated_on_its_tables_sample():
    # substring(code, 1, 2) IN (...) over a join: the statistics know ``code`` but not its
    # prefix; the codes' table sample answers it (a twentieth of the rows), not a default.
    factory = ColumnFactory()
    codes = [f"{i % 20:02d}{i:04d}" for i in range(2000)]
    stats = {"t.places": table_stats("t.places", {"id": list(range(2000)), "code": codes}, sample_size=2000),
             "t.visits": table_stats("t.visits", {"place": [i % 2000 for i in range(10_000)]}, sample_size=0)}
    places = Scan("t.places", (factory.new("id", T.INTEGER), factory.new("code", T.VARCHAR)), ("id", "code"))
    visits = make_scan(factory, "t.visits", ["place"])
    joined = Join("inner", visits, places, compare("eq", col(visits, "place"), col(places, "id")))
    prefix = Call("substring", (col(places, "code"), num(1), num(2)), T.VARCHAR)
    predicate = SpecialForm("IN", (prefix, Constant("03", T.VARCHAR)), T.BOOLEAN)
    estimator = Estimator(stats)
    assert close(estimator.rows(joined), 10_000, 1.05)
    assert close(estimator.rows(Filter(joined, predicate)), 500, 1.1)


def _tickets(sample_size: int):  # type: ignore[no-untyped-def]
    # 1,000 tickets of 12 lines each; a ticket's lines share its customer and day (the
    # ticket determines them), not its items. Days 0-99, a tenth of them in month 1.
    lines = 12_000
    ticket = [i // 12 for i in range(lines)]
    columns = {"ticket": ticket, "customer": [(t * 7) % 300 for t in ticket], "day": [(t * 13) % 100 for t in ticket],
               "item": [i % 97 for i in range(lines)]}
    stats = {"t.lines": table_stats("t.lines", columns, sample_size=sample_size),
             "t.days": table_stats("t.days", {"id": list(range(100)), "month": [d % 10 for d in range(100)]},
                                   sample_size=sample_size)}
    factory = ColumnFactory()
    return (Estimator(stats), make_scan(factory, "t.lines", ["ticket", "customer", "day", "item"]),
            make_scan(factory, "t.days", ["id", "month"], ("id",)))


def test_a_grouping_column_another_determines_adds_no_groups():
    estimator, lines, _ = _tickets(sample_size=4_000)
    by_ticket_and_customer = Aggregate(lines, (lines.columns[0], lines.columns[1]), ())
    assert close(estimator.rows(by_ticket_and_customer), 1_000, 1.05)      # not min(1,000 x 300, rows)
    by_ticket_and_item = Aggregate(lines, (lines.columns[0], lines.columns[3]), ())
    assert estimator.rows(by_ticket_and_item) > 5_000                      # items vary within a ticket


def test_a_key_assumed_from_statistics_determines_the_other_grouping_columns():
    # TPC-DS q04 groups sales by a customer's id, names and e-mail. Each is unique or nearly so
    # (2,000 customers; 900 first names, 1,500 last names), so the sample has no repeated id whose
    # rows could show that the id determines the rest. Declared or assumed (a hint, or exact
    # statistics), a key does: as many groups as customers, not min(product, rows).
    factory = ColumnFactory()
    customers = 2_000
    columns = {"id": list(range(customers)), "first": [i % 900 for i in range(customers)],
               "last": [(i * 7) % 1_500 for i in range(customers)]}
    sales = {"customer": [i % customers for i in range(20_000)]}
    stats = {"t.customer": table_stats("t.customer", columns), "t.sales": table_stats("t.sales", sales)}
    names = ["id", "first", "last"]
    cols = tuple(factory.new(n, T.INTEGER) for n in names)
    by_statistics = Scan("t.customer", cols, tuple(names), assumed_keys=(AssumedKey((cols[0],), "statistics"),))
    plain = Scan("t.customer", cols, tuple(names))
    fact = make_scan(factory, "t.sales", ["customer"])
    estimator = Estimator(stats)
    for customer, expected in ((by_statistics, True), (plain, False)):
        joined = Join("inner", fact, customer, compare("eq", col(fact, "customer"), col(customer, "id")))
        groups = estimator.rows(Aggregate(joined, customer.columns, ()))
        assert close(groups, customers, 1.05) is expected, groups   # without the key: the rows, 20,000


def test_rows_kept_through_a_column_a_value_determines_keep_whole_values():
    # Lines joined to the days of month 1 keep a tenth of the tickets, each whole; rows kept
    # one by one would leave 1,000 x (1 - 0.9^12) = 718 tickets.
    estimator, lines, days = _tickets(sample_size=4_000)
    month_one = Filter(days, compare("eq", col(days, "month"), num(1)))
    joined = Join("inner", lines, month_one, compare("eq", col(lines, "day"), col(days, "id")))
    assert close(estimator.rows(joined), 1_200, 1.1)
    assert close(estimator.rows(Aggregate(joined, (lines.columns[0],), ())), 100, 1.2)
    assert estimator.rows(Aggregate(joined, (lines.columns[3],), ())) > 80     # items: 97, thinned one by one


def test_a_dependency_is_measured_as_its_definition_says():
    # determines(a, b): among the groups of non-NULL sampled rows sharing a value of a (at
    # least MIN_GROUPS of them), nearly all hold one value of b. Checked against that
    # definition, counted in Python, on columns from exact dependencies to none.
    import random
    from collections import defaultdict

    from cbo.estimate.dependence import AGREEMENT, MIN_GROUPS, determines
    from cbo.estimate.samples import TableSample

    rng = random.Random(11)
    outcomes = set()
    for trial in range(40):
        rows, keys, noise = rng.choice([60, 400, 3_000]), rng.choice([5, 40, 500]), rng.choice([0.0, 0.03, 0.3])
        a = [rng.randrange(keys) if rng.random() > 0.05 else None for _ in range(rows)]
        b = [None if v is None and rng.random() < 0.5 else
             (rng.randrange(9) if v is None or rng.random() < noise else v * 3 % 7) for v in a]
        sample = TableSample("t", table_stats("t", {"a": a, "b": b}, sample_size=rows).sample)
        held: defaultdict[object, set[object]] = defaultdict(set)
        count: defaultdict[object, int] = defaultdict(int)
        for x, y in zip(a, b):
            if x is not None and y is not None:
                held[x].add(y)
                count[x] += 1
        repeated = [x for x in held if count[x] >= 2]
        expected = len(repeated) >= MIN_GROUPS and \
            sum(1 for x in repeated if len(held[x]) == 1) >= AGREEMENT * len(repeated)
        assert determines(sample, "a", "b") == expected, trial
        outcomes.add(expected)
    assert outcomes == {True, False}   # the trials reach both answers
