"""The memo, the search, the rules framework and the join enumerators."""

from __future__ import annotations

import pytest

from benchmarks.join_enumeration.shapes import SHAPES, build, edges_of, expected_pairs
from cbo.errors import CboError
from cbo.estimate import Estimator
from cbo.ir.operators import Join, Plan, Scan, walk
from cbo.joinorder.dphyp import DPhyp, Hypergraph, count_pairs
from cbo.memo.memo import Memo
from cbo.memo.render import MemoView, memo_json, memo_text
from cbo.memo.rules.base import TransformationRule, register_connector_rules
from cbo.memo.pattern import Pattern
from cbo.memo.search import Optimizer, default_rules
from cbo.settings import OptimizerSettings


def graph_of(shape: str, n: int) -> Hypergraph:
    graph = Hypergraph(n)
    for a, b in edges_of(shape, n):
        graph.add_edge(1 << a, 1 << b)
    return graph


@pytest.mark.parametrize("shape", SHAPES)
def test_dphyp_builds_each_csg_cmp_pair_once_and_only_after_its_parts(shape):
    for n in range(2, 9):
        graph = graph_of(shape, n)
        seen, built = set(), {1 << i for i in range(n)}

        def on_pair(a: int, b: int) -> None:
            assert a & b == 0
            assert a in built and b in built, "a side was used before a plan for it existed"
            assert graph.is_connected(a) and graph.is_connected(b) and graph.connected(a, b)
            pair = frozenset((a, b))
            assert pair not in seen, "pair emitted twice"
            seen.add(pair)
            built.add(a | b)

        DPhyp(graph, on_pair).run()
        assert len(seen) == expected_pairs(shape, n)
        assert (1 << n) - 1 in built


def test_hyperedges_only_join_whole_sides():
    # A predicate over three relations as a hyperedge {0} - {1, 2}, plus a simple edge 1 - 2.
    graph = Hypergraph(3)
    graph.add_edge(0b010, 0b100)
    graph.add_edge(0b001, 0b110)
    pairs = []
    DPhyp(graph, lambda a, b: pairs.append(frozenset((a, b)))).run()
    assert frozenset((0b001, 0b110)) in pairs
    assert frozenset((0b001, 0b010)) not in pairs   # 0 alone with 1 would need the whole {1, 2}
    assert count_pairs(graph) == 2


def optimize(shape: str, n: int, **settings) -> tuple[Plan, object]:  # type: ignore[no-untyped-def]
    workload = build(shape, n)
    result = Optimizer(Estimator(workload.stats), OptimizerSettings(**settings)).optimize(workload.plan)
    return workload.plan, result


def scans_of(plan: Plan) -> list[str]:
    return sorted(node.table for node in walk(plan) if isinstance(node, Scan))


def test_the_memo_holds_every_pair_once_and_the_plan_covers_every_relation():
    written, result = optimize("star", 7)
    assert result.counters.join_pairs == expected_pairs("star", 7)
    assert result.counters.heuristic_regions == 0
    assert scans_of(result.plan) == scans_of(written)
    assert len(result.memo) >= 2 ** 6   # a group per connected set holding the centre


def test_same_input_same_plan():
    _, first = optimize("snowflake", 9)
    _, second = optimize("snowflake", 9)
    assert first.plan == second.plan and first.cost == second.cost


def test_exhaustive_search_is_never_worse_than_the_greedy_order_or_the_written_one():
    for shape in SHAPES:
        written, best = optimize(shape, 7)
        _, greedy = optimize(shape, 7, max_reordered_joins=2)
        _, none = optimize(shape, 7, join_reordering_strategy="NONE")
        assert greedy.counters.heuristic_regions == 1
        assert best.cost <= greedy.cost * (1 + 1e-9)
        assert best.cost <= none.cost * (1 + 1e-9)
        assert scans_of(greedy.plan) == scans_of(written)


def test_reordering_off_keeps_the_written_join_order():
    written, result = optimize("chain", 6, join_reordering_strategy="NONE")
    assert result.counters.join_pairs == 0

    def join_sets(plan: Plan) -> set[frozenset[str]]:
        return {frozenset(scans_of(node)) for node in walk(plan) if isinstance(node, Join)}

    assert join_sets(result.plan) == join_sets(written)


def test_a_large_region_falls_back_to_the_greedy_order():
    written, result = optimize("chain", 30)
    assert result.counters.heuristic_regions == 1
    assert result.counters.join_pairs == 29
    assert scans_of(result.plan) == scans_of(written)


def test_the_pair_limit_switches_a_dense_region_to_the_greedy_order():
    written, result = optimize("clique", 8, max_join_pairs=100)
    assert result.counters.heuristic_regions == 1
    assert scans_of(result.plan) == scans_of(written)


