"""The plan space of a memo (``cbo.memo.space``): counted exactly (checked against enumerating
every plan), numbered (unranking inverts ranking), drawn uniformly, listed cheapest first (the
first is the chosen plan); plans drawn from it (the plan-space benchmark's draws) complete,
costed by the same model as the chosen plan, never cheaper than it, and answering as it does;
and the benchmark's rank statistics."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from benchmarks.plan_space.__main__ import distinct_draws
from benchmarks.plan_space.stats import median, ranks, spearman
from cbo.engines.duckdb_engine import DuckDBEngine
from cbo.errors import CboError
from cbo.estimate import Estimator
from cbo.physical.properties import ANY
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
    with pytest.raises(CboError, match="no plan space"):
        planner.draw(bare, random.Random(1))


def _every_plan(space, group, required, known=None):  # type: ignore[no-untyped-def]
    """Every plan of the space, enumerated (the yardstick of the counts): each option over every
    combination of its inputs' plans, each input's plans listed once."""
    from cbo.memo.space import Choice

    known = {} if known is None else known
    key = (group.id, required)
    if key not in known:
        found = []
        for option in space.options(group, required):
            below = [[c for c in _every_plan(space, child, need, known) if c.delivered == d]
                     for child, need, d in option.inputs]
            for combination in itertools.product(*below):
                found.append(Choice(option, tuple(combination)))
        known[key] = found
    return known[key]


@pytest.mark.parametrize("name", ["q03", "q10"])
def test_counting_ranking_and_the_cheapest_agree_with_enumerating_every_plan(setup, name):
    planner, _ = setup
    planned = planner.plan(select([name])[0].sql)
    space = planned.optimized.space
    every = _every_plan(space, space.root, ANY)
    count = planner.plan_count(planned)
    assert count == len(every) > 1
    # numbers are the enumeration's order, and unranking inverts ranking
    assert [space.rank(c) for c in every] == list(range(count))
    for number in range(count):
        assert space.rank(space.unrank(number)) == number
    assert [_signature(space.unrank(n)) for n in range(count)] == [_signature(c) for c in every]
    # the k cheapest are the cheapest of all, and the first is the search's own plan
    by_cost = sorted(every, key=lambda c: c.cost)
    cheapest = planner.cheapest_plans(planned, 5)
    assert [p.optimized.cost for p in cheapest] == pytest.approx([c.cost for c in by_cost[:5]], rel=1e-12)
    assert cheapest[0].optimized.cost == pytest.approx(planned.optimized.cost, rel=1e-12)
    assert cheapest[0].number == planner.plan_rank(planned)
    # a plan's physical tree costs what its choice costs
    for plan in cheapest:
        projection = planned.physical.total - planned.optimized.cost   # the output-order projection's
        assert plan.physical.total == pytest.approx(plan.optimized.cost + projection, rel=1e-9)
    with pytest.raises(CboError, match=f"the memo holds {count:,} plans"):
        planner.plan_number(planned, count)


def _signature(choice):  # type: ignore[no-untyped-def]
    return (id(choice.option), tuple(_signature(c) for c in choice.children))


def test_draws_are_uniform_over_the_plans(setup):
    # q03's space is small enough to draw each plan many times: the counts per plan pass a
    # chi-squared test of uniformity (a draw per group, as before, fails it by far)
    planner, _ = setup
    planned = planner.plan(select(["q03"])[0].sql)
    count = planner.plan_count(planned)
    rng = random.Random(11)
    draws = 40 * count
    seen = Counter(planned.optimized.space.sample(rng)[0] for _ in range(draws))
    expected = draws / count
    chi2 = sum((seen.get(n, 0) - expected) ** 2 / expected for n in range(count))
    # the 99.9th percentile of chi-squared with count - 1 degrees of freedom, by Wilson-Hilferty
    dof = count - 1
    limit = dof * (1 - 2 / (9 * dof) + 3.09 * (2 / (9 * dof)) ** 0.5) ** 3
    assert chi2 < limit, (chi2, limit)
    drawn = planner.draw(planned, random.Random(2))
    assert drawn.number is not None
    assert planner.plan_number(planned, drawn.number).physical.text() == drawn.physical.text()


def test_rank_statistics():
    assert ranks([3.0, 1.0, 3.0, 2.0]) == [3.5, 1.0, 3.5, 2.0]
    assert spearman([1, 2, 3, 4], [10, 20, 30, 45]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3]) is None and spearman([1, 2], [1, 2]) is None
    assert median([3.0, 1.0, 2.0]) == 2.0 and median([1.0, 2.0]) == 1.5 and median([]) is None


@pytest.mark.parametrize("strategy", ["AUTOMATIC", "SHARE"])
def test_a_cte_read_twice_is_counted_numbered_and_drawn(setup, strategy):
    # q15 reads its revenue CTE twice: computed once, its anchor's plans are the producer's
    # plans times the body's (each read a leaf); inlined beside it (AUTOMATIC), the copies'
    # plans add to them. Counting agrees with enumerating, numbers invert, and plans drawn
    # from either form answer as the chosen plan does.
    planner, duck = setup
    from cbo.ir.operators import CteAnchor, CteConsumer, walk
    from cbo.settings import OptimizerSettings

    sharing = Planner(planner.catalog, estimator=planner.estimator,
                      settings=OptimizerSettings().with_values({"cte_strategy": strategy}))
    planned = sharing.plan(select(["q15"])[0].sql)
    space = planned.optimized.space
    anchors = [g for g in space.groups() if any(isinstance(e, CteAnchor) for e in g.expressions)]
    assert anchors, "no group computes the CTE once"
    inlined = any(not isinstance(e, CteAnchor) for g in anchors for e in g.expressions)
    assert inlined == (strategy == "AUTOMATIC")
    every = _every_plan(space, space.root, ANY)
    count = sharing.plan_count(planned)
    assert count == len(every) > 1
    assert [space.rank(c) for c in every] == list(range(count))
    _, expected, _ = duck.run(to_sql(planned.plan, planned.names, "duckdb"))
    rng = random.Random(5)
    forms = set()
    for number in sorted(rng.sample(range(count), min(count, 6))) + [0, count - 1]:
        taken = sharing.plan_number(planned, number)
        forms.add(any(isinstance(n, CteConsumer) for n in walk(taken.plan)))
        _, rows, _ = duck.run(to_sql(taken.plan, taken.names, "duckdb"))
        assert sorted(map(repr, rows)) == sorted(map(repr, expected)), number
    # plan 0 and the last come from different expressions of the anchor's group when both forms are there
    assert forms == ({True, False} if inlined else {True})
