"""The equivalence benchmark's local families, a handful of seeded cases each (the large runs
are ``python -m benchmarks.equivalence``), its failure path (a wrong plan is caught, shrunk and
written to the corpus), and the replay of the regression corpus it appends to."""

from __future__ import annotations

import json
import random

import pytest

from benchmarks.equivalence import __main__ as equivalence
from benchmarks.equivalence.families import FAMILIES, Checker, Family, tlp_predicate
from benchmarks.equivalence.tables import RandomTables, References
from cbo.ir.operators import Limit

LOCAL = sorted(FAMILIES)


@pytest.mark.parametrize("family", LOCAL)
def test_a_few_seeded_cases_of_each_family_match(family, tmp_path):
    out = tmp_path / "out.json"
    assert equivalence.main(["--family", family, "--cases", "4", "--seed", "3", "--no-corpus", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["cases"] == 4 and report["mismatches"] == 0 and report["errors"] == 0
    assert report["plans_checked"] >= 4 * 2 or report["cases_by_reference"].get("none")
    assert report["tlp_checked"] >= 1
    assert report["seed"] == 3 and len(report["commit"]) == 40 and report["cpu_seconds"] > 0
    assert 1 <= report["distinct_queries"] <= report["distinct_cases"] <= 4
    assert report["plannings"] >= report["distinct_queries"]


def test_planning_is_deterministic_so_plans_can_be_cached(tmp_path):
    """The checker plans a query once and reuses the plan and its memo for every case with
    that query: sound only while planning the same SQL again gives the same plan and memo."""
    from hypothesis import HealthCheck, Phase, given, settings

    from cbo.memo.search import draw_plan
    from cbo.planner import Planner

    family = FAMILIES["decorrelation"]
    tables = RandomTables(tmp_path, family.tables)
    tables.write_schema()
    queries: list[str] = []

    @settings(max_examples=15, database=None, derandomize=True, phases=(Phase.generate,), deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(family.queries)
    def collect(query):  # type: ignore[no-untyped-def]
        queries.append(query)

    collect()
    first, second = Planner(tables.catalog), Planner(tables.catalog)
    for query in queries:
        a, b = first.plan(query), second.plan(query)
        assert a.plan == b.plan and a.names == b.names, query
        assert draw_plan(a.optimized.root, random.Random(1)) == draw_plan(b.optimized.root, random.Random(1)), query


def test_a_repeated_case_reuses_its_plans_and_gives_the_same_report(tmp_path):
    family = FAMILIES["semijoin"]
    references = References(RandomTables(tmp_path, family.tables), tmp_path / "postgres")
    checker = Checker(family, references.tables, references)
    case = {"sql": "select t0.a, t0.b from t0 where t0.a in (select t2.b from t2)", "seed": 4,
            "tables": {"t0": [[1, 2], [None, 1], [2, 2]], "t1": [], "t2": [[3, 1], [1, 1]], "t3": [[0, 0]]}}
    try:
        first = checker.check(case)
        planned = checker.planned
        other_rows = {**case, "tables": {**case["tables"], "t2": [[None, 2]]}}
        second = checker.check(other_rows)
        again = checker.check(case)
    finally:
        references.close()
    assert checker.planned == planned and checker.reused >= 4   # the query and its TLP partitions
    assert first == again and first.plans == second.plans == 4 and first.tlp


def _wrong(planned, rng, case):  # type: ignore[no-untyped-def]
    # a deliberately wrong alternative: only the first row of the answer
    return [("first row only", Limit(planned.plan, 1))]


def test_a_wrong_plan_is_caught_minimized_and_added_to_the_corpus(tmp_path, monkeypatch):
    base = FAMILIES["semijoin"]
    family = Family("wrong", base.summary, base.tables, base.queries, base.rows, _wrong, base.settings)
    references = References(RandomTables(tmp_path, family.tables), tmp_path / "postgres")
    run = equivalence.Run("wrong", Checker(family, references.tables, references), family.cases(), None)
    run.batch(60, seed=1)
    references.close()
    assert len(run.failures) == 1 and run.failures[0]["kind"] == "mismatch"
    case = run.failures[0]["case"]
    assert "first row only" in run.failures[0]["error"]
    # shrunk: two rows in the answer are enough, so no table keeps more rows than needed
    assert sum(len(rows) for rows in case["tables"].values()) <= 4, case
    monkeypatch.setattr(equivalence, "CORPUS", tmp_path / "corpus.txt")
    assert equivalence.append_to_corpus("wrong", run.failures[0])
    assert not equivalence.append_to_corpus("wrong", run.failures[0])   # once
    lines = (tmp_path / "corpus.txt").read_text().splitlines()
    assert lines[0].startswith("# Mismatch") and json.loads(lines[1])["sql"] == case["sql"]


def test_tlp_predicates_read_the_output_columns_by_type():
    rng = random.Random(1)
    seen = {tlp_predicate(["integer", "boolean"], ["c0", "c1"], rng) for _ in range(50)}
    assert any("c1" in p and "c1 >" not in p for p in seen)   # the boolean column as a predicate
    assert all("c1 >" not in p and "c1 +" not in p for p in seen)
    assert tlp_predicate([], [], rng) == "true"


def _corpus() -> list[dict]:
    if not equivalence.CORPUS.exists():
        return []
    return [json.loads(line) for line in equivalence.CORPUS.read_text().splitlines() if line.startswith("{")]


@pytest.mark.parametrize("case", [c for c in _corpus() if c["family"] in FAMILIES] or [None],
                         ids=lambda c: c["sql"][:60] if c else "empty")
def test_corpus_cases_match(case, tmp_path):
    if case is None:
        pytest.skip("the corpus holds no case yet")
    family = FAMILIES[case["family"]]
    references = References(RandomTables(tmp_path, family.tables), tmp_path / "postgres")
    try:
        Checker(family, references.tables, references).check(case)
    finally:
        references.close()


def _saved_run(family: str, commit: str, cases: int, mismatches: int = 0, dirty: bool = False) -> dict:
    return {"benchmark": "equivalence", "family": family, "commit": commit, "uncommitted_changes": dirty,
            "seed": cases, "cases": cases, "mismatches": mismatches, "errors": 0, "plans_checked": 2 * cases,
            "tlp_checked": cases, "seconds": cases / 2, "cpu_seconds": cases / 4,
            "machine": {"when": "2026-11-23T09:00:00+00:00"}}


def test_the_summary_adds_up_runs_of_one_commit_only(tmp_path):
    from benchmarks.equivalence.summary import load_runs, markdown, totals

    runs = [_saved_run("reorder", "a" * 40, 6000), _saved_run("reorder", "a" * 40, 4500, mismatches=1),
            _saved_run("reorder", "b" * 40, 700), _saved_run("reorder", "a" * 40, 900, dirty=True),
            _saved_run("semijoin", "a" * 40, 10)]
    for i, run in enumerate(runs):
        (tmp_path / f"run{i}.json").write_text(json.dumps(run))
    (tmp_path / "other.json").write_text(json.dumps({"benchmark": "plan-space"}))
    found = {(t.commit, t.family): t for t in totals(load_runs(tmp_path))}
    assert set(found) == {("a" * 40, "reorder"), ("b" * 40, "reorder"), ("a" * 40 + "+uncommitted", "reorder"),
                          ("a" * 40, "semijoin")}
    mine = found[("a" * 40, "reorder")]
    assert (mine.runs, mine.cases, mine.mismatches, mine.plans) == (2, 10500, 1, 21000)
    assert mine.cases_per_second == 2.0 and mine.cases_per_cpu_second == 4.0
    table = markdown(list(found.values()))
    assert "| `aaaaaaaaaa` | reorder | 2 | 10,500 | 10,500 | 1 |" in table and "`aaaaaaaaaa+uncommitted`" in table


def test_the_results_readme_draws_the_summary(tmp_path):
    from benchmarks.results_readme import regenerate

    (tmp_path / "equivalence").mkdir()
    for i, cases in enumerate((3000, 7000)):
        (tmp_path / "equivalence" / f"r{i}.json").write_text(json.dumps(_saved_run("semijoin", "c" * 40, cases)))
    text = "<!-- table: equivalence equivalence/*.json -->\nstale\n<!-- /table -->\n"
    assert "| `cccccccccc` | semijoin | 2 | 10,000 | 10,000 | 0 |" in regenerate(text, tmp_path)


def test_a_duckdb_failure_renews_the_runs_connection_with_the_same_rows(tmp_path, monkeypatch):
    """DuckDB's internal error invalidates its database: the run's one connection is replaced
    and refilled with the case's rows (PostgreSQL, here unavailable, would answer instead)."""
    import duckdb

    from benchmarks.equivalence.tables import ReferenceUnavailable
    from tests.quick.test_reference_fallback import DUCKDB_FAILS, DUCKDB_FAILS_ON

    tables = RandomTables(tmp_path, {name: ("a", "b") for name in DUCKDB_FAILS_ON})
    references = References(tables, tmp_path / "postgres")

    def no_postgres(sql):  # type: ignore[no-untyped-def]
        raise ReferenceUnavailable("no PostgreSQL in this test")

    monkeypatch.setattr(references, "_run_postgres", no_postgres)
    references.load(DUCKDB_FAILS_ON)
    first = references._connection
    try:
        with pytest.raises(ReferenceUnavailable):
            references.run(DUCKDB_FAILS)
    except pytest.fail.Exception:
        pytest.skip("this DuckDB answers the query (the failure is fixed upstream)")
    assert references.duckdb_faults == 1 and references.unanswered == 1
    assert references._connection is not first
    assert references.run("select count(*) from t2") == [(3,)]
    references.close()
    assert isinstance(first, duckdb.DuckDBPyConnection)