def test_an_exhausted_budget_returns_the_best_plan_found_so_far():
    written, result = optimize("star", 8, max_rule_applications=20)
    assert result.counters.budget_exhausted == "rule applications"
    assert scans_of(result.plan) == scans_of(written)
    _, again = optimize("star", 8, max_rule_applications=20)
    assert again.plan == result.plan   # a count budget keeps the search deterministic
    _, full = optimize("star", 8)
    assert full.cost <= result.cost * (1 + 1e-9)   # equal up to rounding: ties go to the first found


def test_inserting_a_plan_twice_adds_nothing():
    workload = build("cycle", 5)
    memo = Memo(Estimator(workload.stats))
    first = memo.insert(workload.plan)
    groups, expressions = len(memo), memo.expression_count
    assert memo.insert(workload.plan) is first
    assert (len(memo), memo.expression_count) == (groups, expressions)


def test_groups_carry_logical_properties():
    workload = build("chain", 3)
    memo = Memo(Estimator(workload.stats))
    root = memo.insert(workload.plan)
    assert set(root.output) == set(workload.plan.output)
    assert root.rows == pytest.approx(Estimator(workload.stats).rows(workload.plan))
    assert root.not_null == workload.plan.not_null


def test_settings_are_checked():
    with pytest.raises(CboError, match="join_reordering_strategy"):
        OptimizerSettings(join_reordering_strategy="sometimes")
    with pytest.raises(CboError, match="max_reordered_joins"):
        OptimizerSettings(max_reordered_joins=0)
    with pytest.raises(CboError, match="unknown setting 'reorder'"):
        OptimizerSettings().with_values({"reorder": "on"})
    with pytest.raises(CboError, match="needs a number"):
        OptimizerSettings().with_values({"max_reordered_joins": "many"})
    changed = OptimizerSettings().with_values({"join_reordering_strategy": "none", "max_reordered_joins": "8",
                                               "disabled_rules": "BroadcastHashJoin"})
    assert changed.join_reordering_strategy == "NONE" and changed.max_reordered_joins == 8
    assert changed.disabled_rules == frozenset({"BroadcastHashJoin"})


def test_rules_are_listed_and_can_be_disabled():
    rules = default_rules()
    assert {"ReorderJoins", "BroadcastHashJoin", "ShuffledHashJoin", "SortMergeJoin",
            "BroadcastNestedLoopJoin", "HashAggregate"} <= set(rules.names())
    assert all(r["summary"] for r in rules.describe())
    with pytest.raises(CboError, match="unknown rule 'Nope'"):
        rules.disable("Nope")
    _, result = optimize("star", 5, disabled_rules=frozenset({"BroadcastHashJoin", "ReorderJoins"}))
    used = {w.physical.rule for group in result.memo for w in group.winners.values() if w.physical}
    assert "BroadcastHashJoin" not in used and used & {"ShuffledHashJoin", "SortMergeJoin"}
    assert result.counters.join_pairs == 0


class CountingRule(TransformationRule):
    """Counts the expressions it sees (a stand-in for a connector's pushdown rule)."""

    name = "CountingToyRule"
    patterns = (Pattern(Plan),)

    def __init__(self) -> None:
        self.seen = 0

    def apply(self, expr, group, context):  # type: ignore[no-untyped-def]
        self.seen += 1
        return ()


def test_connector_rules_join_the_rule_set_of_catalogs_with_that_source_type():
    rule = CountingRule()
    register_connector_rules("toy", rule)
    assert "CountingToyRule" not in default_rules(("spark",)).names()
    rules = default_rules(("spark", "toy"))
    assert "CountingToyRule" in rules.names()
    workload = build("chain", 3)
    Optimizer(Estimator(workload.stats), rules=rules).optimize(workload.plan)
    assert rule.seen > 0


def test_the_memo_renders_as_text_json_and_svg():
    _, result = optimize("cycle", 4)
    text = memo_text(result)
    assert text.startswith("Memo: ") and f"G{result.root.id}" in text and "*" in text
    body = memo_json(result)
    assert body["root"] == result.root.id
    assert body["counters"]["join_pairs"] == expected_pairs("cycle", 4)
    assert {"groups", "expressions", "rule_applications", "elapsed_ms"} <= set(body["counters"])
    winners = [g for g in body["groups"] if "winner" in g]
    assert winners and all(g["winner"]["cost"] >= 0 for g in winners)
    expressions = [e for g in body["groups"] for e in g["expressions"]]
    # Each expression names the rule that added it (None for the query as written), as the text does.
    assert {e["rule"] for e in expressions} >= {None, "ReorderJoins"}
    assert all(e["rule"] is None or f"<- {e['rule']}" in text for e in expressions)
    # Never-costed expressions carry the bound that ruled them out, at least the winner's cost.
    for g in body["groups"]:
        for e in g["expressions"]:
            if "lower_bound" in e:
                assert e["cost"] is None and not e["costed"]
                if "winner" in g:
                    assert e["lower_bound"] >= g["winner"]["cost"] - 1e-9
    assert MemoView(result)._repr_svg_().startswith("<svg")
