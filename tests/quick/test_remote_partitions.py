"""Where a pushed query may be read in parallel ranges (``cbo.exec.remote_partitions``): the column
must reach a table scan along a path the source moves a range predicate down; a LIMIT or ORDER
BY anywhere keeps the query whole; count and bounds follow the estimate."""

from __future__ import annotations

import datetime

from cbo.estimate.column import ColumnEstimate, Segment
from cbo.exec.remote_partitions import choose, scan_column, splittable
from cbo.ir import types as T
from cbo.ir.expressions import AggregateCall, Call, Column, ColumnRef, Constant
from cbo.ir.operators import Aggregate, Join, Limit, Project, Scan, Sort, SortKey
from cbo.sqlgen import name_of

L_KEY, L_PRICE = Column(1, "l_orderkey", T.BIGINT), Column(2, "l_price", T.decimal(12, 2))
O_KEY, O_DATE, O_CUST = Column(3, "o_orderkey", T.BIGINT), Column(4, "o_orderdate", T.DATE), \
    Column(5, "o_custkey", T.INTEGER)
LINEITEM = Scan("pg.lineitem", (L_KEY, L_PRICE), ("l_orderkey", "l_price"))
ORDERS = Scan("pg.orders", (O_KEY, O_DATE, O_CUST), ("o_orderkey", "o_orderdate", "o_custkey"))
ON = Call("eq", (ColumnRef(L_KEY), ColumnRef(O_KEY)), T.BOOLEAN)


class Estimate:
    """A result's estimate as ``choose`` reads it: per column, values spread over a range."""

    def __init__(self, rows: float, ranges: dict[Column, tuple[object, object, float]]):
        self.columns = {c: ColumnEstimate("date" if isinstance(lo, datetime.date) else "number", 0.0, (),
                                          (Segment(lo, hi, rows, d, d),)) for c, (lo, hi, d) in ranges.items()}

    def column(self, column: Column) -> ColumnEstimate:
        return self.columns.get(column, ColumnEstimate.unknown(1.0))


def test_inner_join_columns_reach_both_tables():
    join = Join("inner", LINEITEM, ORDERS, ON)
    assert scan_column(join, L_KEY) == (LINEITEM, "l_orderkey")
    assert scan_column(join, O_DATE) == (ORDERS, "o_orderdate")


def test_outer_join_only_the_preserved_side():
    left = Join("left", LINEITEM, ORDERS, ON)
    assert scan_column(left, L_KEY) is not None
    assert scan_column(left, O_KEY) is None        # NULL-extended: the range stays above the join
    right = Join("right", LINEITEM, ORDERS, ON)
    assert scan_column(right, L_KEY) is None and scan_column(right, O_KEY) is not None
    full = Join("full", LINEITEM, ORDERS, ON)
    assert scan_column(full, L_KEY) is None and scan_column(full, O_KEY) is None


def test_aggregate_only_its_grouping_keys():
    total = Column(9, "total", T.decimal(38, 2))
    grouped = Aggregate(Join("inner", LINEITEM, ORDERS, ON), (O_CUST,),
                        ((total, AggregateCall("sum", (ColumnRef(L_PRICE),), False, total.type)),))
    assert scan_column(grouped, O_CUST) == (ORDERS, "o_custkey")
    assert scan_column(grouped, total) is None


def test_projection_passes_renames_not_computed_values():
    renamed, computed = Column(10, "k", T.BIGINT), Column(11, "k1", T.BIGINT)
    project = Project(LINEITEM, ((renamed, ColumnRef(L_KEY)),
                                 (computed, Call("add", (ColumnRef(L_KEY), Constant(1, T.BIGINT)), T.BIGINT))))
    assert scan_column(project, renamed) == (LINEITEM, "l_orderkey")
    assert scan_column(project, computed) is None


def test_limit_or_sort_anywhere_keeps_the_query_whole():
    join = Join("inner", LINEITEM, ORDERS, ON)
    assert splittable(join)
    top = Limit(Sort(join, (SortKey(O_DATE),)), 10)
    assert not splittable(top)
    below = Join("inner", LINEITEM, Limit(ORDERS, 5), ON)
    assert not splittable(below)
    estimate = Estimate(1e6, {L_KEY: (1, 6_000_000, 1.5e6)})
    assert choose(top, estimate, 1e6, 30, 4) is None
    assert choose(below, estimate, 1e6, 30, 4) is None


def test_count_and_bounds_from_the_estimate():
    join = Join("inner", LINEITEM, ORDERS, ON)
    estimate = Estimate(2e6, {L_KEY: (1, 6_000_000, 1.5e6), O_KEY: (1, 6_000_000, 1.5e6),
                              O_DATE: (datetime.date(1992, 1, 1), datetime.date(1998, 8, 2), 2400)})
    sizes = {"pg.lineitem": 6e6, "pg.orders": 1.5e6}
    split = choose(join, estimate, 2e6, 30, 4, sizes.__getitem__)
    # the key of the largest table, one partition per core
    assert split is not None and split.column == name_of(L_KEY)
    assert (split.lower, split.upper, split.partitions) == (1, 6_000_000, 4)
    # a small result is read whole; a single core reads whole
    assert choose(join, estimate, 100_000, 30, 4, sizes.__getitem__) is None
    assert choose(join, estimate, 2e6, 30, 1, sizes.__getitem__) is None
    # a date column when it is the only one
    dates = Project(join, ((O_DATE, ColumnRef(O_DATE)), (L_PRICE, ColumnRef(L_PRICE))))
    split = choose(dates, estimate, 2e6, 30, 3)
    assert split is not None and split.column == name_of(O_DATE) and split.partitions == 3
    assert (split.lower, split.upper) == (datetime.date(1992, 1, 1), datetime.date(1998, 8, 2))
    # no more partitions than a tenth of the column's distinct values
    few = Estimate(2e6, {L_KEY: (1, 20, 20)})
    split = choose(Project(join, ((L_KEY, ColumnRef(L_KEY)),)), few, 2e6, 30, 8)
    assert split is not None and split.partitions == 2
    # a column without statistics is not chosen
    assert choose(Project(join, ((O_CUST, ColumnRef(O_CUST)),)), estimate, 2e6, 30, 4) is None
