"""Plans in, plans out: a plan given as cbo's EXPLAIN JSON runs exactly as given
(``Session.run_plan``, ``cbo run-plan``), found again in its query's memo with the same number;
a plan that is malformed, or not a plan of its query, is refused with one line naming where."""

from __future__ import annotations

import json
import random

import pytest

from cbo.app.cli import main
from cbo.app.session import Session
from cbo.errors import CboError
from cbo.workloads.tpch_queries import select

Q5 = select(["q05"])[0].sql


@pytest.fixture(scope="module")
def session(tpch_parquet_catalog):  # type: ignore[no-untyped-def]
    return Session(tpch_parquet_catalog, engine="duckdb")


def test_a_plan_from_json_is_found_again_with_its_number_and_answers(session):
    count = session.plan_count(Q5)
    rng = random.Random(5)
    numbers = [session.chosen_number(Q5)] + [rng.randrange(count) for _ in range(4)]
    _, expected = session.query(Q5)
    for number in numbers:
        view = session.plan_number(Q5, number)
        body = json.loads(json.dumps(view.json(), default=str))
        assert body["plan_number"] == number and body["sql"] == Q5
        again = session.given_plan(body)
        assert again.planned.number == number
        assert again.planned.physical.text() == view.planned.physical.text()
        _, rows = session.run_plan(body)
        assert sorted(map(repr, rows)) == sorted(map(repr, expected))
    # EXPLAIN's own JSON of the chosen plan is a plan file too
    chosen = json.loads(session.explain(Q5, format="json"))
    assert session.given_plan(chosen).planned.number == numbers[0]


def _first(node, operator):  # type: ignore[no-untyped-def]
    if node["operator"] == operator:
        return node
    for child in node["children"]:
        found = _first(child, operator)
        if found is not None:
            return found
    return None


def test_a_plan_that_does_not_answer_its_query_is_refused_naming_where(session):
    body = json.loads(session.explain(Q5, format="json"))
    edited = json.loads(json.dumps(body))
    _first(edited["plan"], "Filter")["predicate"] = "(r_name#99 = 'EUROPE')"
    with pytest.raises(CboError, match=r"plan: the plan does not answer its query: plan(\.children\[\d\])+: no Filter "
                       r"of the query's memo has these details"):
        session.given_plan(edited)
    other = dict(body, sql=select(["q03"])[0].sql)   # the plan of another query
    with pytest.raises(CboError, match="does not answer its query"):
        session.given_plan(other)
    join = _first(body["plan"], "InnerJoin")
    join["strategy"] = "no_such_strategy"
    with pytest.raises(CboError, match=r"no InnerJoin \[no_such_strategy\] in the query's memo"):
        session.given_plan(body)


def test_exchanges_given_must_be_the_ones_the_operators_need(session):
    body = json.loads(session.explain(Q5, format="json"))
    node = next(n for n in _nodes(body["plan"]) if n.get("exchanges"))
    node["exchanges"] = ["-"] * len(node["exchanges"])
    with pytest.raises(CboError, match="the exchanges differ from what the operators need"):
        session.given_plan(body)


def _nodes(node):  # type: ignore[no-untyped-def]
    yield node
    for child in node["children"]:
        yield from _nodes(child)


@pytest.mark.parametrize("text, message", [
    ("not json", "not JSON"),
    ('{"sql": "select 1"}', 'expected an object with "plan"'),
    ('{"sql": "select 1", "plan": {"children": []}}', 'plan has no "operator"'),
    ('{"plan": {"operator": "Scan", "children": []}}', 'no query: the plan has no "sql"'),
    ('{"sql": "select 1", "plan": {"operator": "Scan", "children": [3]}}', r"plan.children\[0\] is not an operator"),
])
def test_a_malformed_plan_file_gets_one_line_naming_the_problem(session, tmp_path, text, message, capsys,
                                                                 tpch_parquet_catalog):
    path = tmp_path / "plan.json"
    path.write_text(text)
    with pytest.raises(CboError, match=message):
        session.run_plan(path)
    assert main(["run-plan", str(path), "--catalog", str(tpch_parquet_catalog), "--engine", "duckdb"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"cbo: error: {path}:")


def test_the_cli_lists_counts_and_shows_plans_by_number(tpch_parquet_catalog, tmp_path, capsys):
    catalog = str(tpch_parquet_catalog)
    assert main(["plans", Q5, "--catalog", catalog, "--cheapest", "3", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["plans"] > 1000 and listed["listed"][0]["number"] == listed["chosen"]
    costs = [p["cost"] for p in listed["listed"]]
    assert costs == sorted(costs) and len(costs) == 3
    assert main(["plans", Q5, "--catalog", catalog, "--number", "12", "--format", "json"]) == 0
    path = tmp_path / "plan12.json"
    path.write_text(capsys.readouterr().out)
    assert main(["run-plan", str(path), "--catalog", catalog, "--engine", "duckdb", "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["rows"]) == 5
