"""Spark reaches the catalog's sources; an unreachable JDBC source is one clear error."""

from __future__ import annotations

import pytest

from cbo.catalog import parse_catalog
from cbo.engines.spark import read_table, register_catalog, run_sql
from cbo.errors import SourceUnreachable
from cbo.localpg import free_port


def test_jdbc_table_reads_with_its_types(spark, tpch_catalogs):
    from cbo.catalog import load_catalog

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
