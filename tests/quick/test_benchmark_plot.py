"""The baseline plot reads saved reports and draws every engine, timeouts included."""

from __future__ import annotations

import json

from benchmarks.tpch import plot


def report(engine: str, placement: str, seconds: list[float], statuses: list[str]) -> dict:
    return {"benchmark": "tpch-native", "engine": engine, "placement": placement, "scale_factor": 1.0,
            "machine": {"cores": 2, "memory_gib": 24.0},
            "queries": [{"query": f"q{i + 1:02d}", "seconds": s, "status": st}
                        for i, (s, st) in enumerate(zip(seconds, statuses))]}


def test_plot_writes_a_png_from_saved_reports(tmp_path):
    (tmp_path / "native-duckdb-all-spark-sf1.json").write_text(
        json.dumps(report("duckdb", "all-spark", [0.1, 0.2, 0.3], ["ok", "ok", "ok"])))
    (tmp_path / "native-postgres-all-postgres-sf1.json").write_text(
        json.dumps(report("postgres", "all-postgres", [1.0, 300.0, 2.0], ["ok", "timeout", "error"])))
    reports = plot.load(1.0, tmp_path)
    assert [r["engine"] for r in reports] == ["duckdb", "postgres"]
    out = tmp_path / "plot.png"
    plot.plot(reports, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
