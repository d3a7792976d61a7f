"""One estimate per memo group, shown the same everywhere: EXPLAIN (text and JSON), the plan
files, the memo dump and the drawings.

A node of the chosen plan is paired with its memo group here by walking the winners from the
root (as the memo drawing marks the chosen plan), independently of how the planner records it.
"""

from __future__ import annotations


import pytest

from cbo.workloads.tpch_queries import QUERY_DIR
from cbo.sources.catalog import load_catalog
from cbo.estimate import Estimator
from cbo.app.explain import NodeInfo, add_estimate, describe
from cbo.ir.operators import Plan, Project
from cbo.memo.memo import Group, GroupRef, Winner
from cbo.physical.properties import ANY
from cbo.memo.render import memo_json, memo_text
from cbo.planner import Planner
from stats.store import StatsStore
from tests.plan_files import TPCH_STATS

QUERIES = sorted((QUERY_DIR).glob("q*.sql"))


@pytest.fixture(scope="module")
def estimator() -> Estimator:
    store = StatsStore(TPCH_STATS)
    return Estimator({table: store.load(table).stats for table in store.tables()})


def _pairs(plan: Plan, group: Group, winner: Winner, found: list[tuple[Plan, Group]]) -> None:
    while winner.physical is None:   # enforcers (exchanges, sorts) are not plan nodes
        assert winner.base is not None
        winner = winner.base
    physical = winner.physical
    found.append((plan, group))
    # An operator running several logical ones (a top-N: a limit over a sort) has the inner
    # ones in its node, down to the group references of its inputs.
    below: list[Plan] = []

    def inputs_of(plan: Plan, node: Plan) -> None:
        assert type(plan) is type(node) and len(plan.children) == len(node.children)
        for child_plan, child_node in zip(plan.children, node.children):
            if isinstance(child_node, GroupRef):
                below.append(child_plan)
            else:
                inputs_of(child_plan, child_node)

    inputs_of(plan, physical.node)
    assert len(below) == len(physical.inputs)
    for child_plan, child, need in zip(below, physical.inputs, physical.required_inputs):
        _pairs(child_plan, child, child.winners[need], found)


@pytest.mark.parametrize("path", QUERIES, ids=[p.stem for p in QUERIES])
def test_every_node_shows_its_memo_groups_estimate(path, tpch_parquet_catalog, estimator):
    planned = Planner(load_catalog(tpch_parquet_catalog), estimator=estimator).plan(path.read_text())
    optimized = planned.optimized
    assert optimized is not None
    infos: dict[int, NodeInfo] = {}

    def annotate(node: Plan, info: NodeInfo) -> None:
        add_estimate(info, node, planned)
        infos[id(node)] = info

    root_info = describe(planned.plan, annotate)
    plan = planned.plan
    pairs: list[tuple[Plan, Group]] = []
    root_winner = optimized.root.winners[ANY]
    if isinstance(plan, Project) and root_winner.physical is not None \
            and not isinstance(root_winner.physical.node, Project):
        # The projection that restores the query's column order keeps its input's rows.
        assert infos[id(plan)].estimated_rows == round(optimized.root.rows, 1)
        plan = plan.input
    _pairs(plan, optimized.root, root_winner, pairs)
    assert len(pairs) >= 2
    groups = {g["id"]: g["estimated_rows"] for g in memo_json(optimized)["groups"]}
    dump = memo_text(optimized)
    for node, group in pairs:
        shown = infos[id(node)].estimated_rows
        assert shown == round(group.rows, 1), (
            f"{path.stem}: {type(node).__name__} shows {shown} rows, its group G{group.id} {group.rows:.1f}")
        assert round(groups[group.id], 1) == round(shown, 1)             # memo JSON
        assert f"G{group.id}  est. rows {group.rows:,.1f}" in dump        # memo text
    assert root_info.to_json()["estimated_rows"] == round(optimized.root.rows, 1)
