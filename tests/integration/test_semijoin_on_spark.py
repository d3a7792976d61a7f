"""Seed 003's forms of a semi join, each forced, run on Spark as DuckDB answers.

Spark runs the row number of rewrite 3.1 as ``monotonically_increasing_id()`` and the semi
join as ``LEFT SEMI JOIN``; the tables repeat rows of the outer side and values and NULLs of
the filtering side, so a DISTINCT that merged two equal rows, or a join that met one twice,
changes the answer.
"""

from __future__ import annotations

import random

import pytest

from cbo.answers import compare
from cbo.memo.search import restore_output_order
from cbo.planner import PlannedQuery, Planner
from cbo.app.session import Session
from tests.quick.test_semijoin_rewrites import DUPLICATES, FORMS, Harness, forced_plan

QUERIES = [
    "select t0.a, t0.b from t0 where t0.a in (select t2.a from t2)",
    "select t0.a, t0.b from t0 where exists (select * from t2 where t2.b = t0.a and t2.a < t0.b + 2)",
    "select t0.a, t0.b, t1.a, t1.b from t0 join t1 on t1.a = t0.b where t1.b in (select t2.a from t2)",
]


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("sql", QUERIES)
def test_forced_forms_on_spark_equal_duckdb(spark, tmp_path_factory, form, sql):
    harness = Harness(tmp_path_factory.mktemp("semijoin-spark"))
    connection = harness.load(DUPLICATES)
    expected = connection.execute(sql).fetchall()
    planned = Planner(harness.catalog, settings=harness.settings).plan(sql)
    assert planned.optimized is not None
    plan, used = forced_plan(planned.optimized.root, FORMS[form], random.Random(0))
    if FORMS[form] is not None and "<" not in sql or form == "3.1":
        assert used > 0, "the forced form is not in the plan"
    plan = restore_output_order(plan, planned.plan)
    _, rows = Session(harness.catalog).run(PlannedQuery(sql, planned.bound, plan, planned.names, {}))
    verdict = compare(expected, rows, ordered=False)
    assert verdict.matches, f"{verdict.detail}\nquery: {sql}\nplan:\n{plan}"
