"""Estimates that rest on the sizes of groups: sums of a few rows (TPC-H Q18's HAVING), groups
of about one row (Q11), and "another row of my group" (Q21's EXISTS / NOT EXISTS)."""

from __future__ import annotations

import random

import numpy as np

from cbo.estimate import Estimator
from cbo.estimate.aggregates import group_sizes
from cbo.estimate.relation import RelEstimate
from cbo.ir import types as T
from cbo.ir.expressions import AggregateCall, ColumnFactory, ColumnRef, compare, conjunction
from cbo.ir.operators import Aggregate, Filter, Join, Project
from stats.from_values import table_stats
from tests.quick.test_estimator import col, make_scan, num


def _lines(seed: int = 5):  # type: ignore[no-untyped-def]
    """Orders of 1 to 7 lines (evenly), each line a quantity of 1 to 50, a supplier of 1 to
    1,000 and late or not (as TPC-H's lineitem)."""
    rng = random.Random(seed)
    columns: dict[str, list[int]] = {"order_id": [], "qty": [], "supp": [], "late": []}
    for order in range(1, 20_001):
        for _ in range(rng.randint(1, 7)):
            columns["order_id"].append(order)
            columns["qty"].append(rng.randint(1, 50))
            columns["supp"].append(rng.randint(1, 1_000))
            columns["late"].append(int(rng.random() < 0.63))
    factory = ColumnFactory()
    stats = {"t.lines": table_stats("t.lines", columns, sample_size=5_000)}
    return factory, Estimator(stats), columns


def test_having_on_a_sum_of_a_few_rows_uses_the_exact_sum_not_the_normal_tail():
    # Q18's shape: sum(qty) > 300 holds only for orders of 7 lines averaging over 43; the normal
    # law puts 2.4x the true share beyond 300 (its tail never ends, the sum of 7 stops at 350)
    factory, estimator, columns = _lines()
    scan = make_scan(factory, "t.lines", list(columns))
    total = factory.new("sum", T.BIGINT)
    grouped = Aggregate(scan, (scan.columns[0],), ((total, AggregateCall("sum", (col(scan, "qty"),), False,
                                                                           T.BIGINT)),))
    groups = estimator.rows(grouped)
    # the data's law: a seventh of the orders hold 7 lines, whose sum of 7 quantities drawn
    # evenly from 1 to 50 exceeds 300 with chance 0.000297 (the normal law says 0.00070)
    law = np.zeros(51)
    law[1:] = 1 / 50
    seven = np.array([1.0])
    for _ in range(7):
        seven = np.convolve(seven, law)
    share = seven[301:].sum() / 7
    estimate = estimator.rows(Filter(grouped, compare("gt", ColumnRef(total), num(300))))
    assert 1 / 1.4 <= estimate / (share * groups) <= 1.4, (estimate, share * groups)
    # nothing can pass beyond seven times the largest quantity
    assert estimator.rows(Filter(grouped, compare("gt", ColumnRef(total), num(351)))) < 1.0


def test_groups_of_about_one_row_hold_some_pairs():
    # 1.07 rows per group on average: 7 % of the groups are pairs, not all groups 1.07 rows
    rel = RelEstimate(1_070.0, {})
    sizes = group_sizes(rel, (), 1_000.0)
    assert sorted(n for _, n in sizes) == [1.0, 2.0]
    assert abs(sum(s for s, n in sizes if n == 2.0) - 0.07) < 1e-9


def _self_join(kind: str, residual: bool = True):  # type: ignore[no-untyped-def]
    factory, estimator, columns = _lines()
    names = list(columns)
    outer = make_scan(factory, "t.lines", names)
    inner = make_scan(factory, "t.lines", names)
    late_outer = Filter(outer, compare("eq", col(outer, "late"), num(1)))
    late_inner = Filter(inner, compare("eq", col(inner, "late"), num(1)))
    kept = Project(late_inner, tuple((c, ColumnRef(c)) for c in (inner.columns[0], inner.columns[2])))
    condition = [compare("eq", col(outer, "order_id"), col(inner, "order_id"))]
    if residual:
        condition.append(compare("neq", col(outer, "supp"), col(inner, "supp")))
    return estimator.rows(Join(kind, late_outer, kept, conjunction(condition))), columns


def _truth(columns: dict[str, list[int]], kind: str) -> int:
    late_by_order: dict[int, list[int]] = {}
    for o, s, late in zip(columns["order_id"], columns["supp"], columns["late"]):
        if late:
            late_by_order.setdefault(o, []).append(s)
    count = 0
    for suppliers in late_by_order.values():
        for s in suppliers:
            other = any(t != s for t in suppliers)
            count += other if kind == "semi" else not other
    return count


def test_not_exists_another_row_of_the_same_group_counts_rows_alone_in_their_group():
    # Q21's NOT EXISTS: late lines with no late line of another supplier in their order. Each
    # line matches itself, which the <> rejects: about one late line in ten is alone (the
    # pairwise formula, every line matched, gave a quarter of that)
    for kind in ("anti", "semi"):
        estimate, columns = _self_join(kind)
        truth = _truth(columns, kind)
        assert 1 / 1.3 <= estimate / truth <= 1.3, (kind, estimate, truth)


def test_a_self_join_without_the_inequality_is_not_taken_for_one():
    # no <>: every late line finds itself, none is left by the anti join
    estimate, columns = _self_join("anti", residual=False)
    late = sum(columns["late"])
    assert estimate < 0.05 * late
