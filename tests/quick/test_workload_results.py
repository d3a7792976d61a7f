"""Result folders (written as they arrive, resumed only for the same experiment, a line cut short
dropped), the manifest (no credentials), and what ``compare`` and ``rerun`` read from two results:
plans that changed with their costs, estimates that moved beyond a factor, time ratios with their
spread, ratios to the saved figures within noise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cbo.app.workload import manifest as manifests
from cbo.app.workload.compare import compare, text
from cbo.app.workload.rerun import ratios
from cbo.app.workload.results import Result, ResultFolder, load, read_records
from cbo.errors import CboError
from cbo.sources.catalog import parse_catalog


def _manifest(configs: list[str] | None = None) -> dict:
    return {"started": "t0", "complete": False, "machine": {}, "experiment": {
        "workload": "w", "queries": [{"name": "q1", "digest": "d1"}, {"name": "q2", "digest": "d2"}],
        "configs": [{"label": c} for c in configs or ["cbo"]], "timing": {"repeat": 1}}}


def test_records_are_kept_across_an_interruption_and_resumed_only_for_the_same_experiment(tmp_path: Path):
    out = tmp_path / "run"
    folder = ResultFolder(out)
    assert folder.start(_manifest(), resume=False) == []
    folder.append({"query": "q1", "seconds": {"cbo": 1.0}})
    with (out / "results.jsonl").open("a") as handle:   # killed while writing the second record
        handle.write('{"query": "q2", "sec')
    assert [r["query"] for r in load(out).records] == ["q1"]
    with pytest.raises(CboError, match="already holds a run .incomplete: 1 queries measured.: add --resume"):
        ResultFolder(out).start(_manifest(), resume=False)
    with pytest.raises(CboError, match="holds another experiment .its configs differ."):
        ResultFolder(out).start(_manifest(["cbo", "duckdb"]), resume=True)
    again = {**_manifest(), "started": "t1"}
    kept = ResultFolder(out).start(again, resume=True)
    assert [r["query"] for r in kept] == ["q1"]
    assert again["started"] == "t0" and again["resumed"] == ["t1"]   # the run goes on with this manifest
    ResultFolder(out).append({"query": "q2", "seconds": {"cbo": 2.0}})
    assert [r["query"] for r in read_records(out / "results.jsonl")] == ["q1", "q2"]   # the cut line is gone
    resumed = json.loads((out / "manifest.json").read_text())
    assert resumed["started"] == "t0" and resumed["resumed"] == ["t1"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x").write_text("")
    with pytest.raises(CboError, match="exists and is not a result folder"):
        ResultFolder(tmp_path / "other").start(_manifest(), resume=False)


def test_a_benchmarks_json_report_loads_as_a_result(tmp_path: Path):
    path = tmp_path / "tpch-run.json"
    path.write_text(json.dumps({"benchmark": "tpch-run", "configs": ["cbo", "spark-default"],
                                "queries": [{"query": "q01", "seconds": {"cbo": 1.0}}]}))
    result = load(path)
    assert result.configs == ["cbo", "spark-default"] and result.record("q01")["seconds"] == {"cbo": 1.0}
    path.write_text("[1, 2]")
    with pytest.raises(CboError, match="without query records"):
        load(path)
    with pytest.raises(CboError, match="no such result"):
        load(tmp_path / "missing")


def test_the_catalog_in_a_manifest_has_no_credentials(tmp_path: Path):
    catalog = parse_catalog("""
