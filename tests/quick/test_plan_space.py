"""Plans drawn from the memo (``Planner.draw``, the plan-space benchmark's draws): complete,
costed by the same model as the chosen plan, never cheaper than it, and answering as it does;
and the benchmark's rank statistics."""

from __future__ import annotations

import random

import pytest

from benchmarks.plan_space.__main__ import distinct_draws
from benchmarks.plan_space.stats import median, ranks, spearman
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.errors import CboError
from cbo.estimate import Estimator
from cbo.planner import PlannedQuery, Planner
from cbo.sources.catalog import load_catalog
from cbo.sqlgen import to_sql
from cbo.workloads.tpch_queries import select
from tests.quick.test_rule_files import _stored


@pytest.fixture(scope="module")
def setup(tpch_parquet_catalog):  # type: ignore[no-untyped-def]
    catalog = load_catalog(tpch_parquet_catalog)
    return Planner(catalog, estimator=Estimator(_stored("tpch-sf1"))), DuckDBEngine(catalog)


@pytest.mark.parametrize("name, least", [("q03", 1), ("q05", 4), ("q09", 4)])
def test_drawn_plans_are_costed_no_cheaper_than_the_chosen_one_and_answer_alike(setup, name, least):
    planner, duck = setup
    planned = planner.plan(select([name])[0].sql)
    assert planned.optimized is not None
    # implementing the chosen logical plan alone gives the chosen plan's cost
    assert planner.optimizer().implement(planned.plan).cost == pytest.approx(planned.optimized.cost, rel=1e-9)
    draws = distinct_draws(planner, planned, 4, random.Random(7))
    assert len(draws) >= least, "the memo holds other plans than the chosen one"
    _, expected, _ = duck.run(to_sql(planned.plan, planned.names, "duckdb"))
    for drawn in draws:
        assert drawn.plan != planned.plan and drawn.physical is not None and drawn.names == planned.names
        assert drawn.optimized.cost >= planned.optimized.cost * (1 - 1e-9)
        _, rows, _ = duck.run(to_sql(drawn.plan, drawn.names, "duckdb"))
        assert sorted(map(repr, rows)) == sorted(map(repr, expected))


def test_a_plan_without_a_memo_cannot_be_drawn_from(setup):
    planner, _ = setup
    planned = planner.plan("select 1")
    bare = PlannedQuery(planned.sql, planned.bound, planned.plan, planned.names)
    with pytest.raises(CboError, match="no memo to draw from"):
        planner.draw(bare, random.Random(1))


def test_rank_statistics():
    assert ranks([3.0, 1.0, 3.0, 2.0]) == [3.5, 1.0, 3.5, 2.0]
    assert spearman([1, 2, 3, 4], [10, 20, 30, 45]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3]) is None and spearman([1, 2], [1, 2]) is None
    assert median([3.0, 1.0, 2.0]) == 2.0 and median([1.0, 2.0]) == 1.5 and median([]) is None
