"""The end-to-end TPC-H benchmark over the all-postgres placement at SF 0.01: Spark's DSv2 JDBC
catalogs with join pushdown and PostgreSQL alone run beside cbo, answers are checked against
DuckDB, a query PostgreSQL does not finish in time is recorded as a timeout, and no credential
reaches the saved report."""

from __future__ import annotations

import json

import pytest

from benchmarks.tpch import run
from benchmarks.tpch.baselines import DSV2_JOIN_PUSHDOWN, SparkTables
from cbo.sources.catalog import load_catalog

CONFIGS = ["cbo", "spark-default", "spark-dsv2", "postgres"]


@pytest.fixture(scope="module")
def report(spark, tpch_catalogs, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "run.json"
    code = run.main(["--sf", "0.01", "--placement", "all-postgres", "--configs", ",".join(CONFIGS),
                     "--queries", "q3,q12", "--repeat", "1", "--max-rounds", "1", "--out", str(out)])
    assert code == 0
    return out


def test_every_configuration_answers_as_duckdb(report):
    body = json.loads(report.read_text())
    assert body["placement"] == "all-postgres" and body["configs"] == CONFIGS and body["complete"] is True
    assert [r["query"] for r in body["queries"]] == ["q03", "q12"]
    for record in body["queries"]:
        assert record["matches"] == {c: True for c in CONFIGS}, record["problems"]
        assert set(record["seconds"]) == set(CONFIGS)
        assert all(v > 0 for v in record["seconds"].values())
        assert record["timeouts"] == {}
    summary = body["summary"]
    for key in ("cbo_vs_spark_default", "cbo_vs_spark_dsv2", "cbo_vs_faster_spark", "worst_cbo_vs_faster_spark",
                "cbo_vs_postgres"):
        assert summary[key] > 0, key
    assert summary["timeouts"] == {} and summary["all_answers_match"] is True
    assert body["postgres_timeout_s"] == 300.0
    assert report.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_credential_in_the_report_or_the_spark_settings(report, spark, tpch_catalogs):
    source = load_catalog(tpch_catalogs["all-postgres"]).sources["pg"]
    password = source.password()
    assert password and password not in report.read_text()
    assert spark.conf.get("spark.sql.catalog.cbo_dsv2_pg.password", None) is None
    assert spark.conf.get("spark.sql.catalog.cbo_dsv2_pg", None) is not None


def test_spark_dsv2_pushes_the_join_into_postgres(report, spark, tpch_catalogs):
    """The dsv2 configuration measures Spark's own join pushdown: a two-table join is one scan."""
    tables = SparkTables(spark, load_catalog(tpch_catalogs["all-postgres"]))
    tables.prepare_views("dsv2")
    tables.run_views("dsv2", "select 1", {})
    sql = "select o_orderpriority, count(*) from orders join lineitem on l_orderkey = o_orderkey group by 1"
    spark.conf.set(DSV2_JOIN_PUSHDOWN, "true")
    try:
        plan = spark.sql(sql)._jdf.queryExecution().executedPlan().toString()
    finally:
        spark.conf.unset(DSV2_JOIN_PUSHDOWN)
    print(plan)
    assert "Join" not in plan.replace("PushedJoin", ""), plan


def test_a_query_postgres_does_not_finish_is_a_timeout(spark, tpch_catalogs, tmp_path):
    out = tmp_path / "timeout.json"
    code = run.main(["--sf", "0.01", "--placement", "all-postgres", "--configs", "postgres", "--queries", "q20",
                     "--repeat", "1", "--max-rounds", "1", "--postgres-timeout", "0.001", "--out", str(out)])
    assert code == 0
    body = json.loads(out.read_text())
    [record] = body["queries"]
    assert record["timeouts"] == {"postgres": 0.001}
    assert record["seconds"] == {} and "postgres" not in record["times"]
    assert body["summary"]["timeouts"] == {"postgres": ["q20"]}
    assert body["summary"]["geomean_seconds"]["postgres"] is None
