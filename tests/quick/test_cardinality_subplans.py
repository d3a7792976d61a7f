"""The cardinality harness's sub-plans: a chain of joins enumerated, a region too wide to
enumerate named, and a query's sub-plans cut to a limit the same way each time, the whole
query kept. And DuckDB's estimate read where its top operator carries none of its own."""

from __future__ import annotations

import duckdb

from benchmarks.cardinality.duck import estimate
from benchmarks.cardinality.subplans import MAX_RELATIONS, spread, subplans, too_wide
from cbo.ir import types as T
from cbo.ir.expressions import Column, ColumnRef, compare
from cbo.ir.operators import Join, Plan, Scan


def chain(n: int) -> Plan:
    """t0 - t1 - ... - t(n-1), each joined to the next on its one column."""
    columns = [Column(i + 1, f"k{i}", T.BIGINT, True) for i in range(n)]
    plan: Plan = Scan("lake.t0", (columns[0],), ("k0",))
    for i in range(1, n):
        right = Scan(f"lake.t{i}", (columns[i],), (f"k{i}",))
        plan = Join("inner", plan, right, compare("eq", ColumnRef(columns[i - 1]), ColumnRef(columns[i])))
    return plan


def test_a_chain_has_its_intervals_as_sub_plans():
    found = subplans(chain(5))
    # the connected sets of a chain are its intervals of two or more tables (plain tables alone are left out)
    assert sorted(len(s.relations) for s in found) == [2, 2, 2, 2, 3, 3, 3, 4, 4, 5]
    assert too_wide(chain(5)) == []


def test_a_region_over_the_limit_is_named_not_enumerated():
    wide = chain(MAX_RELATIONS + 1)
    assert subplans(wide) == []
    assert too_wide(wide) == [tuple(f"t{i}" for i in range(MAX_RELATIONS + 1))]


def test_spread_keeps_the_whole_query_and_spans_the_join_counts():
    found = subplans(chain(9))          # 36 sub-plans, 1 to 8 joins
    kept = spread(found, 10)
    assert len(kept) == 10
    assert [s for s in kept if s.joins == 8] == [s for s in found if s.joins == 8]
    assert {s.joins for s in kept} >= {1, 4, 8}
    assert kept == [s for s in found if s in kept]            # in the order found
    assert spread(found, 10) == kept                          # the same choice every time
    assert spread(found, None) == found and spread(found, len(found)) == found
    assert spread(found, 1) == [s for s in found if s.joins == 8]
    assert spread(found, 2) == [found[0], found[-1]]


def test_duckdb_estimates_a_union_as_its_inputs_and_an_empty_result_as_zero():
    connection = duckdb.connect()
    connection.execute("create table t as select range as a from range(1000)")
    low = estimate(connection, "select a from t where a < 100")
    high = estimate(connection, "select a from t where a > 900")
    assert low is not None and high is not None
    # UNION ALL: DuckDB's UNION operator has no estimate; its inputs' together
    assert estimate(connection, "select a from t where a < 100 union all select a from t where a > 900") == low + high
    # DuckDB's statistics prove no row passes (a > its maximum): the plan is EMPTY_RESULT
    assert estimate(connection, "select a from t where a > 5000") == 0.0
