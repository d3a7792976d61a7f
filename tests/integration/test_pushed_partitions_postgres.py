"""Pushed remote queries read in parallel partitions on the real local PostgreSQL (issue 18, item 5).

A large pushed join read in ranges of a column of its result answers as the same query read
whole and as DuckDB, PostgreSQL receives one range query per partition, and EXPLAIN shows the
split; a top-N, a global aggregate and a query whose only numeric column is NULL-extended by
an outer join are read whole. At SF 0.01 the results are small, so the executor here splits
from 200 estimated rows a partition (``rows_per_partition``) instead of the default 250,000.
The bounds come from statistics: the catalog is copied so that its statistics, collected here,
are its own (the store is keyed by the catalog's path) and no other test's plans change.
"""

from __future__ import annotations

import json
import re

import pytest

import cbo
from cbo.answers import compare
from cbo.engines.native import DuckDBNative
from cbo.exec.remote import RemoteQueries
from cbo.sources.catalog import load_catalog
from cbo.workloads.tpch_queries import QUERY_DIR
from tests.integration.test_explain_honest import StatementLog, _nodes

BIG_JOIN = ("select l_orderkey, l_linenumber, l_extendedprice, o_orderdate from lineitem join orders "
            "on l_orderkey = o_orderkey where o_orderdate < date '1994-01-01'")
GROUPED = "select o_custkey, count(*) as n, sum(o_totalprice) as total from orders group by o_custkey"


@pytest.fixture(scope="module")
def catalog_path(tpch_catalogs, tmp_path_factory):
    from cbo.sources.statistics import analyze

    path = tmp_path_factory.mktemp("partitions") / "all-postgres.toml"
    path.write_text(tpch_catalogs["all-postgres"].read_text())
    analyze(load_catalog(path), ["lineitem", "orders", "customer"], analyze_source=True, force=True)
    return path


@pytest.fixture(scope="module")
def duckdb(tpch_catalogs):
    return DuckDBNative(load_catalog(tpch_catalogs["all-spark"]))


def _session(catalog_path, partitions: int) -> cbo.Session:
    session = cbo.Session(catalog_path)
    session.set(join_pushdown_strategy="EAGER")     # every pushable subplan pushed, whatever its cost
    session.query("select count(*) from region")    # the executor exists: its reads are set here
    session._spark().views.remote = RemoteQueries(session.catalog, pushed_partitions=partitions,
                                                  rows_per_partition=200)
    return session


def _reads(session: cbo.Session, sql: str) -> list:
    planned = session.planner.plan(sql)
    executor = session._spark(planned)
    return list(executor.views.remote.pushed(planned.plan, executor.operators).values())


def test_partitioned_join_answers_as_whole_and_duckdb(spark, catalog_path, duckdb):
    split, whole = _session(catalog_path, 3), _session(catalog_path, 0)
    [read] = _reads(split, BIG_JOIN)
    assert read.partitions == 3 and read.partition_column is not None, read
    assert _reads(whole, BIG_JOIN)[0].partitions is None
    with StatementLog() as log:
        _, rows = split.query(BIG_JOIN)
    # Spark sends the pushed query once per range (and once with WHERE 1=0 for its schema)
    ranged = [s for s in log.statements if read.sql in s and re.search(r"cbo_remote\s+WHERE", s) and "1=0" not in s]
    assert len(ranged) == 3, [s[-200:] for s in log.statements if read.sql in s]
    column = re.escape(f'"{read.partition_column}"')
    assert all(re.search(column + r"\s*(<|>=)", s) for s in ranged), [s[-200:] for s in ranged]
    assert sum(bool(re.search(column + r"\s+is\s+null", s, re.I)) for s in ranged) == 1   # NULLs: the first range
    _, whole_rows = whole.query(BIG_JOIN)
    assert len(rows) > 1000
    assert compare(whole_rows, rows, ordered=False).matches
    verdict = compare(duckdb.run(BIG_JOIN)[1], rows, ordered=False)
    assert verdict.matches, verdict.detail
    # EXPLAIN shows the split the executor makes
    text = split.explain(BIG_JOIN)
    assert f"remote read: 3 parallel partitions on {read.partition_column} in [" in text
    body = json.loads(split.explain(BIG_JOIN, format="json"))
    [node] = [n for n in _nodes(body["plan"]) if "pushed_sql" in n]
    assert node["pushed_partitions"]["partitions"] == 3
    assert "pushed_partitions" not in json.loads(whole.explain(BIG_JOIN, format="json"))["plan"]


def test_aggregate_split_on_its_grouping_key(spark, catalog_path, duckdb):
    session = _session(catalog_path, 3)
    [read] = _reads(session, GROUPED)
    planned = session.planner.plan(GROUPED)
    key = planned.plan.output[0]      # o_custkey (the projection above keeps its identity)
    assert read.partitions and read.partition_column == f"c{key.id}", (read, planned.plan)
    _, rows = session.query(GROUPED)
    verdict = compare(duckdb.run(GROUPED)[1], rows, ordered=False)
    assert verdict.matches, verdict.detail


@pytest.mark.parametrize("sql", [
    (QUERY_DIR / "q03.sql").read_text(),          # ORDER BY ... LIMIT 10 pushed
    "select o_orderkey, o_totalprice from orders order by o_totalprice desc limit 700",
    "select count(*), sum(l_extendedprice) from lineitem join orders on l_orderkey = o_orderkey",
    "select c_name, o_orderkey from customer left join orders on c_custkey = o_custkey",
], ids=["q03", "top_n", "global_aggregate", "null_extended"])
def test_limit_global_aggregate_and_null_extended_read_whole(spark, catalog_path, duckdb, sql):
    session = _session(catalog_path, 3)
    reads = _reads(session, sql)
    assert reads and all(r.partitions is None for r in reads), reads
    _, rows = session.query(sql)
    ordered = "limit" in sql.lower()
    verdict = compare(duckdb.run(sql)[1], rows, ordered=ordered)
    assert verdict.matches, verdict.detail
