"""The main job, ``cbo demo``, end to end through the CLI on a few queries."""

from __future__ import annotations

import subprocess
import sys


def test_demo_runs_and_checks_answers(tpch_catalogs):
    result = subprocess.run([sys.executable, "-m", "cbo", "demo", "--sf", "0.01", "--queries", "q1,q13,q22"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "3/3 answers match DuckDB" in result.stdout
    lines = [line for line in result.stdout.splitlines() if line[:1] == "q" and line[1:3].isdigit()]
    assert [line.split()[0] for line in lines] == ["q01", "q13", "q22"]
    assert all(" match " in line for line in lines)
    assert "[3/3] q22" in result.stderr  # progress is shown
    assert "warming up Spark: q01 once through each planner, untimed" in result.stderr
