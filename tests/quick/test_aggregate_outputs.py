"""Aggregate outputs carry distributions: HAVING on a sum, and comparisons with an aggregate's
value (a scalar subquery, a correlated average), are estimated from data, not a default third."""

from __future__ import annotations

import random

from cbo.estimate import Estimator
from cbo.ir import types as T
from cbo.ir.expressions import AggregateCall, Call, ColumnFactory, ColumnRef, Constant, compare, conjunction
from cbo.ir.operators import Aggregate, Filter, Join, Project
from stats.from_values import table_stats
from tests.quick.test_estimator import col, make_scan, num


def _lines(seed: int = 3):  # type: ignore[no-untyped-def]
    """Orders of 1 to 7 lines (evenly), each line a quantity of 1 to 50 (as TPC-H's lineitem)."""
    rng = random.Random(seed)
    order_ids, quantities = [], []
    for order in range(1, 6_001):
        for _ in range(rng.randint(1, 7)):
            order_ids.append(order)
            quantities.append(rng.randint(1, 50))
    factory = ColumnFactory()
    stats = {"t.lines": table_stats("t.lines", {"order_id": order_ids, "qty": quantities}, sample_size=2_000)}
    scan = make_scan(factory, "t.lines", ["order_id", "qty"])
    return factory, Estimator(stats), scan, order_ids, quantities


def _sum_by_order(order_ids: list[int], quantities: list[int]) -> dict[int, int]:
    sums: dict[int, int] = {}
    for o, q in zip(order_ids, quantities):
        sums[o] = sums.get(o, 0) + q
    return sums


def test_having_on_a_sum_is_estimated_from_the_distribution_of_group_sums():
    factory, estimator, scan, order_ids, quantities = _lines()
    total = factory.new("sum", T.BIGINT)
    call = AggregateCall("sum", (col(scan, "qty"),), False, T.BIGINT)
    grouped = Aggregate(scan, (scan.columns[0],), ((total, call),))
    sums = _sum_by_order(order_ids, quantities)
    for threshold in (100, 200, 250):
        having = Filter(grouped, compare("gt", ColumnRef(total), num(threshold)))
        truth = sum(1 for s in sums.values() if s > threshold)
        estimate = estimator.rows(having)
        # within 1.5x where the default (a third of the groups, 2,000) is off by up to 70x
        assert 1 / 1.5 <= max(estimate, 1) / max(truth, 1) <= 1.5, (threshold, estimate, truth)
        assert not any("default" in n for n in estimator.estimate(having).notes)


def test_a_comparison_with_a_scalar_aggregate_uses_its_value():
    # qty < (SELECT 0.5 * avg(qty) FROM lines): a third by default; the average is about 25.5,
    # so about a quarter of the lines pass
    factory, estimator, scan, order_ids, quantities = _lines()
    other = make_scan(factory, "t.lines", ["order_id", "qty"])
    average = factory.new("avg", T.DOUBLE)
    scalar = Aggregate(other, (), ((average, AggregateCall("avg", (col(other, "qty"),), False, T.DOUBLE)),))
    half = factory.new("_col0", T.DOUBLE)
    value = Project(scalar, ((half, Call("multiply", (Constant(0.5, T.DOUBLE), ColumnRef(average)), T.DOUBLE)),))
    joined = Join("inner", scan, value, compare("lt", col(scan, "qty"), ColumnRef(half)))
    cutoff = 0.5 * sum(quantities) / len(quantities)
    truth = sum(1 for q in quantities if q < cutoff)
    estimate = estimator.rows(joined)
    assert 1 / 1.15 <= estimate / truth <= 1.15, (estimate, truth)
    assert not any("default" in n for n in estimator.estimate(joined).notes)


