"""The cardinality harness on TPC-DS sub-plans at SF 0.01: ``python -m benchmarks.cardinality
--workload tpcds``, with cbo, PostgreSQL (the test cache's own server) and DuckDB side by side.

Three queries: q03 (a small star), q57 (sub-plans that join reads of a CTE computed above
them, which must carry its definition to be counted on their own) and q91 (more sub-plans than
the limit given, so the query is cut to it). Every true count is checked against DuckDB's count(*) of the
sub-plan's SQL over views of the Parquet files (the harness loads tables: another path), each
record is matched by its SQL's digest to a sub-plan planned here, and every system has an
estimate or the reason it gave none.
"""

from __future__ import annotations

import hashlib
import json

import duckdb
import pytest
from sqlglot import exp

from benchmarks.cardinality.__main__ import main
from benchmarks.cardinality.report import SYSTEMS
from benchmarks.cardinality.subplans import MAX_RELATIONS, spread, subplans
from benchmarks.cardinality.systems import names_of
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog
from cbo.sqlgen import to_sql
from cbo.workloads import tpcds
from cbo.workloads.tpcds_queries import DIALECT, select
from tests.conftest import TEST_SF

QUERIES = ("q03", "q57", "q91")
LIMIT = 20


@pytest.fixture(scope="module")
def result(tpch_catalogs, spark, tmp_path_factory):  # type: ignore[no-untyped-def]
    """The harness's JSON; ``tpch_catalogs`` starts the test cache's PostgreSQL (stopped when
    the run ends), which the TPC-DS tables are loaded into beside TPC-H's."""
    out = tmp_path_factory.mktemp("cardinality") / "cardinality-tpcds.json"
    assert main(["--workload", "tpcds", "--sf", str(TEST_SF), "--only", ",".join(QUERIES),
                 "--max-subplans", str(LIMIT), "--out", str(out)]) == 0
    return json.loads(out.read_text()), out


@pytest.fixture(scope="module")
def planned_subplans(result):  # type: ignore[no-untyped-def]
    """Each query's kept sub-plans, planned here as the harness plans them, by their DuckDB SQL."""
    catalog = load_catalog(tpcds.prepare(TEST_SF, postgres=None)["all-spark"])
    planner = Planner(catalog, DIALECT)
    found = {}
    for query in select(list(QUERIES)):
        every = subplans(planner.plan(query.sql).plan)
        found[query.name] = (len(every), [to_sql(s.plan, names_of(s.plan), "duckdb") for s in spread(every, LIMIT)])
    return catalog, found


def test_the_limits_are_stated_and_the_cut_query_keeps_its_limit(result, planned_subplans):
    document, _ = result
    _, found = planned_subplans
    assert document["workload"] == "tpcds" and document["sf"] == TEST_SF and document["dialect"] == DIALECT
    assert document["limits"] == {"time_limit_s": 10.0, "max_subplans_per_query": LIMIT,
                                  "max_relations_per_region": MAX_RELATIONS}
    assert [q["name"] for q in document["queries"]] == list(QUERIES)
    enumeration = {e["query"]: (e["found"], e["kept"]) for e in document["enumeration"]}
    assert enumeration == {name: (total, min(total, LIMIT)) for name, (total, _) in found.items()}
    assert enumeration["q91"][0] > LIMIT          # the case that is cut
    assert document["left_out"] == []
    assert document["skipped"] == []              # SF 0.01: every sub-plan counted, CTE readers too
    assert any(r["query"] == "q57" and "cteconsumer" in r["relations"] for r in document["records"])


def test_true_counts_are_duckdb_counts_of_the_subplan_sql(result, planned_subplans):
    document, _ = result
    catalog, found = planned_subplans
    connection = duckdb.connect()
    for table in catalog.tables():
        path = exp.Literal.string(str(table.path)).sql(dialect="duckdb")
        connection.execute(f'create view "{table.name}" as select * from read_parquet({path})')
    records = {(r["query"], r["sql_digest"]): r for r in document["records"]}
    assert len(records) == len(document["records"])
    expected = {}
    for name, (_, sqls) in found.items():
        for sql in sqls:
            (count,) = connection.execute(f"select count(*) from ({sql}) t").fetchone()  # type: ignore[misc]
            expected[(name, hashlib.sha256(sql.encode()).hexdigest()[:16])] = count
    assert {key: r["true"] for key, r in records.items()} == expected
    whole = {r["query"] for r in document["records"] if r["whole"]}
    assert whole == set(QUERIES)


def test_every_system_estimates_or_says_why_not(result):
    document, out = result
    systems = ("cbo", "postgres", "duckdb")
    for record in document["records"]:
        for system in systems:
            value, error = record.get(system), record.get(f"{system}_error")
            assert (isinstance(value, float) and value >= 0) or (value is None and error), (system, record)
    estimated = {s: [r for r in document["records"] if r.get(s) is not None] for s in systems}
    assert all(estimated.values())
    summary = document["summary"]
    assert [s for s in SYSTEMS if s in summary] == list(systems)
    joins = {str(r["joins"]) for r in document["records"]}
    for system in systems:
        assert summary[system]["all"]["n"] == len(estimated[system])
        assert joins <= set(summary[system])
        assert sum(summary[system][j]["n"] for j in joins) == len(estimated[system])
        assert {"median", "p95", "max", "under"} <= set(summary[system]["all"])
        assert summary[system]["all"]["median"] >= 1.0
    same = [r for r in document["records"] if all(r.get(s) is not None for s in systems)]
    assert document["same_subplans"]["systems"] == list(systems) and document["same_subplans"]["n"] == len(same)
    assert all(document["same_subplans"]["summary"][s]["all"]["n"] == len(same) for s in systems)
    assert out.with_suffix(".png").stat().st_size > 0