[spark.conf]
"spark.sql.shuffle.partitions" = "4"
"spark.sql.catalog.x.password" = "hunter2"
[sources.pg]
type = "jdbc"
url = "jdbc:postgresql://alice:hunter2@db.example:5432/tpch?password=hunter2&ssl=true"
user = "alice"
password_env = "SECRET_PG_PASSWORD"
schema = "tpch"
[sources.pg.tables.nation]
parquet_copy = "nation.parquet"
""", tmp_path / "catalog.toml")
    described = json.dumps(manifests.describe_catalog(catalog))
    assert "hunter2" not in described and "alice" not in described and "SECRET_PG_PASSWORD" not in described
    assert "db.example:5432/tpch" in described and "spark.sql.shuffle.partitions" in described


def test_the_manifest_names_the_commit_and_compares_the_installed_packages_with_the_lock(tmp_path: Path):
    state = manifests.git_state()
    assert len(state["commit"]) == 40 and isinstance(state["dirty"], bool)
    lock = tmp_path / "constraints.txt"
    lock.write_text("# pins\nPyArrow==1.0.0\nnumpy==2.0 ; python_version >= '3.11'\n")
    assert manifests.read_lock(lock) == {"pyarrow": "1.0.0", "numpy": "2.0"}
    found = manifests.packages(manifests.CHECKOUT)
    assert found["installed"]["duckdb"] and found["lock"].endswith("constraints.txt")
    assert found["differs_from_lock"] == {}   # ./run installed exactly the lock


def _result(path: str, seconds: dict, times: dict, shape: str, estimates: dict, cost: float,
            failures: dict | None = None) -> Result:
    record = {"query": "q1", "seconds": seconds, "times": times, "failures": failures or {}, "timeouts": {},
              "problems": {}, "plans": {"cbo": {"shape": shape, "cost": cost, "estimates": estimates}}}
    return Result(Path(path), {"cbo": {"commit": path * 8}, "experiment": {"configs": [{"label": "cbo"},
                                                                                       {"label": "duckdb"}]}},
                  [record])


def test_compare_reports_changed_plans_moved_estimates_and_time_ratios_with_their_spread():
    a = _result("a", {"cbo": 1.0, "duckdb": 0.5}, {"cbo": [1.0, 1.2], "duckdb": [0.5, 0.6]},
                "- Join (broadcast_hash)", {"Join[a,b]": 100.0, "Scan[a]": 10.0}, 2.0)
    b = _result("b", {"cbo": 0.5, "duckdb": 0.55}, {"cbo": [0.5, 0.6], "duckdb": [0.55, 0.58]},
                "- Join (sort_merge)", {"Join[a,b]": 1000.0, "Scan[a]": 15.0}, 1.5, {"duckdb": "wrong_answer"})
    found = compare(a, b, factor=2.0)
    assert [(p["query"], p["config"], p["cost_a"], p["cost_b"]) for p in found.plans] == [("q1", "cbo", 2.0, 1.5)]
    assert "-- Join (broadcast_hash)" in found.plans[0]["diff"] and "+- Join (sort_merge)" in found.plans[0]["diff"]
    assert [(e["node"], e["ratio"]) for e in found.estimates] == [("Join[a,b]", 10.0)]   # Scan moved 1.5x only
    cbo = next(t for t in found.times if t["config"] == "cbo")
    assert cbo["ratio"] == 0.5 and cbo["spread"] == [0.5 / 1.2, 0.6 / 1.0]   # beyond noise: 1 not inside
    duck = next(t for t in found.times if t["config"] == "duckdb")
    assert duck["spread"][0] <= 1.0 <= duck["spread"][1]
    assert found.time_summary()["cbo"]["beyond_noise"] == 1 and found.time_summary()["duckdb"]["beyond_noise"] == 0
    assert found.answers == [{"query": "q1", "config": "duckdb", "a": "ok", "b": "wrong_answer",
                              "problem_a": None, "problem_b": None}]
    report = text(found)
    assert "Plans: 1 of 1 changed" in report and "cost 2 -> 1.5 (0.75x)" in report
    assert "Join[a,b]: 100 -> 1,000 (10x)" in report and "A ok, B wrong_answer" in report
    assert compare(a, a).plans == [] and compare(a, a).estimates == []


def test_rerun_ratios_are_within_noise_inside_both_runs_spread():
    saved = _result("a", {"cbo": 1.0}, {"cbo": [1.0, 1.3]}, "", {}, 1.0)
    again = _result("b", {"cbo": 1.2}, {"cbo": [1.2, 1.25]}, "", {}, 1.0)
    [figure] = ratios(saved, again)
    assert figure["ratio"] == pytest.approx(1.2) and figure["band"] == pytest.approx(1.3) and figure["within_noise"]
    slower = _result("b", {"cbo": 2.0}, {"cbo": [2.0, 2.1]}, "", {}, 1.0)
    assert not ratios(saved, slower)[0]["within_noise"]


def test_every_column_of_the_dataset_is_documented():
    from cbo.app.workload.dataset import NODE_FIELDS, PLAN_FIELDS, schema

    guide = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "workloads.md").read_text()
    missing = [name for name, _, _ in PLAN_FIELDS + NODE_FIELDS if f"`{name}`" not in guide]
    assert not missing, f"docs/guide/workloads.md does not describe {missing}"
    plans = schema(PLAN_FIELDS)
    assert plans.metadata[b"format"] == b"cbo-dataset/1"
    assert all(field.metadata[b"description"] for field in plans)
