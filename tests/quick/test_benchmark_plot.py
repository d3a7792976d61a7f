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


def test_short_queries_get_more_timed_rounds():
    from benchmarks.tpch.run import planned_rounds

    assert planned_rounds(3, 9, 10.0, 1.6) == 6      # a 0.4 s query in four configurations
    assert planned_rounds(3, 9, 10.0, 0.2) == 9      # capped
    assert planned_rounds(3, 9, 10.0, 20.0) == 3     # long queries keep --repeat
    assert planned_rounds(1, 9, 0.0, 1.0) == 1       # no budget: exactly --repeat


class _Counting:
    """Runs a configuration's query by returning fixed rows, counting the runs (no engine: this
    checks the driver's bookkeeping of warm-up and timed runs, not any engine's time)."""

    def __init__(self) -> None:
        self.runs: dict[str, int] = {}
        self.postgres = None

    def runner(self, config: str, sql: str):  # type: ignore[no-untyped-def]
        def run() -> list[tuple]:
            self.runs[config] = self.runs.get(config, 0) + 1
            return [(1,)]
        return run

    def run(self, sql: str):  # type: ignore[no-untyped-def]   # the reference engine
        return ["x"], [(1,)], None


def test_a_long_warm_up_run_is_kept_as_the_time_and_not_repeated():
    from benchmarks.tpch.queries import all_queries
    from benchmarks.tpch.run import run_query

    query = all_queries()[5]
    configs = ["spark-default", "spark-dsv2"]
    plain = _Counting()
    record = run_query(query, configs, 2, {}, plain, plain, max_rounds=2)   # type: ignore[arg-type]
    # q06 starts with spark-dsv2 (the order rotates by query number), which also makes the cold run
    assert plain.runs == {"spark-default": 3, "spark-dsv2": 4}   # a warm-up, then two timed rounds
    assert all(len(record["times"][c]) == 2 for c in configs) and "warm_up_kept" not in record
    # every warm-up run is longer than 0 s: each is kept, timed and checked, and not run again
    kept = _Counting()
    record = run_query(query, configs, 2, {}, kept, kept, max_rounds=2, long_warm_up=0.0)   # type: ignore[arg-type]
    assert kept.runs == {"spark-default": 1, "spark-dsv2": 2}
    assert record["warm_up_kept"] == sorted(configs) and all(len(record["times"][c]) == 1 for c in configs)
    assert all(record["matches"].values()) and set(record["seconds"]) == set(configs)
    # no warm-up that long: as without the option
    short = _Counting()
    record = run_query(query, configs, 2, {}, short, short, max_rounds=2, long_warm_up=1e9)   # type: ignore[arg-type]
    assert short.runs == {"spark-default": 3, "spark-dsv2": 4}
    assert all(len(record["times"][c]) == 2 for c in configs) and "warm_up_kept" not in record
