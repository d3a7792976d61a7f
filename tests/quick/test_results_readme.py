"""``docs/results.md``'s tables are the saved JSON's: regenerating changes nothing.

A branch that adds or re-runs a benchmark result regenerates the page in the same commit
(one command, below); a table edited by hand, or a JSON replaced without regenerating, fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import results_readme
from benchmarks.results_readme import COMMAND, README, RESULTS, ReadmeError, regenerate


def test_committed_readme_equals_the_regenerated_one():
    current = README.read_text()
    assert results_readme.MARKER.findall(current), "the page has no generated tables"
    assert regenerate(current) == current, (
        f"docs/results.md's tables differ from the saved JSON: regenerate them with `{COMMAND}` "
        "(or `python -m benchmarks --write-readme`) and commit the result")


def test_every_saved_json_is_listed():
    current = README.read_text()
    for path in RESULTS.glob("*.json"):
        assert f"`{path.name}`" in current, path.name


def test_a_changed_result_changes_its_table(tmp_path: Path):
    """The check can fail: a figure changed in the JSON shows in the regenerated table."""
    body = json.loads((RESULTS / "stats-collection-sf1.json").read_text())
    body["tables"][0]["cbo_spark_s"] = 123.456
    (tmp_path / "stats-collection-sf1.json").write_text(json.dumps(body))
    text = "intro\n<!-- table: stats-collection stats-collection-sf1.json -->\nstale\n<!-- /table -->\nend\n"
    fresh = regenerate(text, tmp_path)
    assert "| region | 123.46 |" in fresh and "stale" not in fresh
    assert fresh.startswith("intro\n") and fresh.endswith("<!-- /table -->\nend\n")
    assert regenerate(fresh, tmp_path) == fresh


@pytest.mark.parametrize("spec, message", [("nonsense x.json", "unknown kind 'nonsense'"),
                                           ("native missing-*.json", "no file")])
def test_a_bad_marker_is_named(tmp_path: Path, spec: str, message: str):
    with pytest.raises(ReadmeError, match=message):
        regenerate(f"<!-- table: {spec} -->\n<!-- /table -->\n", tmp_path)


def test_check_mode_reports_drift(tmp_path: Path, capsys):
    results = tmp_path / "results"
    results.mkdir()
    body = json.loads((RESULTS / "stats-collection-sf1.json").read_text())
    body["tables"][0]["cbo_spark_s"] = 123.456   # differs from the saved result: read from --results
    (results / "stats-collection-sf1.json").write_text(json.dumps(body))
    page = tmp_path / "results.md"
    page.write_text("<!-- table: stats-collection stats-collection-sf1.json -->\nold\n<!-- /table -->\n")
    options = ["--readme", str(page), "--results", str(results)]
    assert results_readme.main(["--check", *options]) == 1
    assert COMMAND in capsys.readouterr().out
    assert results_readme.main(options) == 0
    assert "| region | 123.46 |" in page.read_text()
    assert results_readme.main(["--check", *options]) == 0


def test_the_page_is_the_docs_results_page():
    assert README == Path(results_readme.__file__).resolve().parents[1] / "docs" / "results.md"


def test_a_timed_out_query_says_so(tmp_path: Path):
    """A configuration cancelled by its timeout shows "timeout", never a blank like a missing one."""
    run = {"configs": ["cbo", "postgres"],
           "queries": [{"query": "q17", "seconds": {"cbo": 1.5}, "timeouts": {"postgres": 10.0}, "rounds": 1},
                       {"query": "q18", "seconds": {"cbo": 2.0}, "rounds": 1}]}
    (tmp_path / "run.json").write_text(json.dumps(run))
    table = regenerate("<!-- table: tpch-run run.json -->\n<!-- /table -->\n", tmp_path)
    assert "| q17 | 1 | 1.500 | timeout (10 s) |" in table
    assert "| q18 | 1 | 2.000 | — |" in table


def test_the_forms_of_an_existential_query_are_named(tmp_path: Path):
    body = json.loads((RESULTS / "existential-sf1.json").read_text())
    (tmp_path / "e.json").write_text(json.dumps(body))
    table = regenerate("<!-- table: existential e.json -->\n<!-- /table -->\n", tmp_path)
    assert "| case | Spark | DISTINCT above | DISTINCT below | semi join | cbo free | free chose |" in table
    assert "3.1" not in table and "3.2" not in table
