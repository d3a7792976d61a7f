"""Physical operators Spark runs as cbo planned them: a top-N as Spark's TakeOrderedAndProject,
a join with a one-row input as a scalar subquery computed once; answers equal DuckDB's."""

from __future__ import annotations

import duckdb
import pytest

import cbo
from cbo.answers import compare
from cbo.sources.catalog import load_catalog
from cbo.physical.algorithm import Algorithm

SCALAR_WHERE = "select o_orderkey from orders where o_totalprice > (select avg(o_totalprice) * 1.5 from orders)"
SCALAR_SELECT = "select n_name, (select max(r_regionkey) from region) as top from nation"
TOO_MANY = "select n_name from nation where n_regionkey = (select r_regionkey from region)"
TOP_N = ("select o_orderkey, o_totalprice, c_name from orders join customer on o_custkey = c_custkey "
         "order by o_totalprice desc, o_orderkey limit 10")


def _duckdb(catalog_path, sql):  # type: ignore[no-untyped-def]
    catalog = load_catalog(catalog_path)
    connection = duckdb.connect()
    for table in catalog.tables():
        connection.execute(f"create view {table.name} as select * from read_parquet('{table.path}')")
    return connection.execute(sql).fetchall()


@pytest.mark.parametrize("sql", [SCALAR_WHERE, SCALAR_SELECT], ids=["where", "select"])
def test_a_scalar_subquery_runs_once_as_a_value(spark, tpch_catalogs, sql):
    session = cbo.Session(tpch_catalogs["all-spark"])
    planned = session.planner.plan(sql)
    algorithms = {n.algorithm for n in planned.physical.operators()}
    assert Algorithm.SCALAR_SUBQUERY in algorithms and Algorithm.BROADCAST_NESTED_LOOP_JOIN not in algorithms
    executed = session._spark(planned).physical_plan(planned.plan, planned.names)
    # (Spark names a scalar subquery "scalar-subquery#N" in a plain plan, "Subquery subquery#N"
    # under adaptive execution, which cbo keeps in its plan-preserving parts)
    assert ("scalar-subquery#" in executed or "Subquery subquery#" in executed) and "NestedLoopJoin" not in executed
    _, rows = session.run(planned)
    verdict = compare(_duckdb(tpch_catalogs["all-spark"], sql), rows, ordered=False)
    assert verdict.matches, verdict.detail
    # EXPLAIN ANALYZE measures the rows of the join run as a filter (or kept from its left input).
    analyzed = session.explain(sql, analyze=True)
    assert "scalar_subquery" in analyzed and "runs once as a scalar subquery" in analyzed
    assert f"actual rows {len(rows):,}" in analyzed


def test_a_scalar_subquery_with_several_rows_still_fails(spark, tpch_catalogs):
    session = cbo.Session(tpch_catalogs["all-spark"])
    with pytest.raises(cbo.CboError, match="more than one row"):
        session.query(TOO_MANY)


def test_order_by_with_limit_runs_as_a_top_n(spark, tpch_catalogs):
    session = cbo.Session(tpch_catalogs["all-spark"])
    planned = session.planner.plan(TOP_N)
    assert planned.physical.algorithm is Algorithm.TOP_N or \
        Algorithm.TOP_N in {n.algorithm for n in planned.physical.operators()}
    executed = session._spark(planned).physical_plan(planned.plan, planned.names)
    assert "TakeOrderedAndProject" in executed and "Exchange rangepartitioning" not in executed
    _, rows = session.run(planned)
    assert compare(_duckdb(tpch_catalogs["all-spark"], TOP_N), rows, ordered=True).matches
