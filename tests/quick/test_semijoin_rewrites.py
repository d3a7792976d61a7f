"""Property: seed 003's three forms of a semi join answer as DuckDB does, each forced in turn.

Random small tables of two nullable integer columns with duplicates; queries with an
uncorrelated IN or a correlated EXISTS (equalities, and sometimes a non-equality across the
sides or a filter of the subquery), in an inner, left or semi context: the subquery's table
filters the outer table directly, the inner side of a join, the nullable side of a left join,
or the table of another EXISTS. cbo builds the memo (threshold infinite, so 3.2 is added wherever it
holds), and plans are drawn from it with one form forced in every group that has it:

* 3.1 (``SemiJoinToInnerDistinctAbove``): the DISTINCT over the inner join;
* 3.2 (``SemiJoinToInnerDistinctBelow``): the inner join with the distinct filtering side;
* 3.3: the semi join (no expression of either rule anywhere).

Every other group takes a random expression. Each plan is rendered to SQL and run on DuckDB;
its rows must be the multiset DuckDB returns for the query. ``CBO_RANDOM_EXAMPLES`` sets the
number of queries (default 40 per form: a few seconds).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from benchmarks.equivalence.generators import (
    ABOVE,
    BELOW,
    SEMIJOIN_FORMS,
    existential_queries,
    semijoin_forced_plan,
    table_rows,
)
from cbo.memo.search import restore_output_order
from cbo.planner import Planner
from cbo.settings import OptimizerSettings
from tests.random_tables import RandomTables, assert_plans_answer

TABLES = ("t0", "t1", "t2", "t3")
FORMS = SEMIJOIN_FORMS
EXAMPLES = int(os.environ.get("CBO_RANDOM_EXAMPLES", "40"))

forced_plan = semijoin_forced_plan


class Harness(RandomTables):
    def __init__(self, directory: Path):
        super().__init__(directory, {name: ("a", "b") for name in TABLES})
        self.settings = OptimizerSettings(push_aggregation_below_join_byte_reduction_threshold=float("inf"))

    def check(self, sql: str, data: dict[str, list[tuple]], form: str, seed: int) -> int:
        connection = self.load(data)
        planned = Planner(self.catalog, settings=self.settings).plan(sql)
        assert planned.optimized is not None
        rng = random.Random(seed)
        plans, used = [planned.plan], 0
        for _ in range(3):
            plan, count = forced_plan(planned.optimized.root, FORMS[form], rng)
            plans.append(restore_output_order(plan, planned.plan))
            used += count
        assert_plans_answer(self, connection, sql, data, plans, planned.names)
        return used


@pytest.fixture(scope="module")
def harness(tmp_path_factory):  # type: ignore[no-untyped-def]
    return Harness(tmp_path_factory.mktemp("semijoin"))


DUPLICATES = {"t0": [(1, 1), (1, 1), (2, None), (None, 2)], "t1": [(1, 1), (2, 1), (None, None)],
              "t2": [(1, 1), (1, 1), (1, 2), (None, 1), (2, 3)], "t3": []}


def _family(form: str):  # type: ignore[no-untyped-def]
    @settings(max_examples=EXAMPLES, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(sql=existential_queries(), data=st.fixed_dictionaries({name: table_rows for name in TABLES}),
           seed=st.integers(0, 1000))
    @example(sql="select t0.a, t0.b from t0 where t0.a in (select t2.a from t2)", data=DUPLICATES, seed=1)
    def test(harness, sql, data, seed):  # type: ignore[no-untyped-def]
        harness.check(sql, data, form, seed)

    test.__doc__ = f"Rewrite {form}, forced wherever it holds, answers as DuckDB does."
    return test


test_distinct_above_join_equals_duckdb = _family("3.1")
test_distinct_below_join_equals_duckdb = _family("3.2")
test_semi_join_equals_duckdb = _family("3.3")


@pytest.mark.parametrize("form", ["3.1", "3.2"])
@pytest.mark.parametrize("sql", [
    "select t0.a, t0.b from t0 where t0.a in (select t2.a from t2)",
    "select t0.a, t0.b from t0 where exists (select * from t2 where t2.b = t0.a)",
    "select t0.a, t0.b, t1.a, t1.b from t0 join t1 on t1.a = t0.b where t1.b in (select t2.a from t2)",
])
def test_each_form_is_used_on_duplicates_and_nulls(harness, form, sql):
    # The forced form really is in the plans checked (the property above could pass vacuously),
    # on tables whose outer side repeats rows and whose filtering side repeats values and NULLs.
    assert harness.check(sql, DUPLICATES, form, 3) > 0


@pytest.mark.parametrize("sql", [
    "select t0.a, t0.b from t0 where not exists (select * from t2 where t2.b = t0.a)",
    "select t0.a, t0.b from t0 where t0.a not in (select t2.a from t2)",
    "select t0.a, t0.b from t0 where t0.a in (select t2.a from t2) or t0.b = 1",
])
def test_anti_and_mark_joins_are_never_inner_joins(harness, sql):
    assert harness.check(sql, DUPLICATES, "3.1", 5) == 0   # (writes the tables the plan reads)
    planned = Planner(harness.catalog, settings=harness.settings).plan(sql)
    assert planned.optimized is not None
    fired = planned.optimized.counters.fired
    assert ABOVE not in fired and BELOW not in fired


def test_seed_settings_are_read_and_checked():
    from cbo.errors import CboError

    changed = OptimizerSettings().with_values({
        "in_predicates_as_inner_joins_enabled": "false", "exploit_constraints": "off",
        "push_table_through_subquery": "0", "push_aggregation_below_join_byte_reduction_threshold": "inf",
        "existential_form": "distinct_above"})
    assert changed.in_predicates_as_inner_joins_enabled is False and changed.exploit_constraints is False
    assert changed.push_table_through_subquery is False
    assert changed.push_aggregation_below_join_byte_reduction_threshold == float("inf")
    assert changed.existential_form == "DISTINCT_ABOVE"
    with pytest.raises(CboError, match="true or false"):
        OptimizerSettings().with_values({"exploit_constraints": "maybe"})
    with pytest.raises(CboError, match="non-negative number"):
        OptimizerSettings().with_values({"push_aggregation_below_join_byte_reduction_threshold": "-1"})
    with pytest.raises(CboError, match="needs a number"):
        OptimizerSettings().with_values({"push_aggregation_below_join_byte_reduction_threshold": "high"})
    with pytest.raises(CboError, match="existential_form must be one of"):
        OptimizerSettings(existential_form="early_out")


@pytest.mark.parametrize("threshold, pushed", [(0.0, False), (0.3, False), (0.4, True), (float("inf"), True)])
def test_threshold_decides_whether_the_distinct_goes_below(harness, threshold, pushed):
    # Without statistics (default row counts) t0 ⋈ t2 is estimated at as many rows as t2, each
    # of three 8-byte columns against t2's one: 3 times t2's bytes. Times a threshold above 1/3
    # that exceeds t2's bytes: the join is not byte-reducing and the DISTINCT goes below it; at
    # or below 1/3 it is byte-reducing and the DISTINCT stays above (0 never pushes).
    harness.load(DUPLICATES)
    sql = "select t0.a, t0.b from t0 where t0.a in (select t2.a from t2)"
    planned = Planner(harness.catalog, settings=OptimizerSettings(
        push_aggregation_below_join_byte_reduction_threshold=threshold)).plan(sql)
    assert planned.optimized is not None
    notes = [n for texts in planned.optimized.memo.notes.values() for n in texts]
    assert len(notes) == 1 and f"threshold {threshold:g}" in notes[0]
    assert (BELOW in planned.optimized.counters.fired) == pushed, notes[0]
    assert ("not pushed" not in notes[0]) == pushed
