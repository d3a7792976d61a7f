"""The research surface: sub-plan keys, cardinality injection and distortion, the plug-ins'
protocols, and P-error.

Plans are made at TPC-H SF 1 statistics (tests/testdata/stats/tpch-sf1) over the SF 0.01
catalog's schema, as the plan files are; true counts (the oracle) come from the SF 0.01 data.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.tpch.queries import all_queries
from cbo.app.subplans import export
from cbo.errors import CboError
from cbo.estimate import Estimator
from cbo.estimate.oracle import concrete
from cbo.estimate.plugin import PluggedContext
from cbo.estimate.subplan import OperatorClass, SubPlan
from cbo.memo.memo import group_of
from cbo.physical.algorithm import Algorithm
from cbo.planner import Planner, RuleChanges
from cbo.settings import OptimizerSettings
from cbo.sources.catalog import load_catalog
from stats.store import StatsStore
from tests.plan_files import TPCH_STATS

ROOT = Path(__file__).resolve().parents[2]
QUERIES = {q.name: q.sql for q in all_queries()}


@pytest.fixture(scope="module")
def estimator() -> Estimator:
    store = StatsStore(TPCH_STATS)
    return Estimator({t: store.load(t).stats for t in store.tables()})


@pytest.fixture(scope="module")
def catalog(tpch_parquet_catalog):  # type: ignore[no-untyped-def]
    return load_catalog(tpch_parquet_catalog)


def planner(catalog, estimator, plugin=None, cost_model=None, rules=None, **settings) -> Planner:  # type: ignore[no-untyped-def]
    return Planner(catalog, estimator=plugin if plugin is not None else estimator, statistics=estimator,
                   settings=OptimizerSettings().with_values(settings), cost_model=cost_model, rules=rules)


def asked(planned) -> set[str]:  # type: ignore[no-untyped-def]
    return set(planned.coverage.answers)


class JoinsOnly:
    """A plug-in answering joins only: ten times cbo's own rows would be a guess; a fixed
    number per relation count is easy to check."""

    name = "joins-only"
    answers = frozenset({OperatorClass.JOIN})

    def __init__(self) -> None:
        self.seen: list[SubPlan] = []

    def rows(self, subplan: SubPlan) -> float | None:
        self.seen.append(subplan)
        return 1000.0 * subplan.relations


# -- canonical keys ---------------------------------------------------------------------------------


def test_every_expression_of_a_group_has_the_groups_key(catalog, estimator):
    # Join order does not change a sub-plan's description: every expression of a join group
    # (another order of the same set) gets the key of the group's first expression.
    planned, _ = planner(catalog, estimator).subplans(QUERIES["q05"])
    context = planned.optimized.memo.estimator
    assert isinstance(context, PluggedContext)
    checked = 0
    for group in planned.optimized.memo.groups:
        if group.merged_into is not None:
            continue
        key = context.subplan(group.first).key
        for expression in group.expressions:
            plain = expression.with_children(tuple(concrete(group_of(c).first) for c in expression.children)) \
                if expression.children else expression
            assert context.describer.describe(plain).key == key, f"G{group.id}: {expression}"
            checked += 1
    assert checked > len(planned.optimized.memo.groups)   # some groups hold several orders


def test_the_description_names_tables_filters_and_joins(catalog, estimator):
    planned, coverage = planner(catalog, estimator).subplans(QUERIES["q05"])
    joins = [a.subplan for a in coverage.answers.values() if a.subplan.operator is OperatorClass.JOIN]
    whole = max(joins, key=lambda s: s.relations)
    assert [alias for alias, _ in whole.tables] == ["customer", "lineitem", "nation", "orders", "region", "supplier"]
    assert "(region.r_name = 'ASIA')" in whole.filters
    assert "customer.c_custkey = orders.o_custkey" in whole.joins
    # an equivalence class as one condition, whichever pairs an order states it by
    assert "customer.c_nationkey = nation.n_nationkey = supplier.s_nationkey" in whole.joins
    assert whole.count_sql.startswith("SELECT count(*) FROM (")


def test_a_self_join_numbers_its_aliases(catalog, estimator):
    planned, coverage = planner(catalog, estimator).subplans(QUERIES["q07"])
    aliases = {alias for a in coverage.answers.values() for alias, _ in a.subplan.tables}
    assert {"nation_1", "nation_2"} <= aliases and "nation" not in aliases


def test_grouping_sets_are_described_as_an_aggregation(catalog, estimator):
    sql = ("select n_name, r_name, count(*) from nation join region on n_regionkey = r_regionkey "
           "group by rollup (r_name, n_name)")
    _, coverage = planner(catalog, estimator).subplans(sql)
    grouped = [a.subplan for a in coverage.answers.values() if "grouping_sets" in a.subplan.description]
    assert grouped and grouped[0].operator is OperatorClass.AGGREGATE
    assert grouped[0].description["grouping_sets"] == [[], ["region.r_name"], ["region.r_name", "nation.n_name"]]


def test_windows_are_described_with_partition_order_and_functions(catalog, estimator):
    sql = ("select * from (select n_name, rank() over (partition by n_regionkey order by n_name desc) r "
           "from nation) q where r <= 2")
    _, coverage = planner(catalog, estimator).subplans(sql)
    windows = [a.subplan for a in coverage.answers.values() if a.subplan.operator is OperatorClass.WINDOW]
    assert windows, "no window sub-plan was asked about"
    described = windows[0].description
    assert described["partition"] == ["nation.n_regionkey"]
    assert described["order"] == ["nation.n_name DESC NULLS LAST"]
    assert len(described["functions"]) == 1 and "rank" in described["functions"][0]


def test_a_cte_read_twice_is_two_relations_whose_sql_runs_alone(catalog, estimator, tpch_parquet_catalog):
    # Computed once, each read of q15's revenue CTE is a relation of its own (aliased by the
    # CTE's name, numbered as a self-joined table is), of its producer's class, the producer
    # nested; its SQL inlines the CTE, so a plug-in can run it without the statement's WITH.
    from cbo.engines.duckdb_engine import DuckDBEngine

    _, coverage = planner(catalog, estimator, cte_strategy="SHARE").subplans(QUERIES["q15"])
    reads = [a.subplan for a in coverage.answers.values() if "cte" in a.subplan.description]
    assert {s.description["cte"] for s in reads} == {"revenue0_1", "revenue0_2"}
    assert all(s.operator is OperatorClass.AGGREGATE and s.tables == (("lineitem", "lake.lineitem"),)
               for s in reads)
    assert reads[0].description["producer"] == reads[1].description["producer"]
    joined = [a.subplan for a in coverage.answers.values() if a.subplan.operator is OperatorClass.JOIN
              and "revenue0_1" in json.dumps(a.subplan.description)]
    assert joined, "the join of supplier with a read of the CTE was not asked about"
    document = json.loads(json.dumps(export(planner(catalog, estimator, cte_strategy="SHARE"), QUERIES["q15"])))
    assert document["settings"]["cte_strategy"] == "SHARE"
    assert {e["key"] for e in document["subplans"]} == {s.key for s in (a.subplan for a in coverage.answers.values())}
    duck = DuckDBEngine(load_catalog(tpch_parquet_catalog))
    for subplan in reads + joined:
        assert "cte" not in subplan.sql.lower().replace("cte\"", "")
        _, rows, _ = duck.run(subplan.count_sql)
        assert rows[0][0] >= 0


def test_keys_are_the_same_in_another_process(tpch_parquet_catalog, tmp_path):
    # Python salts string hashes per process: a key must not depend on it.
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"q5-{seed}.json"
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-m", "cbo", "subplans", "--catalog", str(tpch_parquet_catalog),
                               "--out", str(out), QUERIES["q05"]], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "sub-plans" in done.stdout
        outputs.append([s["key"] for s in json.loads(out.read_text())["subplans"]])
    assert outputs[0] == outputs[1] and len(outputs[0]) > 20


# -- injection, fallback, distortion ----------------------------------------------------------------


def test_rows_from_a_file_are_used_and_missing_keys_fall_back(catalog, estimator, tmp_path):
    base = planner(catalog, estimator)
    document = export(base, QUERIES["q05"])
    given = {}
    for entry in document["subplans"]:
        if entry["operator"] == "join":
            entry["rows"] = given[entry["key"]] = 1234.0 + len(entry["tables"])
    path = tmp_path / "q5.json"
    path.write_text(json.dumps(document))
    injected = planner(catalog, estimator, cardinalities=f"file:{path}")
    planned = injected.plan(QUERIES["q05"])
    coverage = planned.coverage
    assert coverage.injected == len(given) > 0
    assert coverage.fell_back == len(coverage.answers) - len(given) > 0
    for key, answer in coverage.answers.items():
        if key in given:
            assert answer.rows == given[key] and answer.source == str(path)
        else:
            assert answer.source == "cbo" and answer.rows == answer.estimated
    for group in planned.optimized.memo.groups:   # the memo's groups carry the rows given
        key = planned.optimized.memo.estimator.subplan(group.first).key
        if key in given and group.merged_into is None:
            assert group.rows == given[key]
    # a plain key -> rows file and a CSV file say the same
    (tmp_path / "plain.json").write_text(json.dumps(given))
    (tmp_path / "rows.csv").write_text("key,rows\n" + "".join(f"{k},{v}\n" for k, v in given.items()))
    for other in ("plain.json", "rows.csv"):
        again = planner(catalog, estimator, cardinalities=f"file:{tmp_path / other}").plan(QUERIES["q05"])
        assert again.optimized.cost == planned.optimized.cost


def test_explain_notes_say_where_rows_came_from(tpch_parquet_catalog, tmp_path):
    from cbo.app.session import Session

    # the byte threshold at 0 (never push): the sub-plans asked are then the exported ones
    session = Session(tpch_parquet_catalog, engine="duckdb",
                      settings={"push_aggregation_below_join_byte_reduction_threshold": 0})
    document = export(session.planner, QUERIES["q05"])
    joins = {e["key"]: 42 for e in document["subplans"] if e["operator"] == "join"}
    path = tmp_path / "joins.json"
    path.write_text(json.dumps(joins))
    session.set(cardinalities=f"file:{path}")
    text = session.explain(QUERIES["q05"])
    assert f"rows from {path} (sub-plan join-" in text
    assert f"rows: cbo's estimate, {path} had none for sub-plan filter-" in text
    assert f"cardinalities: {len(joins)} of {len(document['subplans'])} sub-plans from {path}" in text
    body = json.loads(session.explain(QUERIES["q05"], format="json"))
    assert body["cardinalities"]["injected"] == len(joins)


def test_a_plugin_is_asked_only_about_its_classes(catalog, estimator):
    plugin = JoinsOnly()
    planned = planner(catalog, estimator, plugin=plugin).plan(QUERIES["q05"])
    assert plugin.seen and all(s.operator is OperatorClass.JOIN for s in plugin.seen)
    by_class = planned.coverage.by_class()
    assert by_class["join"][1] == 0 and by_class["join"][0] > 0
    assert all(injected == 0 for name, (injected, _) in by_class.items() if name != "join")
    assert planned.optimized.root.rows > 0


def test_distortion_by_a_factor_and_by_a_seeded_lognormal(catalog, estimator):
    plain = planner(catalog, estimator).subplans(QUERIES["q03"])[1]
    four = planner(catalog, estimator, cardinality_distortion="4").plan(QUERIES["q03"]).coverage
    for key, answer in four.answers.items():
        assert answer.rows == pytest.approx(4 * plain.answers[key].rows)
    first = planner(catalog, estimator, cardinality_distortion="lognormal:1.5:7").plan(QUERIES["q03"]).coverage
    again = planner(catalog, estimator, cardinality_distortion="lognormal:1.5:7").plan(QUERIES["q03"]).coverage
    other = planner(catalog, estimator, cardinality_distortion="lognormal:1.5:8").plan(QUERIES["q03"]).coverage
    assert [a.rows for a in first.answers.values()] == [a.rows for a in again.answers.values()]
    assert first.summary().endswith("all cbo's estimates, distorted by lognormal:1.5:7")
    assert [a.rows for a in first.answers.values()] != [a.rows for a in other.answers.values()]
    factors = {a.rows / a.estimated for a in first.answers.values() if a.estimated > 0}
    assert len(factors) > 3   # one factor per sub-plan, not one for all


@pytest.mark.parametrize("value", ["abc", "0", "-2", "lognormal:1", "lognormal:x:3", "lognormal:1:2.5", "inf"])
def test_a_bad_distortion_is_refused_by_name(value):
    with pytest.raises(CboError, match="cardinality_distortion"):
        OptimizerSettings().with_values({"cardinality_distortion": value})


@pytest.mark.parametrize("content, problem", [
    (None, "No such file"), ("{not json", "not valid JSON"), ('{"join-1": "many"}', "must be a number"),
    ('{"join-1": -3}', "non-negative"), ("join-1\n", "expected key,rows"), ("[1, 2]", None)])
def test_a_bad_cardinalities_file_gets_one_line(catalog, estimator, tmp_path, content, problem):
    path = tmp_path / "rows.json"
    if content is not None:
        path.write_text(content)
    planning = planner(catalog, estimator, cardinalities=f"file:{path}")
    if problem is None:   # a list without keys: nothing injected, nothing lost
        assert planning.plan(QUERIES["q03"]).coverage.injected == 0
        return
    with pytest.raises(CboError) as raised:
        planning.plan(QUERIES["q03"])
    message = str(raised.value)
    assert problem in message and str(path) in message and "\n" not in message


# -- does the set of sub-plans depend on the rows given? ----------------------------------------------


@pytest.mark.parametrize("name", ["q03", "q05", "q07", "q08", "q09", "q10", "q21"])
def test_the_subplans_asked_do_not_depend_on_the_rows_given(catalog, estimator, name):
    # With eager aggregation's byte test out of play (threshold 0: never pushed), the memo's
    # groups come from the plan alone: any rows give the same set of sub-plans.
    settings = {"push_aggregation_below_join_byte_reduction_threshold": "0"}
    base = planner(catalog, estimator, **settings)
    document = export(base, QUERIES[name])
    assert document["value_dependent"] == [] and document["stable"]
    exported = {e["key"] for e in document["subplans"]}
    for distortion in ("lognormal:3:1", "lognormal:3:2", "0.001", "1000"):
        planned = planner(catalog, estimator, cardinality_distortion=distortion, **settings).plan(QUERIES[name])
        assert asked(planned) == exported, distortion


def test_greedy_ordering_makes_the_set_depend_on_the_rows_and_the_export_says_so(catalog, estimator):
    settings = {"max_reordered_joins": "3", "push_aggregation_below_join_byte_reduction_threshold": "0"}
    document = export(planner(catalog, estimator, **settings), QUERIES["q08"])
    assert any("greedy join ordering" in reason for reason in document["value_dependent"])
    assert not document["stable"]
    exported = {e["key"] for e in document["subplans"]}
    sets = [asked(planner(catalog, estimator, cardinality_distortion=f"lognormal:3:{seed}", **settings)
                  .plan(QUERIES["q08"])) for seed in range(4)]
    assert any(found != exported for found in sets)


def test_eager_aggregation_under_the_byte_threshold_is_named_in_the_export(catalog, estimator, tmp_path):
    document = export(planner(catalog, estimator), QUERIES["q05"])
    assert any("EagerAggregation" in reason for reason in document["value_dependent"])
    # and it does depend: small joins make pushing an aggregation below them pay, and the
    # search asks about the joins of those aggregations
    path = tmp_path / "small.json"
    path.write_text(json.dumps({e["key"]: 42 for e in document["subplans"] if e["operator"] == "join"}))
    planned = planner(catalog, estimator, cardinalities=f"file:{path}").plan(QUERIES["q05"])
    assert not asked(planned) <= {e["key"] for e in document["subplans"]}


# -- cost and rule plug-ins ---------------------------------------------------------------------------


def test_a_cost_function_returning_cbos_cost_chooses_cbos_plan(catalog, estimator):
    calls = []

    def same(operator):  # type: ignore[no-untyped-def]
        calls.append(operator.algorithm)
        return operator.default

    for name in ("q05", "q18"):
        own = planner(catalog, estimator).plan(QUERIES[name])
        plugged = planner(catalog, estimator, cost_model=same).plan(QUERIES[name])
        assert plugged.optimized.cost == pytest.approx(own.optimized.cost, rel=1e-9)
        assert plugged.plan == own.plan
    assert any(a.enforcer for a in calls) and any(not a.enforcer for a in calls)


def test_a_cost_function_can_forbid_broadcasts(catalog, estimator):
    def no_broadcast(operator):  # type: ignore[no-untyped-def]
        if operator.algorithm in (Algorithm.BROADCAST_HASH_JOIN, Algorithm.BROADCAST):
            return 1e9
        return operator.default

    own = planner(catalog, estimator).plan(QUERIES["q05"])
    assert any(n.algorithm is Algorithm.BROADCAST_HASH_JOIN for n in own.physical.walk())
    plugged = planner(catalog, estimator, cost_model=no_broadcast).plan(QUERIES["q05"])
    assert not any(n.algorithm in (Algorithm.BROADCAST_HASH_JOIN, Algorithm.BROADCAST)
                   for n in plugged.physical.walk())


def test_a_negative_cost_is_refused():
    from cbo.cost.plugin import FunctionCostModel
    from cbo.ir.expressions import TRUE
    from cbo.ir.operators import Values

    model = FunctionCostModel(lambda operator: -1.0)
    with pytest.raises(CboError, match="non-negative"):
        model.local(Values((), ((TRUE,),)), Algorithm.VALUES, (1.0, 8.0), [])


def test_rules_are_added_and_removed_for_one_planner(catalog, estimator):
    from cbo.ir.operators import Join
    from cbo.memo.pattern import Pattern
    from cbo.memo.rules.base import TransformationRule

    class WatchJoins(TransformationRule):
        """Sees every inner join and adds nothing: shows an added rule is bound."""

        name = "WatchJoins"
        patterns = (Pattern(Join),)

        def apply(self, expr, group, context):  # type: ignore[no-untyped-def]
            return []

    removed = planner(catalog, estimator, rules=RuleChanges(remove=frozenset({"ReorderJoins"}))).plan(QUERIES["q05"])
    assert "ReorderJoins" not in removed.optimized.counters.by_rule
    own = planner(catalog, estimator).plan(QUERIES["q05"])
    assert own.optimized.counters.by_rule.get("ReorderJoins")
    added = planner(catalog, estimator, rules={"add": [WatchJoins()]}).plan(QUERIES["q05"])
    assert added.optimized.counters.by_rule.get("WatchJoins")
    assert added.plan == own.plan
    with pytest.raises(CboError, match="unknown rule"):
        planner(catalog, estimator, rules={"remove": ["NoSuchRule"]}).plan(QUERIES["q05"])


# -- P-error ------------------------------------------------------------------------------------------


def test_p_error_is_one_with_true_rows_and_recosting_is_exact(catalog, estimator):
    from cbo.perror import cost_under, p_error

    base = planner(catalog, estimator)
    truth = base.oracle().true_rows
    optimal = base.with_true_cardinalities().plan(QUERIES["q05"])
    # the oracle's plan costed with true rows is the cost its search found
    assert cost_under(optimal.physical, optimal.optimized.search.cost_model, truth) == \
        pytest.approx(optimal.optimized.cost, rel=1e-12)
    assert p_error(optimal, optimal, truth).p_error == 1.0
    found = base.p_error(QUERIES["q05"])
    assert found.p_error >= 1.0 - 1e-9
    assert found.q_error_max > 1.0   # SF 1 statistics over SF 0.01 data: far off


def test_a_wild_distortion_chooses_a_worse_plan(catalog, estimator):
    worst = max(planner(catalog, estimator, cardinality_distortion=f"lognormal:3:{seed}").p_error(QUERIES["q05"])
                .p_error for seed in range(3))
    assert worst > 1.0
