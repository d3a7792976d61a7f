"""`python -m benchmarks.tpch.run` in a fresh cache collects cbo's statistics before it compares.

Without them cbo plans from default estimates and is compared as if it had them (issue 16).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cbo.sources.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[2]


def test_benchmark_collects_missing_statistics_first(tmp_path: Path):
    cache = tmp_path / "cache"
    out = tmp_path / "run.json"
    env = {**os.environ, "CBO_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    # cwd is the temporary directory: Spark's warehouse for the benchmark's tables goes there.
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.tpch.run", "--sf", "0.01", "--queries", "q6", "--configs", "cbo",
         "--repeat", "1", "--max-rounds", "1", "--budget", "0", "--out", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "collecting cbo's statistics" in result.stderr
    assert "[8/8]" in result.stderr  # progress per table
    report = json.loads(out.read_text())
    assert set(report["cbo_statistics"].values()) == {"collected"} and len(report["cbo_statistics"]) == 8

    from cbo.sources.statistics import load_all

    os.environ["CBO_CACHE_DIR"], saved = str(cache), os.environ["CBO_CACHE_DIR"]
    try:
        catalog = load_catalog(cache / "tpch" / "sf0.01" / "catalogs" / "all-spark.toml")
        stats, problems = load_all(catalog, check_fresh=True)
    finally:
        os.environ["CBO_CACHE_DIR"] = saved
    assert not problems and len(stats) == 8
