"""Property: every plan the memo holds gives DuckDB's answer on the original SQL.

Random join graphs (chains, trees, cycles; inner and left joins in FROM, EXISTS and NOT EXISTS
in WHERE; equalities, inequalities and predicates over three tables) over random small tables
with NULLs and duplicates. cbo plans each query through the memo; then not only the winner
but several plans drawn at random from the memo (a random expression in every group) are
rendered to SQL and run on DuckDB, and each must return the multiset of rows DuckDB returns
for the original query. ``CBO_RANDOM_EXAMPLES=N`` sets how many queries run (default 150).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.equivalence.generators import JOIN_TABLES, join_queries, table_rows
from cbo.memo.search import draw_plan, restore_output_order
from cbo.planner import Planner
from cbo.settings import OptimizerSettings
from tests.random_tables import RandomTables, assert_plans_answer

TABLES = JOIN_TABLES
DRAWS = 4

class Harness(RandomTables):
    def __init__(self, directory: Path):
        super().__init__(directory, {name: ("a", "b") for name in TABLES})

    def check(self, sql: str, data: dict[str, list[tuple]], seed: int, planner_settings: OptimizerSettings) -> int:
        connection = self.load(data)
        planned = Planner(self.catalog, settings=planner_settings).plan(sql)
        assert planned.optimized is not None
        plans = [planned.plan]
        rng = random.Random(seed)
        for _ in range(DRAWS):   # the chosen plan has the query's column order
            plans.append(restore_output_order(draw_plan(planned.optimized.root, rng), planned.plan))
        assert_plans_answer(self, connection, sql, data, plans, planned.names)
        return len(planned.optimized.memo)


@pytest.fixture(scope="module")
def harness(tmp_path_factory):  # type: ignore[no-untyped-def]
    return Harness(tmp_path_factory.mktemp("memo"))


@settings(max_examples=int(os.environ.get("CBO_RANDOM_EXAMPLES", "150")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(sql=join_queries(), data=st.fixed_dictionaries({name: table_rows for name in TABLES}),
       seed=st.integers(0, 1000), greedy=st.booleans())
def test_every_plan_in_the_memo_equals_duckdb(harness, sql, data, seed, greedy):
    # Half the cases force the greedy fallback (limit 2) so both enumerators are checked.
    chosen = OptimizerSettings(max_reordered_joins=2) if greedy else OptimizerSettings()
    harness.check(sql, data, seed, chosen)


def test_a_cycle_with_an_outer_join_and_an_anti_join(harness):
    data = {"t0": [(1, 1), (2, None), (None, 3)], "t1": [(1, 2), (1, 2), (3, None)],
            "t2": [(2, 1), (None, None)], "t3": [(1, 1)], "t4": [(2, 2)], "t5": []}
    sql = ("select t0.a, t0.b, t1.a, t1.b, t2.a, t2.b, t3.a, t3.b from t0 join t1 on t1.a = t0.a "
           "join t2 on t2.b = t1.a left join t3 on t3.a = t2.b "
           "where t2.a = t0.b and not exists (select * from t4 where t4.a = t1.b)")
    groups = harness.check(sql, data, 7, OptimizerSettings())
    assert groups > 8   # the enumeration added groups beyond the written tree's
