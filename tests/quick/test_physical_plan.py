"""The physical plan the search returns is one consistent tree, for every TPC-H query:

* every input of an operator delivers what the operator required of it (the enforcers the
  search placed are in the tree, as nodes of their own);
* the tree's total cost is the search's cost of the winner, and each node's total is its own
  cost plus its inputs';
* every node of the logical plan maps to exactly the operator that runs it;
* planning the same query twice gives the same tree.
"""

from __future__ import annotations

import math

import pytest

from cbo.sources.catalog import load_catalog
from cbo.estimate import Estimator
from cbo.planner import Planner
from cbo.ir.operators import walk
from cbo.workloads.tpch_queries import QUERY_DIR
from stats.store import StatsStore
from tests.plan_files import TPCH_STATS

QUERIES = sorted(QUERY_DIR.glob("q*.sql"))


@pytest.fixture(scope="module")
def estimator() -> Estimator:
    store = StatsStore(TPCH_STATS)
    return Estimator({table: store.load(table).stats for table in store.tables()})


@pytest.mark.parametrize("path", QUERIES, ids=[p.stem for p in QUERIES])
def test_the_physical_plan_is_consistent(path, tpch_parquet_catalog, estimator):
    planner = Planner(load_catalog(tpch_parquet_catalog), estimator=estimator)
    planned = planner.plan(path.read_text())
    root = planned.physical
    assert root is not None and root.logical is planned.plan
    for node in root.walk():
        if node.is_enforcer:
            assert len(node.inputs) == 1 and node.logical is node.inputs[0].logical
        else:
            assert len(node.required) == len(node.inputs)
            for need, child in zip(node.required, node.inputs):
                assert child.delivered.satisfies(need), f"{path.stem}: {child.describe()} does not deliver {need}"
        assert math.isclose(node.total, node.cost + sum(c.total for c in node.inputs), rel_tol=1e-9)
    assert math.isclose(root.total, planned.optimized.cost, rel_tol=1e-9)
    # each logical node is run by one operator: itself, or one that runs it inside (a top-N's sort)
    for logical in walk(planned.plan):
        operator = planned.operator(logical)
        assert operator is not None, f"{path.stem}: no operator runs {type(logical).__name__}"
        assert operator.logical is logical or logical in list(walk(operator.logical))
    again = planner.plan(path.read_text()).physical
    assert again is not None and again.text() == root.text()
