"""``python -m benchmarks`` lists every benchmark, found from the files (no hard-coded list)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchmarks.index import discover, first_sentence

ROOT = Path(__file__).resolve().parents[2]


def test_every_benchmark_package_and_script_is_listed():
    found = {b.module: b.description for b in discover()}
    packages = {f"benchmarks.{p.parent.name}" for p in (ROOT / "benchmarks").glob("*/__main__.py")}
    assert packages and packages <= set(found)
    assert "benchmarks.tpch.run" in found and "benchmarks.stats_collection" in found
    # helpers that are not benchmarks stay out
    assert not {"benchmarks.cli", "benchmarks.machine", "benchmarks.index", "benchmarks.tpch.queries"} & set(found)
    assert all(found.values()), [m for m, d in found.items() if not d]


def test_a_new_benchmark_is_discovered(tmp_path: Path):
    package = tmp_path / "newbench"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text('"""Measure the new thing. More prose here.\n\nDetails."""\n')
    (tmp_path / "helper.py").write_text('"""Not a benchmark: no main block."""\n')
    (tmp_path / "script.py").write_text('"""A script, e.g. a plot.\n"""\nif __name__ == "__main__":\n    pass\n')
    found = {b.module: b.description for b in discover(tmp_path, "pkg")}
    assert found == {"pkg.newbench": "Measure the new thing.", "pkg.script": "A script, e.g. a plot."}


def test_first_sentence():
    assert first_sentence("One line\ncontinued. Second.\n\nMore.") == "One line continued."
    assert first_sentence("Uses ``a.b`` inside: fine") == "Uses ``a.b`` inside: fine"


def test_the_command_prints_the_index():
    out = subprocess.run([sys.executable, "-m", "benchmarks"], cwd=ROOT, capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert any(line.startswith("python -m benchmarks.join_enumeration ") for line in lines)
    assert all(len(line.split(None, 3)) == 4 for line in lines)   # command and description on every line
