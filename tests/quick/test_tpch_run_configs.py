"""The end-to-end benchmark's configurations: checked before anything starts, and a timeout kept
out of the geometric means."""

from __future__ import annotations

import pytest

from benchmarks.tpch import run
from cbo.errors import CboError


def test_a_setting_this_cbo_lacks_stops_the_run_naming_it(monkeypatch):
    monkeypatch.setitem(run.CBO_SETTINGS, "cbo-eager", {"no_such_pushdown_setting": "eager"})
    with pytest.raises(CboError, match="cbo-eager needs cbo's setting no_such_pushdown_setting=eager"):
        run.check_configs(["cbo", "cbo-eager"], "all-postgres")


def test_configurations_that_do_not_apply_to_the_placement_are_refused():
    with pytest.raises(CboError, match="postgres runs only with placement all-postgres"):
        run.check_configs(["postgres"], "federated")
    with pytest.raises(CboError, match="spark-cbo runs only with placement all-spark"):
        run.check_configs(["spark-cbo"], "all-postgres")
    with pytest.raises(CboError, match="unknown configuration"):
        run.check_configs(["spark-fast"], "all-spark")
    run.check_configs(["cbo", "spark-default", "spark-dsv2", "postgres"], "all-postgres")


def test_defaults_by_placement():
    assert run.default_configs("all-spark") == ["cbo", "cbo-oracle", "spark-default", "spark-cbo"]
    assert run.default_configs("federated")[-1] == "spark-dsv2"
    assert run.default_configs("all-postgres")[-1] == "postgres"


def record(name: str, seconds: dict, timeouts: dict | None = None) -> dict:
    return {"query": name, "seconds": seconds, "timeouts": timeouts or {}, "matches": {c: True for c in seconds},
            "problems": {}}


def test_summary_ratios_and_timeouts():
    configs = ["cbo", "cbo-eager", "cbo-local", "spark-default", "spark-dsv2", "postgres"]
    records = [
        record("q01", {"cbo": 1.0, "cbo-eager": 1.0, "cbo-local": 2.0, "spark-default": 4.0, "spark-dsv2": 2.0,
                       "postgres": 0.5}),
        record("q17", {"cbo": 2.0, "cbo-eager": 4.0, "cbo-local": 1.0, "spark-default": 2.0, "spark-dsv2": 8.0},
               timeouts={"postgres": 60.0}),
    ]
    summary = run.summarize(records, configs)
    assert summary["cbo_vs_spark_default"] == pytest.approx((0.25 * 1.0) ** 0.5)
    assert summary["cbo_vs_spark_dsv2"] == pytest.approx((0.5 * 0.25) ** 0.5)
    assert summary["cbo_vs_faster_spark"] == pytest.approx((0.5 * 1.0) ** 0.5)
    assert summary["worst_cbo_vs_faster_spark"] == pytest.approx(1.0)
    assert summary["automatic_vs_better_forced"] == pytest.approx((1.0 * 2.0) ** 0.5)
    assert summary["worst_automatic_vs_better_forced"] == pytest.approx(2.0)
    # The cancelled query is reported, and neither a time nor a ratio.
    assert summary["timeouts"] == {"postgres": ["q17"]}
    assert summary["geomean_seconds"]["postgres"] == pytest.approx(0.5)
    assert summary["cbo_vs_postgres"] == pytest.approx(2.0)
    assert records[1]["automatic_vs_better_forced"] == 2.0


def test_plot_draws_timeouts(tmp_path):
    from benchmarks.tpch.plot_run import plot

    records = [record("q01", {"cbo": 1.0, "postgres": 0.5}), record("q17", {"cbo": 2.0}, {"postgres": 60.0})]
    report = {"configs": ["cbo", "postgres"], "queries": records, "scale_factor": 1.0, "placement": "all-postgres",
              "summary": run.summarize(records, ["cbo", "postgres"])}
    out = tmp_path / "run.png"
    plot(report, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_report_of_runner_records_keeps_the_form_results_readme_reads(tmp_path):
    """The benchmark's records are the workload runner's (``timing.measure``), with the keys its
    JSON always had beside them (``legacy``): the results page draws its table from them."""
    import itertools
    import json

    from benchmarks.results_readme import tpch_run_table
    from cbo.app.workload.timing import TimingRules, measure, new_record

    configs = ["cbo", "cbo-oracle", "spark-default"]
    records = []
    for position, name in enumerate(["q01", "q02"]):
        record = new_record(name)
        record["plans"] = {c: {"plan_ms": 1.5, "cost": 2.0, "partitions": 4, "shape": "- Scan[t]"}
                           for c in ("cbo", "cbo-oracle")}
        ticks = itertools.count()   # a clock that moves one second per reading: every run takes 1 s
        measure(record, position, {c: (lambda: [(1,)]) for c in configs}, [(1,)], False, TimingRules(1, 1, 0.0),
                clock=lambda ticks=ticks: float(next(ticks)))
        records.append(run.legacy(record, configs))
    assert records[0]["plan_ms"] == 1.5 and records[0]["cbo_cost"] == 2.0 and records[0]["oracle_cost"] == 2.0
    assert records[0]["same_plan_as_oracle"] is True
    report = {"benchmark": "tpch-run", "configs": configs, "queries": records,
              "summary": run.summarize(records, configs)}
    path = tmp_path / "tpch-run-all-spark-sf1.json"
    path.write_text(json.dumps(report))
    table = tpch_run_table([path])
    assert table.splitlines()[0] == "| query | rounds | cbo | cbo-oracle | spark-default | cbo / faster Spark |"
    assert table.splitlines()[2].startswith("| q01 | 1 | ") and "every answer matches DuckDB" in table
