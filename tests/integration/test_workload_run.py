"""``cbo workload run``, ``rerun`` and ``compare`` on real engines at TPC-H SF 0.01: a folder of
hand-written queries in cbo, Spark's optimizer, cbo with true cardinalities and DuckDB, every
answer checked; a run past its time limit cancelled on Spark and DuckDB and recorded as a
timeout; a wrong answer reported as such; an interrupted run resumed. The figures are small and
noisy: the tests assert the results' structure, never a speed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
import tomli_w

from cbo.app.cli import main
from cbo.app.workload.compare import compare
from cbo.app.workload.results import load

ROOT = Path(__file__).resolve().parents[2]
QUERIES = {
    "revenue_by_nation.sql": "select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue\n"
                             "from lineitem join orders on l_orderkey = o_orderkey\n"
                             "join customer on o_custkey = c_custkey join nation on c_nationkey = n_nationkey\n"
                             "group by n_name order by revenue desc",
    "big_customers.sql": "-- customers with more than 20 orders\n"
                         "select c_name, count(*) as orders from customer join orders on o_custkey = c_custkey\n"
                         "group by c_name having count(*) > 20 order by orders desc, c_name",
    "brass_parts.sql": "select count(*) from part where p_type like '%BRASS' and p_size between 10 and 20;\n",
}
CONFIGS = ["cbo", "spark-default", "cbo:cardinalities=oracle", "duckdb"]
FAST = ["--repeat", "1", "--max-rounds", "1", "--budget", "0"]
# A three-way cross join: 9e10 triples at SF 0.01, minutes on any engine.
SLOW = "select count(*) from lineitem a, lineitem b, nation n where a.l_quantity + b.l_quantity > n.n_nationkey"
# A two-way cross join comparing strings: 3.6e9 pairs, minutes on Spark. Spark stops a cancelled
# task only when it next reads a batch of 4,096 rows, which here is a few seconds of work (in
# SLOW's plan it is minutes: the runner waits for such tasks before the next run).
SLOW_ON_SPARK = "select count(*) from lineitem a, lineitem b where a.l_comment < b.l_comment"


def folder(tmp_path: Path, name: str, queries: dict[str, str]) -> Path:
    where = tmp_path / name
    where.mkdir()
    for file, text in queries.items():
        (where / file).write_text(text)
    return where


@pytest.fixture(scope="module")
def first_run(spark, tmp_path_factory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("workload")
    source = folder(tmp, "hand-written", QUERIES)
    out = tmp / "run"
    return out, _run(["workload", "run", str(source), "--catalog", "tpch", "--sf", "0.01",
                      "--configs", ",".join(CONFIGS), "--out", str(out), *FAST])


def _run(argv: list[str], expect: int = 0) -> str:
    import contextlib
    import io

    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(argv)
    assert code == expect, stdout.getvalue()
    return stdout.getvalue()


def test_a_folder_of_queries_runs_in_every_configuration_with_its_answers_checked(first_run):
    out, stdout = first_run
    result = load(out)
    assert [r["query"] for r in result.records] == ["big_customers", "brass_parts", "revenue_by_nation"]
    for record in result.records:
        assert record["matches"] == {c: True for c in CONFIGS}, record["problems"]
        assert set(record["seconds"]) == set(CONFIGS) and record["failures"] == {} and record["timeouts"] == {}
        assert record["checked"] and record["reference"]["rows"] >= 1
        assert sorted(record["order"]) == sorted(CONFIGS) and record["rounds"] == 1 and "cold_run_s" in record
        for config in ("cbo", "cbo:cardinalities=oracle"):
            plan = record["plans"][config]
            assert plan["cost"] > 0 and plan["shape"] and plan["estimates"] and plan["partitions"]
        assert record["plans"]["cbo"]["planning_timed"] and not record["plans"]["cbo:cardinalities=oracle"][
            "planning_timed"]
        assert set(record["plans"]) == {"cbo", "cbo:cardinalities=oracle"}
    lines = stdout.splitlines()
    assert lines[0].split() == ["query", *CONFIGS, "answers"]
    assert [line.split()[0] for line in lines[1:4]] == ["big_customers", "brass_parts", "revenue_by_nation"]
    assert all(line.endswith("ok") for line in lines[1:4])
    assert "all answers match the reference: yes" in stdout


def test_the_manifest_says_what_the_figures_depend_on(first_run, tpch_catalogs):
    out, _ = first_run
    manifest = load(out).manifest
    assert manifest["complete"] is True and manifest["finished"]
    assert len(manifest["cbo"]["commit"]) == 40 and isinstance(manifest["cbo"]["dirty"], bool)
    assert manifest["packages"]["installed"]["pyspark"] and manifest["packages"]["differs_from_lock"] == {}
    assert "version" in manifest["java"]
    assert set(manifest["configurations"]) == {"cbo", "cbo:cardinalities=oracle"}
    oracle = manifest["configurations"]["cbo:cardinalities=oracle"]
    assert oracle["settings"]["cardinalities"] == "oracle" and oracle["settings"]["max_reordered_joins"] == 12
    assert oracle["cost_profile"]["digest"] == manifest["configurations"]["cbo"]["cost_profile"]["digest"]
    assert len(manifest["statistics"]) == 8
    assert all(s["fingerprint"].startswith("files:") and s["digest"] for s in manifest["statistics"].values())
    assert manifest["catalog"]["sources"]["lake"]["tables"]["lineitem"]["path"].endswith("lineitem.parquet")
    machine = manifest["machine"]
    assert machine["cores"] >= 1 and len(machine["load_start"]) == 3 and len(machine["load_end"]) == 3
    assert manifest["experiment"]["spec"]["catalog_file"] == "tpch"
    assert manifest["summary"]["all_answers_match"] and set(manifest["summary"]["geomean_seconds"]) == set(CONFIGS)
    assert manifest["setup"]["spark_settings"]["spark.sql.ansi.enabled"]


def test_rerun_repeats_the_experiment_and_compares_each_figure(first_run, tmp_path):
    out, _ = first_run
    again = tmp_path / "again"
    stdout = _run(["workload", "rerun", str(out), "--out", str(again)])
    assert f"rerun of {out} in {again}" in stdout
    figures = [line for line in stdout.splitlines() if line.startswith("  ") and "x/÷" in line]
    assert len(figures) == 3 * len(CONFIGS)
    for config in CONFIGS:
        assert f"  {config}: geometric mean ratio " in stdout
    saved, new = load(out), load(again)
    assert new.experiment["spec"] == saved.experiment["spec"]
    comparison = compare(saved, new)
    # the same commit and statistics: the same plans, and every answer right again
    assert comparison.plans == [] and comparison.same_plans == 3 * 2 and comparison.answers == []
    assert len(comparison.times) == 3 * len(CONFIGS)
    shown = json.loads(_run(["workload", "compare", str(out), str(again), "--format", "json"]))
    assert shown["changed_plans"] == [] and shown["same_plans"] == 6


def test_a_run_past_its_limit_is_cancelled_on_spark_and_recorded_and_the_run_goes_on(spark, tmp_path):
    """(DuckDB's limit: the interrupted run's test.)"""
    source = folder(tmp_path, "limits", {"a_slow.sql": SLOW_ON_SPARK, "b_fast.sql": "select count(*) from region"})
    out = tmp_path / "run"
    started = time.perf_counter()
    stdout = _run(["workload", "run", str(source), "--catalog", "tpch", "--sf", "0.01", "--configs", "cbo",
                   "--timeout", "8", "--out", str(out), *FAST])
    assert time.perf_counter() - started < 600   # cancelled: the cross join would take far longer
    slow, fast = load(out).records
    assert slow["timeouts"] == {"cbo": 8.0} and slow["seconds"] == {} and slow["times"] == {}
    assert slow["failures"] == {"cbo": "timeout"} and slow["problems"] == {}
    # Spark answers the next query after the cancelled one, within the limit
    assert fast["matches"] == {"cbo": True} and set(fast["seconds"]) == {"cbo"} and fast["timeouts"] == {}
    assert load(out).manifest["summary"]["timeouts"] == {"cbo": ["a_slow"]}
    assert ">8 s" in stdout


def test_a_wrong_answer_is_reported_as_such(spark, tpch_catalogs, tmp_path):
    """The reference answers from the catalog's Parquet copy of the PostgreSQL table; a copy that
    lost a row (stale) makes every configuration that reads PostgreSQL answer differently from
    the reference: a real mismatch, reported per configuration and query."""
    import duckdb

    document = tomllib.loads(Path(tpch_catalogs["all-postgres"]).read_text())
    pg = document["sources"]["pg"]
    pg["tables"] = {t: pg["tables"][t] for t in ("nation", "region")}
    stale = tmp_path / "nation-stale.parquet"
    duckdb.connect().execute(f"copy (select * from read_parquet('{pg['tables']['nation']['parquet_copy']}') "
                             f"where n_name <> 'CANADA') to '{stale}' (format parquet)")
    pg["tables"]["nation"]["parquet_copy"] = str(stale)
    catalog = tmp_path / "stale.toml"
    catalog.write_text(tomli_w.dumps(document))
    source = folder(tmp_path, "stale", {"america.sql": "select n_name from nation where n_regionkey = 1",
                                        "regions.sql": "select r_name from region order by r_name"})
    out = tmp_path / "run"
    stdout = _run(["workload", "run", str(source), "--catalog", str(catalog), "--configs", "cbo,postgres,duckdb",
                   "--out", str(out), *FAST], expect=1)
    america, regions = load(out).records
    assert america["failures"] == {"cbo": "wrong_answer", "postgres": "wrong_answer"}
    assert america["problems"]["cbo"] == "5 rows, expected 4" and america["matches"]["duckdb"] is True
    assert regions["matches"] == {"cbo": True, "postgres": True, "duckdb": True}
    summary = load(out).manifest["summary"]
    assert summary["all_answers_match"] is False
    assert summary["failures"] == {"cbo": {"wrong_answer": ["america"]}, "postgres": {"wrong_answer": ["america"]}}
    assert "WRONG" in stdout and "cbo: 5 rows, expected 4" in stdout


def test_an_interrupted_run_keeps_what_it_measured_and_resumes(tpch_parquet_catalog, tmp_path):
    source = folder(tmp_path, "three", {"q1.sql": "select count(*) from nation", "q2.sql": SLOW,
                                        "q3.sql": "select r_name from region order by r_name"})
    out = tmp_path / "run"
    command = [sys.executable, "-m", "cbo", "workload", "run", str(source), "--catalog", str(tpch_parquet_catalog),
               "--configs", "duckdb", "--timeout", "5", "--out", str(out), *FAST]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    records = out / "results.jsonl"
    deadline = time.monotonic() + 300
    while not (records.exists() and records.read_text().count("\n") >= 1):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the first query never finished"
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)   # q2 runs now (at least 5 s: the reference's limit, then its own)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "interrupted: 1 of 3 queries kept" in stderr and "--resume" in stderr
    kept = records.read_text()
    assert [json.loads(line)["query"] for line in kept.splitlines()] == ["q1"]
    manifest = load(out).manifest
    assert manifest["complete"] is False and manifest["interrupted"]

    again = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "add --resume to continue it" in again.stderr
    resumed = subprocess.run(command + ["--resume"], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stderr and "1 of 3 queries already measured" in resumed.stderr
    assert records.read_text().startswith(kept)   # what was measured is kept as it was
    result = load(out)
    assert [r["query"] for r in result.records] == ["q1", "q2", "q3"]
    assert result.record("q2")["timeouts"] == {"duckdb": 5.0} and result.record("q3")["matches"] == {"duckdb": True}
    assert result.manifest["complete"] is True and len(result.manifest["resumed"]) == 1
