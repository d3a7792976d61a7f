"""``benchmarks/results/README.md``'s tables are the saved JSON's: regenerating changes nothing.

A branch that adds or re-runs a benchmark result regenerates the README in the same commit
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
    assert results_readme.MARKER.findall(current), "the README has no generated tables"
    assert regenerate(current) == current, (
        f"benchmarks/results/README.md's tables differ from the saved JSON: regenerate them with `{COMMAND}` "
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
    (tmp_path / "stats-collection-sf1.json").write_text((RESULTS / "stats-collection-sf1.json").read_text())
    readme = tmp_path / "README.md"
    readme.write_text("<!-- table: stats-collection stats-collection-sf1.json -->\nold\n<!-- /table -->\n")
    assert results_readme.main(["--check", "--readme", str(readme)]) == 1
    assert COMMAND in capsys.readouterr().out
    assert results_readme.main(["--readme", str(readme)]) == 0
    assert results_readme.main(["--check", "--readme", str(readme)]) == 0
