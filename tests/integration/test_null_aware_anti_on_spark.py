"""Single-column NOT IN as a null-aware anti join, run on Spark and on DuckDB, answers as
DuckDB answers the query as written.

The tables cover NOT IN's NULL cases: a NULL in the subquery (no row survives), an empty
subquery (every row survives, NULLs included), NULLs of the outer column only (those rows go),
duplicates on both sides; the subquery's filter sometimes removes its NULLs. Spark must run the
join as its null-aware BroadcastHashJoin LeftAnti, not as a nested loop.
"""

from __future__ import annotations

import re

import pytest

from cbo.answers import compare
from cbo.app.session import Session
from cbo.ir.operators import Join, Plan
from cbo.planner import Planner
from tests.quick.test_semijoin_rewrites import Harness

TABLES = {
    "subquery NULL": {"t0": [(1, 1), (1, 1), (2, None), (None, 2), (3, 0)], "t1": [(1, 1)],
                      "t2": [(1, 1), (None, 2), (2, 0)], "t3": []},
    "empty subquery": {"t0": [(1, 1), (None, 2), (None, None), (3, 0)], "t1": [(1, 1)], "t2": [], "t3": []},
    "outer NULLs": {"t0": [(1, 1), (1, 1), (None, 2), (3, 0), (4, None)], "t1": [(3, 1), (None, 0)],
                    "t2": [(1, 1), (1, 1), (2, 0), (5, None)], "t3": []},
}
QUERIES = [
    "select t0.a, t0.b from t0 where t0.a not in (select t2.a from t2)",
    # the NULL of t2.a sits in a row the filter removes in two of the tables
    "select t0.a, t0.b from t0 where t0.a not in (select t2.a from t2 where t2.b <= 1)",
    "select t0.a, t1.b from t0 join t1 on t1.a = t0.a where t0.b not in (select t2.b from t2)",
    "select t0.a, t0.b from t0 where t0.a + 1 not in (select t2.b from t2)",
    "select t0.a, s.b from t0 left join (select * from t1 where t1.a not in (select t2.a from t2)) s on s.b = t0.b",
]


def null_aware_joins(plan: Plan) -> int:
    here = isinstance(plan, Join) and plan.kind == "null_aware_anti"
    return int(here) + sum(null_aware_joins(child) for child in plan.children)


@pytest.fixture(scope="module")
def harness(tmp_path_factory):  # type: ignore[no-untyped-def]
    return Harness(tmp_path_factory.mktemp("null-aware"))


@pytest.mark.parametrize("tables", sorted(TABLES))
@pytest.mark.parametrize("sql", QUERIES)
def test_not_in_on_spark_and_duckdb_equals_duckdb(spark, harness, tables, sql):
    connection = harness.load(TABLES[tables])
    expected = connection.execute(sql).fetchall()
    planned = Planner(harness.catalog, settings=harness.settings).plan(sql)
    assert null_aware_joins(planned.plan), f"no null-aware anti join in\n{planned.plan}"
    session = Session(harness.catalog)
    for engine in ("spark", "duckdb"):
        _, rows = session.run(planned, engine)
        verdict = compare(expected, rows, ordered=False)
        assert verdict.matches, f"{engine}: {verdict.detail}\nquery: {sql}\ntables: {tables}\nplan:\n{planned.plan}"


def test_spark_runs_not_in_as_its_null_aware_hash_join(spark, harness):
    harness.load(TABLES["subquery NULL"])
    sql = QUERIES[0]
    planned = Planner(harness.catalog, settings=harness.settings).plan(sql)
    executed = Session(harness.catalog)._spark(planned).physical_plan(planned.plan, planned.names)
    # BroadcastHashJoinExec's arguments after the build side: isNullAwareAntiJoin; its
    # broadcast is a hashed relation built null-aware (the last argument of its mode).
    assert re.search(r"BroadcastHashJoin \[\w+#\d+\], \[\w+#\d+\], LeftAnti, BuildRight, true", executed), executed
    assert re.search(r"HashedRelationBroadcastMode\(.*,true\)", executed), executed
    assert "BroadcastNestedLoopJoin" not in executed, executed
