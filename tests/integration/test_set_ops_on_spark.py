"""INTERSECT / EXCEPT planned as semi / anti joins under a DISTINCT, each of seed 003's forms
forced, run on Spark as DuckDB answers.

The keys of nullable columns are ``IS NOT DISTINCT FROM`` (Spark: ``<=>``, which its hash joins
key on); the tables repeat rows and hold NULLs in both columns, so a key that dropped NULLs or a
DISTINCT that was missing changes the answer. Spark must hash these joins, never run them as a
nested loop.
"""

from __future__ import annotations

import random

import pytest

from cbo.answers import compare
from cbo.app.session import Session
from cbo.memo.search import restore_output_order
from cbo.planner import PlannedQuery, Planner
from tests.quick.test_semijoin_rewrites import DUPLICATES, FORMS, Harness, forced_plan

QUERIES = [
    "select a, b from t0 intersect select a, b from t2",
    "select a, b from t0 except select a, b from t2",
    "select b from t2 intersect select a from t0 except select a from t1",
]


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("sql", QUERIES)
def test_set_ops_on_spark_equal_duckdb(spark, tmp_path_factory, form, sql):
    harness = Harness(tmp_path_factory.mktemp("set-ops-spark"))
    connection = harness.load(DUPLICATES)
    expected = connection.execute(sql).fetchall()
    planned = Planner(harness.catalog, settings=harness.settings).plan(sql)
    assert planned.optimized is not None
    plan, _ = forced_plan(planned.optimized.root, FORMS[form], random.Random(0))
    plan = restore_output_order(plan, planned.plan)
    forced = PlannedQuery(sql, planned.bound, plan, planned.names, {})
    session = Session(harness.catalog)
    _, rows = session.run(forced)
    verdict = compare(expected, rows, ordered=False)
    assert verdict.matches, f"{verdict.detail}\nquery: {sql}\nplan:\n{plan}"


def test_spark_hashes_the_null_safe_keys(spark, tmp_path_factory):
    harness = Harness(tmp_path_factory.mktemp("set-ops-plan"))
    harness.load(DUPLICATES)
    planned = Planner(harness.catalog, settings=harness.settings).plan(QUERIES[1])
    executed = Session(harness.catalog)._spark(planned).physical_plan(planned.plan, planned.names)
    assert "LeftAnti" in executed and "HashJoin" in executed, executed
    assert "NestedLoopJoin" not in executed, executed