def test_a_comparison_with_a_grouped_average_of_the_same_rows():
    # Q17's shape: lines whose quantity is below 0.4 x their order's average quantity
    factory, estimator, scan, order_ids, quantities = _lines()
    other = make_scan(factory, "t.lines", ["order_id", "qty"])
    average = factory.new("avg", T.DOUBLE)
    per_order = Aggregate(other, (other.columns[0],),
                          ((average, AggregateCall("avg", (col(other, "qty"),), False, T.DOUBLE)),))
    scaled = factory.new("_col0", T.DOUBLE)
    value = Project(per_order, ((other.columns[0], ColumnRef(other.columns[0])),
                                (scaled, Call("multiply", (Constant(0.4, T.DOUBLE), ColumnRef(average)), T.DOUBLE))))
    on = conjunction([compare("eq", col(scan, "order_id"), ColumnRef(other.columns[0])),
                      compare("lt", col(scan, "qty"), ColumnRef(scaled))])
    joined = Join("inner", scan, value, on)
    sums = _sum_by_order(order_ids, quantities)
    counts: dict[int, int] = {}
    for o in order_ids:
        counts[o] = counts.get(o, 0) + 1
    truth = sum(1 for o, q in zip(order_ids, quantities) if q < 0.4 * sums[o] / counts[o])
    estimate = estimator.rows(joined)
    assert 1 / 1.5 <= estimate / truth <= 1.5, (estimate, truth)


def test_a_minimum_joined_back_on_its_grouping_key_keeps_about_one_row_per_group():
    # Q2's shape: lines whose quantity is the smallest of their order (x = min(x), decorrelated
    # into a join on the grouping key): one row per order, ties aside; matching the two
    # distributions as independent would find almost none.
    factory, estimator, scan, order_ids, quantities = _lines()
    other = make_scan(factory, "t.lines", ["order_id", "qty"])
    smallest = factory.new("min", T.BIGINT)
    per_order = Aggregate(other, (other.columns[0],),
                          ((smallest, AggregateCall("min", (col(other, "qty"),), False, T.BIGINT)),))
    on = conjunction([compare("eq", col(scan, "order_id"), ColumnRef(other.columns[0])),
                      compare("eq", col(scan, "qty"), ColumnRef(smallest))])
    lowest: dict[int, int] = {}
    for o, q in zip(order_ids, quantities):
        lowest[o] = min(q, lowest.get(o, q))
    truth = sum(1 for o, q in zip(order_ids, quantities) if q == lowest[o])
    estimate = estimator.rows(Join("inner", scan, per_order, on))
    assert 1 / 1.5 <= estimate / truth <= 1.5, (estimate, truth)


def _by_order(order_ids: list[int], quantities: list[int]) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = {}
    for o, q in zip(order_ids, quantities):
        groups.setdefault(o, []).append(q)
    return groups


def test_having_on_a_deviation_is_estimated_from_its_distribution_with_one_row_groups_null():
    # stddev_samp(qty) per order: orders of one line give NULL (a seventh of them), the others
    # spread around the quantities' deviation (about 14.4)
    import statistics

    factory, estimator, scan, order_ids, quantities = _lines()
    groups = _by_order(order_ids, quantities)
    for name in ("stddev_samp", "var_pop"):
        value = factory.new(name, T.DOUBLE)
        grouped = Aggregate(scan, (scan.columns[0],), ((value, AggregateCall(name, (col(scan, "qty"),), False,
                                                                              T.DOUBLE)),))
        column = estimator.estimate(grouped).column(value)
        singles = sum(1 for g in groups.values() if len(g) == 1)
        if name == "stddev_samp":
            assert abs(column.nulls - singles) / singles < 0.2
            truths = {t: sum(1 for g in groups.values() if len(g) > 1 and statistics.stdev(g) > t) for t in (8, 14, 20)}
        else:
            assert column.nulls == 0
            truths = {t: sum(1 for g in groups.values() if statistics.pvariance(g) > t) for t in (100, 200, 300)}
        for threshold, truth in truths.items():
            estimate = estimator.rows(Filter(grouped, compare("gt", ColumnRef(value), num(threshold))))
            # the default would be a third of the 6,000 groups whatever the threshold
            assert 1 / 1.6 <= estimate / truth <= 1.6, (name, threshold, estimate, truth)
