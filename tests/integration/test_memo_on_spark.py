"""Plans drawn from the memo (the winner and random alternatives) run on Spark as DuckDB says.

The random join graphs of tests/quick/test_memo_equivalence.py, fewer of them, executed by
Spark from cbo's plans (DataFrames, join order and strategies as chosen) instead of DuckDB.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cbo.answers import compare
from cbo.memo.search import draw_plan, restore_output_order
from cbo.planner import PlannedQuery, Planner
from cbo.app.session import Session
from tests.quick.test_memo_equivalence import TABLES, Harness, join_queries, table_rows


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(sql=join_queries(), data=st.fixed_dictionaries({name: table_rows for name in TABLES}))
def test_memo_plans_on_spark_equal_duckdb(spark, tmp_path_factory, sql, data):
    harness = Harness(tmp_path_factory.mktemp("memo-spark"))
    connection = harness.load(data)
    expected = connection.execute(sql).fetchall()
    planned = Planner(harness.catalog).plan(sql)
    assert planned.optimized is not None
    drawn = restore_output_order(draw_plan(planned.optimized.root, random.Random(sql)), planned.plan)
    session = Session(harness.catalog)
    for plan, optimized in ((planned.plan, planned.optimized), (drawn, None)):
        _, rows = session.run(PlannedQuery(sql, planned.bound, plan, planned.names, optimized))
        verdict = compare(expected, rows, ordered=False)
        assert verdict.matches, f"{verdict.detail}\nquery: {sql}\ntables: {data}\nplan:\n{plan}"
