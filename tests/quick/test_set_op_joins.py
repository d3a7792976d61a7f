"""Property: INTERSECT and EXCEPT, planned as semi and anti joins under a DISTINCT, answer as
DuckDB does, with each of seed 003's forms forced (3.1, 3.2, 3.3).

Random small tables of two nullable integer columns with duplicates (empty tables included);
two or three inputs, one or two columns, sometimes filtered, DISTINCT or ALL (ALL stays a set
operation and is checked alike). The chosen plan and plans drawn from the memo with one form
forced in every group that has it are rendered to SQL and run on DuckDB.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cbo.ir.operators import Join, Plan, SetOp
from cbo.planner import Planner
from tests.quick.test_semijoin_rewrites import DUPLICATES, EXAMPLES, FORMS, TABLES, Harness, table_rows


def operators(plan: Plan) -> list[Plan]:
    return [plan] + [o for child in plan.children for o in operators(child)]


@st.composite
def set_op_queries(draw):  # type: ignore[no-untyped-def]
    columns = draw(st.sampled_from(["a", "b", "a, b", "b, a"]))
    inputs = draw(st.lists(st.sampled_from(["t0", "t1", "t2"]), min_size=2, max_size=3))
    parts = []
    for table in inputs:
        where = draw(st.sampled_from(["", " where a >= 1", " where b is null or b < 2"]))
        parts.append(f"select {columns} from {table}{where}")
    sql = parts[0]
    for part in parts[1:]:
        op = draw(st.sampled_from(["intersect", "except", "intersect all", "except all"]))
        sql = f"{sql} {op} {part}"
    return sql


@pytest.fixture(scope="module")
def harness(tmp_path_factory):  # type: ignore[no-untyped-def]
    return Harness(tmp_path_factory.mktemp("set-ops"))


def _family(form: str):  # type: ignore[no-untyped-def]
    @settings(max_examples=EXAMPLES, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(sql=set_op_queries(), data=st.fixed_dictionaries({name: table_rows for name in TABLES}),
           seed=st.integers(0, 1000))
    @example(sql="select a, b from t0 intersect select a, b from t2", data=DUPLICATES, seed=1)
    @example(sql="select a, b from t0 except select a, b from t2", data=DUPLICATES, seed=1)
    @example(sql="select b from t2 intersect select a from t0 except select a from t1", data=DUPLICATES, seed=1)
    def test(harness, sql, data, seed):  # type: ignore[no-untyped-def]
        used = harness.check(sql, data, form, seed)   # the chosen plan and three drawn with the form forced
        if FORMS[form] is not None and re.search(r"intersect (?!all)", sql):
            assert used > 0, f"{form} is not in the memo of {sql}"

    test.__doc__ = f"INTERSECT / EXCEPT with {form} forced wherever it holds answer as DuckDB does."
    return test


test_set_ops_with_distinct_above_equal_duckdb = _family("3.1")
test_set_ops_with_distinct_below_equal_duckdb = _family("3.2")
test_set_ops_as_semi_joins_equal_duckdb = _family("3.3")


def test_intersect_and_except_become_semi_and_anti_joins_all_stays(harness):
    planner = Planner(harness.catalog, settings=harness.settings)
    plan = planner.plan("select a, b from t0 intersect select a, b from t1 except select b, a from t2").plan
    kinds = sorted(o.kind for o in operators(plan) if isinstance(o, Join))
    assert kinds == ["anti", "semi"], plan
    assert not any(isinstance(o, SetOp) for o in operators(plan)), plan
    # nullable columns: null-safe keys, which the joins hash on
    assert all(len(o.equi_keys) == 2 for o in operators(plan) if isinstance(o, Join)), plan
    plan = planner.plan("select a from t0 intersect all select a from t1").plan
    assert any(isinstance(o, SetOp) and o.kind == "intersect" for o in operators(plan)), plan
