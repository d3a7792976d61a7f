"""Spark reaches the catalog's sources; an unreachable JDBC source is one clear error."""

from __future__ import annotations

import pytest

from cbo.sources.catalog import parse_catalog
from cbo.engines.spark import read_table, register_catalog, run_sql
from cbo.errors import SourceUnreachable
from cbo.connectors.localserver import free_port


def test_jdbc_table_reads_with_its_types(spark, tpch_catalogs):
    from cbo.sources.catalog import load_catalog

    catalog = load_catalog(tpch_catalogs["all-postgres"])
    frame = read_table(spark, catalog, catalog.table("orders"))
    types = dict(frame.dtypes)
    assert types["o_orderkey"] == "bigint" and types["o_totalprice"] == "decimal(15,2)"
    assert types["o_orderdate"] == "date"
    assert frame.count() == 15000


def test_unreachable_jdbc_source(spark, tmp_path):
    port = free_port()
    catalog = parse_catalog(f'[sources.pg]\ntype = "jdbc"\nurl = "jdbc:postgresql://127.0.0.1:{port}/db"\n'
                            'user = "u"\n[sources.pg.tables.t]\n', tmp_path / "c.toml")
    with pytest.raises(SourceUnreachable) as caught:
        register_catalog(spark, catalog)
    message = str(caught.value)
    assert message.startswith("cannot read table 'pg.t':") and "\n" not in message


def test_spark_has_ansi_mode_and_utc(spark):
    _, rows, _ = run_sql(spark, "select current_timezone()")
    assert rows == [("UTC",)]


def test_large_jdbc_tables_are_read_in_parallel_partitions(spark, tpch_catalogs):
    from cbo.sources.catalog import load_catalog
    from cbo.exec.remote import RemoteQueries
    from cbo.exec.spark_exec import SparkExecutor
    from cbo.planner import Planner

    from cbo.sources.metadata import with_database_keys

    catalog = with_database_keys(load_catalog(tpch_catalogs["all-postgres"]))  # lineitem's key is in PostgreSQL
    planned = Planner(catalog).plan("select l_orderkey, l_quantity from lineitem where l_quantity > 45")
    executor = SparkExecutor(spark, catalog, partitions=3)
    executor.views.remote = RemoteQueries(catalog, min_rows_for_partitions=0)  # SF 0.01 is small: lower the bar
    remote = executor.views.remote.fold(planned.plan)
    assert remote is not None and remote.partition_column is not None
    assert remote.bounds == (1, 60000)
    assert "l_quantity" in remote.sql and "> 45" in remote.sql
    frame = executor.dataframe(planned.plan, planned.names)
    assert frame.rdd.getNumPartitions() == 3
    rows, _ = executor.collect(planned.plan, planned.names)
    assert len(rows) == frame.count() and all(r[1] > 45 for r in rows)


def test_a_plan_runs_as_one_statement_over_views_of_its_own(spark, tpch_catalogs):
    from cbo.sources.catalog import load_catalog
    from cbo.exec.spark_exec import SparkExecutor
    from cbo.planner import Planner

    catalog = load_catalog(tpch_catalogs["federated"])   # part in Spark, nation and region in PostgreSQL
    sql = ("select r_name, count(*) as n from part, nation, region where p_partkey % 25 = n_nationkey "
           "and n_regionkey = r_regionkey and r_name <> 'ASIA' group by r_name order by r_name")
    planned = Planner(catalog).plan(sql)
    # A user's own view named like a catalog table must not change cbo's answer.
    spark.createDataFrame([(99, "NOWHERE")], "p_partkey bigint, p_name string").createOrReplaceTempView("part")
    try:
        executor = SparkExecutor(spark, catalog)
        statement = executor.statement(planned.plan, planned.names)
        rows, _ = executor.collect(planned.plan, planned.names)
    finally:
        spark.catalog.dropTempView("part")
    assert [r[0] for r in rows] == ["AFRICA", "AMERICA", "EUROPE", "MIDDLE EAST"]
    assert sum(r[1] for r in rows) == 2000 * 20 // 25
    assert statement.count("SELECT") > 5 and "JOIN" in statement
    assert "`part`" not in statement and "cbo_t" in statement and "cbo_r" in statement   # generated view names
    password = catalog.sources["pg"].password()
    assert password and password not in statement
    assert executor.statement(planned.plan, planned.names) == statement   # views are made once, then reused


def test_executors_over_different_catalogs_keep_their_own_tables(spark, tpch_catalogs, tmp_path):
    import duckdb

    from cbo.sources.catalog import load_catalog
    from cbo.exec.spark_exec import SparkExecutor
    from cbo.planner import Planner

    path = tmp_path / "region.parquet"
    duckdb.sql(f"copy (select range as r_regionkey, 'R' || range as r_name from range(2)) to '{path}' (format parquet)")
    other = parse_catalog(f'[sources.lake]\ntype = "spark"\n[sources.lake.tables.region]\npath = "{path}"\n',
                          tmp_path / "c.toml")
    tpch = load_catalog(tpch_catalogs["all-spark"])
    sql = "select count(*) from region"

    def count(catalog, executor):  # type: ignore[no-untyped-def]
        planned = Planner(catalog).plan(sql)
        return executor.collect(planned.plan, planned.names)[0][0][0]

    first, second = SparkExecutor(spark, tpch), SparkExecutor(spark, other)
    assert count(tpch, first) == 5
    assert count(other, second) == 2
    assert count(tpch, first) == 5   # the second executor's view did not replace the first's
