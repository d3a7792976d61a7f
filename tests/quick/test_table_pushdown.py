"""Table pushdown (``PushTableIntoAggregate``): every plan through the pushed form gives DuckDB's
answer on the original SQL, and the rule fires exactly when the joined table is unique on the
grouping columns it is joined on.

Random queries join a GROUP BY subquery (random aggregates, random filter) with a derived table
that is unique on its join key (a GROUP BY of its own) or is not (a plain filtered table), on one
or two columns, with or without a further condition reading an aggregate, written as a join or as
a correlated scalar subquery (which decorrelation turns into the same join). Tables are tiny,
with NULLs and duplicates.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from benchmarks.equivalence.generators import pushed_first, pushed_forms, small_values, table_pushdown_queries
from cbo.memo.search import draw_plan, restore_output_order
from cbo.planner import Planner
from tests.random_tables import RandomTables, assert_plans_answer

TABLES = ["t0", "t1", "t2"]
RULE = "PushTableIntoAggregate"

table_rows = st.lists(st.tuples(small_values, small_values), max_size=7)
queries = table_pushdown_queries


class Harness(RandomTables):
    def __init__(self, directory: Path):
        super().__init__(directory, {name: ("a", "b") for name in TABLES})

    def check(self, sql: str, data: dict[str, list[tuple]], seed: int) -> int:
        """Every checked plan equals DuckDB's answer; returns how many pushed forms the memo holds."""
        connection = self.load(data)
        planned = Planner(self.catalog).plan(sql)
        assert planned.optimized is not None
        root = planned.optimized.root
        rng = random.Random(seed)
        plans = [planned.plan, restore_output_order(pushed_first(root, rng), planned.plan)]
        plans += [restore_output_order(draw_plan(root, rng), planned.plan) for _ in range(2)]
        assert_plans_answer(self, connection, sql, data, plans, planned.names)
        return pushed_forms(root)


@pytest.fixture(scope="module")
def harness(tmp_path_factory):  # type: ignore[no-untyped-def]
    return Harness(tmp_path_factory.mktemp("pushdown"))


@settings(max_examples=int(os.environ.get("CBO_RANDOM_EXAMPLES", "150")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(sql=queries(), data=st.fixed_dictionaries({name: table_rows for name in TABLES}), seed=st.integers(0, 1000))
def test_plans_through_the_pushed_table_equal_duckdb(harness, sql, data, seed):
    event("pushed" if harness.check(sql, data, seed) else "not pushed")


DATA = {"t0": [(1, 2), (2, None), (None, 1), (3, 3)], "t1": [(1, 1), (1, 2), (2, None), (None, 2), (3, 0)],
        "t2": [(1, 1), (3, 1)]}


def test_a_table_unique_on_the_grouping_column_is_pushed(harness):
    sql = ("select u.k, u.m, g.x0 from (select a, sum(b) as x0 from t1 group by a) g "
           "join (select a as k, max(b) as m from t0 group by a) u on g.a = u.k and g.x0 > u.m")
    assert harness.check(sql, DATA, 1) >= 1


def test_the_correlated_form_is_pushed(harness):
    sql = "select u.k, u.m from (select a as k, max(b) as m from t0 group by a) u " \
          "where u.m < (select sum(t1.b) from t1 where t1.a = u.k)"
    assert harness.check(sql, DATA, 2) >= 1


def test_a_table_not_unique_on_the_join_column_is_not_pushed(harness):
    # t0 has duplicate values of a: pushing it would count a group's rows once per duplicate
    sql = ("select u.k, u.m, g.x0 from (select a, count(*) as x0 from t1 group by a) g "
           "join (select a as k, b as m from t0) u on g.a = u.k")
    assert harness.check(sql, DATA, 3) == 0


def test_a_join_on_an_aggregate_column_is_not_pushed(harness):
    # the join matches on the aggregate's result, which only exists after the aggregation
    sql = ("select u.k, g.x0 from (select a, max(b) as x0 from t1 group by a) g "
           "join (select a as k from t0 group by a) u on g.x0 = u.k")
    assert harness.check(sql, DATA, 4) == 0


def test_q17s_pushed_aggregation_groups_by_no_column_read_only_below(tpch_parquet_catalog):
    """Q17: part's brand and container are read by part's filter, below the join, and by nothing
    above it: the pushed aggregation does not group by them (it carries them as any_value, which
    Spark drops where nothing reads it); p_partkey, read by the join above, stays a grouping column."""
    from cbo.estimate import Estimator
    from cbo.ir.operators import Aggregate, walk
    from cbo.sources.catalog import load_catalog
    from cbo.workloads.tpch_queries import select
    from tests.quick.test_rule_files import _stored

    q17 = select(["q17"])[0].sql
    planned = Planner(load_catalog(tpch_parquet_catalog), estimator=Estimator(_stored("tpch-sf1"))).plan(q17)
    assert "PushTableIntoAggregate" in planned.optimized.counters.fired
    pushed = [a for a in walk(planned.plan) if isinstance(a, Aggregate)
              and any(c.name.startswith("p_") for c in a.output)]
    assert pushed, "the chosen plan no longer pushes part below the aggregation"
    for aggregate in pushed:
        grouped = {c.name for c in aggregate.group_by}
        assert grouped == {"l_partkey", "p_partkey"}, grouped
        carried = {c.name: call.name for c, call in aggregate.aggregates if call.name == "any_value"}
        assert carried == {"p_brand": "any_value", "p_container": "any_value"}
