"""Property: single-column NOT IN, planned as a null-aware anti join, answers as DuckDB does.

Random small tables of two nullable integer columns with duplicates (empty tables included);
an uncorrelated ``x NOT IN (SELECT y ...)`` (x a column or an expression; sometimes with a
filter in the subquery) directly
on the outer table, on one side of an inner join, under the nullable side of a left join, or
inside an EXISTS. The chosen plan and three plans drawn at random from the memo are rendered to
SQL and run on DuckDB; each returns the multiset DuckDB returns for the query as written.
Whenever either column can be NULL (always, here) the plan holds a null-aware anti join.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cbo.ir.operators import Join, Plan
from cbo.memo.search import restore_output_order
from cbo.planner import Planner
from tests.quick.test_semijoin_rewrites import DUPLICATES, EXAMPLES, TABLES, Harness, forced_plan, table_rows
from tests.random_tables import assert_plans_answer


def null_aware_joins(plan: Plan) -> int:
    here = isinstance(plan, Join) and plan.kind == "null_aware_anti"
    return int(here) + sum(null_aware_joins(child) for child in plan.children)


@st.composite
def not_in_queries(draw):  # type: ignore[no-untyped-def]
    context = draw(st.sampled_from(["plain", "inner", "left", "semi"]))
    x, y = draw(st.sampled_from(["a", "b", "b + 1"])), draw(st.sampled_from("ab"))
    other = "b" if y == "a" else "a"
    where = draw(st.sampled_from(["", f" where t2.{other} >= 1", f" where t2.{other} is not null"]))

    def not_in(target: str) -> str:
        return f"{target}.{x} not in (select t2.{y} from t2{where})"

    if context == "plain":
        return f"select t0.a, t0.b from t0 where {not_in('t0')}"
    if context == "inner":
        target = draw(st.sampled_from(["t0", "t1"]))
        return f"select t0.a, t0.b, t1.a, t1.b from t0 join t1 on t1.a = t0.b where {not_in(target)}"
    if context == "left":
        return (f"select t0.a, t0.b, s.a, s.b from t0 left join "
                f"(select * from t1 where {not_in('t1')}) s on s.b = t0.a")
    return f"select t0.a, t0.b from t0 where exists (select * from t1 where t1.a = t0.a and {not_in('t1')})"


@pytest.fixture(scope="module")
def harness(tmp_path_factory):  # type: ignore[no-untyped-def]
    return Harness(tmp_path_factory.mktemp("null-aware"))


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(sql=not_in_queries(), data=st.fixed_dictionaries({name: table_rows for name in TABLES}),
       seed=st.integers(0, 1000))
@example(sql="select t0.a, t0.b from t0 where t0.a not in (select t2.a from t2)", data=DUPLICATES, seed=1)
@example(sql="select t0.a, t0.b from t0 where t0.a not in (select t2.a from t2 where t2.b >= 2)",
         data=DUPLICATES, seed=1)
@example(sql="select t0.a, t0.b from t0 where t0.a not in (select t2.a from t2)", data={**DUPLICATES, "t2": []},
         seed=1)
# An empty subquery keeps the NULL x rows: the second NOT IN must still see x as nullable.
@example(sql="select t0.a, t0.b from t0 where t0.a not in (select t3.a from t3) "
             "and t0.a not in (select t2.b from t2 where t2.b is not null)",
         data={**DUPLICATES, "t3": []}, seed=1)
def test_not_in_as_null_aware_anti_join_equals_duckdb(harness, sql, data, seed):
    connection = harness.load(data)
    planned = Planner(harness.catalog, settings=harness.settings).plan(sql)
    assert planned.optimized is not None
    assert null_aware_joins(planned.plan), f"no null-aware anti join in\n{planned.plan}"
    rng = random.Random(seed)
    plans = [planned.plan] + [restore_output_order(forced_plan(planned.optimized.root, None, rng)[0], planned.plan)
                              for _ in range(3)]
    assert_plans_answer(harness, connection, sql, data, plans, planned.names)
