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
