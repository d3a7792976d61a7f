"""``cbo query`` and ``cbo explain`` from the command line, on the federated TPC-H placement."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys

from cbo.sources.catalog import load_catalog


def cbo(*args: str, catalog) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return subprocess.run([sys.executable, "-m", "cbo", *args[:1], "--catalog", str(catalog), *args[1:]],
                          capture_output=True, text=True, timeout=600)


def test_query_csv_has_a_header_and_one_line_per_row(tpch_catalogs):
    result = cbo("query", "--engine", "duckdb", "--format", "csv",
                 "select r_regionkey, r_name from region order by r_regionkey", catalog=tpch_catalogs["federated"])
    assert result.returncode == 0, result.stderr
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == ["r_regionkey", "r_name"]
    assert rows[1:] == [["0", "AFRICA"], ["1", "AMERICA"], ["2", "ASIA"], ["3", "EUROPE"], ["4", "MIDDLE EAST"]]


def test_query_on_spark_reads_postgres_and_parquet(tpch_catalogs, tmp_path):
    query = tmp_path / "q.sql"
    query.write_text("select n_name, count(*) as suppliers from supplier, nation\n"
                     "where s_nationkey = n_nationkey and n_regionkey = 1 group by n_name order by n_name")
    result = cbo("query", "--format", "json", "-f", str(query), catalog=tpch_catalogs["federated"])
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["columns"] == ["n_name", "suppliers"]
    assert [r[0] for r in answer["rows"]] == ["ARGENTINA", "BRAZIL", "CANADA", "PERU", "UNITED STATES"]
    assert sum(r[1] for r in answer["rows"]) > 0


def test_explain_json_shows_pushed_sql_and_actual_rows(tpch_catalogs):
    result = cbo("explain", "--format", "json", "--analyze", "--engine", "duckdb",
                 "select o_orderkey from orders where o_orderdate < date '1993-01-01' and o_totalprice > 1000",
                 catalog=tpch_catalogs["federated"])
    assert result.returncode == 0, result.stderr
    root = json.loads(result.stdout)["plan"]
    nodes, stack = [], [root]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(node["children"])
        assert {"operator", "estimated_rows", "children"} <= set(node)
        assert isinstance(node["actual_rows"], int)
        assert isinstance(node["estimated_rows"], (int, float)) and node["estimated_rows"] >= 0
    pushed = [n for n in nodes if "pushed_sql" in n]
    assert pushed and '"tpch_sf0_01"."orders"' in pushed[0]["pushed_sql"]
    assert "1993-01-01" in pushed[0]["pushed_sql"]
    # The catalog names a password file; the password itself never appears in EXPLAIN.
    secret = load_catalog(tpch_catalogs["federated"]).sources["pg"].password()
    assert secret and secret not in result.stdout


def test_explain_text_is_an_indented_tree(tpch_catalogs):
    result = cbo("explain", "select c_name from customer where c_custkey in (select o_custkey from orders)",
                 catalog=tpch_catalogs["federated"])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("- ")
    assert any(line.startswith("    - SemiJoin[") or line.startswith("- SemiJoin[") for line in lines)


def test_sql_errors_are_one_line(tpch_catalogs):
    result = cbo("query", "select nope from region", catalog=tpch_catalogs["federated"])
    assert result.returncode == 2
    assert result.stderr.strip() == "cbo: error: line 1, column 8: unknown column 'nope'"


def test_explain_estimates_come_from_collected_statistics(tpch_catalogs):
    """After ``cbo analyze`` a filtered scan's estimate is close to its true count and no
    node reports resting on defaults for missing statistics."""
    catalog = tpch_catalogs["all-spark"]
    assert cbo("analyze", catalog=catalog).returncode == 0
    sql = "select o_orderkey from orders where o_orderdate < date '1993-01-01'"
    result = cbo("explain", "--format", "json", "--analyze", "--engine", "duckdb", sql, catalog=catalog)
    assert result.returncode == 0, result.stderr
    node = json.loads(result.stdout)["plan"]
    while node["operator"] != "Filter":
        node = node["children"][0]
    assert 0.8 <= max(node["estimated_rows"], 1) / max(node["actual_rows"], 1) <= 1.25
    assert "no statistics" not in result.stdout


def test_a_spark_run_time_error_shows_its_cause_in_one_line(tpch_parquet_catalog):
    """Was: Spark's start-up banner, a 25-line Java stack trace from the executor's log, then
    "query failed on spark: An error occurred while calling o59.collectToPython"."""
    sql = "select r_name, (select n_name from nation) from region"
    result = cbo("query", sql, catalog=tpch_parquet_catalog)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines[-1] == "cbo: error: query failed on spark: scalar subquery returned more than one row"
    # Everything before it is cbo's own progress: no Java stack, no JVM or log4j start-up lines.
    assert lines[0] == "starting Spark (local[*]) ..." and lines[1].startswith("starting Spark (local[*]): done in")
    # and, on a slow run, a line of Spark's stage progress (not a terminal: plain lines)
    assert all(re.fullmatch(r"Spark: stage \d+ .*tasks, \d+ s", line) for line in lines[2:-1]), result.stderr
    debug = subprocess.run([sys.executable, "-m", "cbo", "--debug", "query", "--catalog", str(tpch_parquet_catalog),
                            sql], capture_output=True, text=True, timeout=600)
    assert debug.returncode == 2
    assert "Traceback" in debug.stderr and "at org.apache.spark" in debug.stderr  # the stack with --debug
    assert debug.stderr.strip().splitlines()[-1] == lines[-1]


def test_spark_stays_quiet_when_the_catalog_sets_driver_java_options(tpch_parquet_catalog, tmp_path):
    """The catalog's own driver options used to replace cbo's logging options, and Spark's
    start-up lines came back."""
    catalog = tmp_path / "with-java-options.toml"
    catalog.write_text('[spark.conf]\n"spark.driver.extraJavaOptions" = "-Dcbo.test.marker=1"\n\n'
                       + tpch_parquet_catalog.read_text())
    result = cbo("query", "--format", "csv", "select count(*) as n from region", catalog=catalog)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["n", "5"]
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("starting Spark") and lines[1].startswith("starting Spark"), result.stderr
    assert all(re.fullmatch(r"Spark: stage \d+ .*tasks, \d+ s", line) for line in lines[2:]), result.stderr
