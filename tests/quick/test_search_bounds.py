"""The search's pruning is exact: skipping alternatives by their lower bounds never changes the
cost of the chosen plan.

The search costs an alternative only when its floor (its own cost, its inputs' cheapest plans,
and the enforcers its inputs cannot avoid) is under the best plan found, and implements a join
for a requirement only when it could deliver it (``cbo.memo.search``). Each of those bounds
must be a true lower bound. The yardstick is the same search costing every alternative
(``Optimizer(prune=False)``): on every join graph shape, with random statistics, and on the 22
TPC-H queries at SF 1 statistics, both must find plans of the same cost.
"""

from __future__ import annotations

import math

import pytest

from benchmarks.join_enumeration.shapes import SHAPES, build
from benchmarks.tpch.queries import all_queries
from cbo.estimate import Estimator
from cbo.memo.search import Optimizer
from cbo.planner import Planner
from cbo.settings import OptimizerSettings
from cbo.sources.catalog import load_catalog
from stats.store import StatsStore
from tests.plan_files import TPCH_STATS


def _same_cost(pruned: float, full: float) -> bool:
    return math.isclose(pruned, full, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", range(4))
def test_pruned_search_costs_what_the_full_search_costs(shape, seed):
    for n in (3, 5, 7):
        workload = build(shape, n, seed)
        settings = OptimizerSettings(max_reordered_joins=n)
        pruned = Optimizer(Estimator(workload.stats), settings).optimize(workload.plan)
        full = Optimizer(Estimator(workload.stats), settings, prune=False).optimize(workload.plan)
        assert _same_cost(pruned.cost, full.cost), (shape, n, seed, pruned.cost, full.cost)
        assert pruned.counters.alternatives_costed <= full.counters.alternatives_costed


def test_pruning_skips_most_alternatives_of_a_star():
    workload = build("star", 8, 0)
    settings = OptimizerSettings(max_reordered_joins=8)
    pruned = Optimizer(Estimator(workload.stats), settings).optimize(workload.plan)
    full = Optimizer(Estimator(workload.stats), settings, prune=False).optimize(workload.plan)
    assert pruned.counters.alternatives_costed * 2 < full.counters.alternatives_costed


def test_tpch_plans_cost_the_same_pruned(tpch_parquet_catalog):
    store = StatsStore(TPCH_STATS)
    estimator = Estimator({t: store.load(t).stats for t in store.tables()})
    planner = Planner(load_catalog(tpch_parquet_catalog), estimator=estimator)
    for query in all_queries():
        _, normalized, _ = planner.logical(query.sql)
        base = planner.optimizer()
        pruned = base.optimize(normalized)
        full = Optimizer(base.estimator, base.settings, base.rules, base.profile, base.remote_tables,
                         prune=False).optimize(normalized)
        assert _same_cost(pruned.cost, full.cost), (query.name, pruned.cost, full.cost)


def _searched(monkeypatch, shape: str, n: int, seed: int):
    """The optimizer's result and its search (kept for inspecting bounds after the fact)."""
    workload = build(shape, n, seed)
    result = Optimizer(Estimator(workload.stats), OptimizerSettings(max_reordered_joins=n)).optimize(workload.plan)
    return result, result.search


@pytest.mark.parametrize("shape", SHAPES)
def test_a_rules_floor_is_at_most_the_floor_of_each_alternative_it_makes(monkeypatch, shape):
    # The search skips a join unimplemented when every implementation rule's floor reaches the
    # winner (ImplementationRule.floor): each must bound every alternative the rule makes.
    for n, seed in ((4, 0), (6, 1), (7, 2)):
        result, search = _searched(monkeypatch, shape, n, seed)
        checked = 0
        for group in result.memo:
            for expr in group.expressions:
                made = search.optimize_expression(expr, group)
                for rule in search.dispatch.implementations(type(expr)):
                    if not rule.matches(expr, group, search.context):
                        continue
                    floor = rule.floor(expr, group, search.context, search.bounds)
                    if floor is None:
                        continue
                    floors = [search.bounds.floor(p, group) for p in made if p.rule == rule.name]
                    assert floor <= min(floors, default=math.inf) * (1 + 1e-12), (shape, n, rule.name, expr)
                    checked += 1
        assert checked > 0


def test_most_joins_of_a_star_are_never_implemented(monkeypatch):
    # In a star every join order costs the same: the rules' floors show each later order cannot
    # beat the first one found, before any of its alternatives is made.
    result, search = _searched(monkeypatch, "star", 9, 0)
    implemented = sum(1 for group in result.memo for expr in group.expressions
                      if (state := search.state.known(expr)) is not None and state.physicals is not None)
    assert implemented * 3 < result.memo.expression_count


def test_an_expressions_bound_is_at_most_its_cost(tpch_parquet_catalog):
    # The search orders a group's expressions by a lower bound and stops at the first that
    # reaches the best plan (EXPLAIN shows it for what was never costed: "inlined at least ...").
    # A top-N reads its sort's input, not the sort: the sort group's cheapest plan (a full sort)
    # bounds neither it nor its Limit (ImplementationRule.reads_below).
    store = StatsStore(TPCH_STATS)
    estimator = Estimator({t: store.load(t).stats for t in store.tables()})
    planner = Planner(load_catalog(tpch_parquet_catalog), estimator=estimator)
    checked = 0
    for query in all_queries():
        _, normalized, _ = planner.logical(query.sql)
        base = planner.optimizer()
        full = Optimizer(base.estimator, base.settings, base.rules, base.profile, base.remote_tables,
                         prune=False).optimize(normalized)
        costs, bounds = full.expression_costs, full.expression_bounds
        for key, bound in bounds.items():
            cost = costs.get(key)
            if cost is not None:
                checked += 1
                assert bound <= cost * (1 + 1e-9), (query.name, key, bound, cost)
    assert checked > 500
