"""``benchmarks.spark_adaptive`` without Spark: its options, its summary of per-query records and
the results page's table of a saved run."""

from __future__ import annotations

import json

import pytest

from benchmarks import spark_adaptive
from benchmarks.results_readme import spark_adaptive_table
from cbo.errors import CboError


def record(workload: str, query: str, seconds: dict[str, float], stages: dict[str, int]) -> dict:
    off = seconds["off"]
    return {"workload": workload, "query": query, "seconds": seconds, "stages": stages,
            "tasks": {c: 2 * n for c, n in stages.items()}, "matches": {c: True for c in seconds if c != "off"},
            "problems": {}, "ratio": {c: s / off for c, s in seconds.items() if c != "off"}}


def test_the_summary_gives_ratios_to_off_per_workload_and_overall(tmp_path):
    records = [record("not-in", "null", {"off": 1.0, "preserving": 0.5}, {"off": 4, "preserving": 1}),
               record("tpch", "q01", {"off": 2.0, "preserving": 2.2}, {"off": 3, "preserving": 3}),
               {"workload": "tpch", "query": "q99", "refused": "window functions", "seconds": {}, "stages": {},
                "tasks": {}, "matches": {}, "problems": {}, "ratio": {}}]
    summary = spark_adaptive.summarize(records, ["off", "preserving"])
    assert summary["not-in"]["preserving"]["geomean_vs_off"] == 0.5
    assert summary["tpch"]["preserving"]["slower_by_5pct"] == 1 and summary["tpch"]["refused"] == 1
    assert summary["all"]["preserving"]["geomean_vs_off"] == pytest.approx((0.5 * 1.1) ** 0.5, abs=1e-4)
    assert summary["all"]["preserving"]["worst"] == ["q01", pytest.approx(1.1)]
    assert summary["all"]["off"] == {"stages": 7, "tasks": 14} and summary["all"]["preserving"]["stages"] == 4
    assert summary["all_answers_match"]
    saved = tmp_path / "spark-adaptive-sf1.json"
    saved.write_text(json.dumps({"benchmark": "spark-adaptive", "scale_factor": 1.0, "repeat": 3,
                                 "configs": {"off": "off", "preserving": "preserving"}, "chosen": "preserving",
                                 "summary": summary}))
    table = spark_adaptive_table([saved])
    assert "| not-in | preserving | 0.500 | 1 | 0 | null 0.50 | 1 | 2 |" in table
    assert "| all | off | 1 | | | | 7 | 14 |" in table


def test_a_mismatched_answer_fails_the_summary():
    bad = record("tpch", "q01", {"off": 1.0, "coalesce": 1.0}, {"off": 1, "coalesce": 1})
    bad["matches"]["coalesce"] = False
    assert not spark_adaptive.summarize([bad], ["off", "coalesce"])["all_answers_match"]


def test_unknown_workloads_and_configurations_are_named():
    with pytest.raises(CboError, match="unknown configuration bogus"):
        spark_adaptive._choose("off,bogus", tuple(spark_adaptive.CONFIGS), "configuration")
    assert spark_adaptive._choose(None, spark_adaptive.WORKLOADS, "workload") == list(spark_adaptive.WORKLOADS)
    assert [q.name for q in spark_adaptive.workload_queries("not-in")] == [n for n, _ in spark_adaptive.NOT_IN]
    assert len(spark_adaptive.workload_queries("tpch")) == 22
    assert len(spark_adaptive.workload_queries("existential")) == 15


def test_every_configuration_but_off_runs_adaptive_execution():
    assert spark_adaptive.CONFIGS["off"] == frozenset() and spark_adaptive.CONFIGS["preserving"]
    assert {c for c, f in spark_adaptive.CONFIGS.items() if len(f) == 1} == \
        {"coalesce", "skew_join", "local_read", "empty_relation"}
