"""``Session.pushdown``'s records (``cbo.app.pushdown``): what a plan pushed to each JDBC source,
the SQL, and the remote and local costs the search compared, read from the search itself.

Planned only (nothing connects): TPC-H at SF 1 statistics with some tables moved into a JDBC
source, as the rule files do (``tests/rule_files.with_jdbc_source``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot

from cbo.app.pushdown import pushdown_records
from cbo.estimate import Estimator
from cbo.exec.remote import RemoteQueries
from cbo.physical.algorithm import Algorithm
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog
from cbo.sources.schema import SchemaProvider
from tests.quick.test_rule_files import _stored
from tests.rule_files import RuleCase, with_jdbc_source

Q3 = """select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority
from customer, orders, lineitem
where c_mktsegment = 'BUILDING' and c_custkey = o_custkey and l_orderkey = o_orderkey
  and o_orderdate < date '1995-03-15' and l_shipdate > date '1995-03-15'
group by l_orderkey, o_orderdate, o_shippriority order by revenue desc, o_orderdate, l_orderkey limit 10"""


MULTIPLYING = """select o1.o_orderkey, o2.o_orderkey from orders o1 join orders o2 on o1.o_custkey = o2.o_custkey
where o1.o_orderdate < date '1993-01-01'"""


def plan(catalog_path: Path, sql: str, tables: tuple[str, ...], **settings: str):  # type: ignore[no-untyped-def]
    case = RuleCase(Path("pushdown"), 0, [], "opt", [], sql, "", jdbc="postgres", jdbc_tables=tables,
                    settings=dict(settings))
    catalog, stats = with_jdbc_source(load_catalog(catalog_path), dict(_stored(case.stats)), case)
    planner = Planner(catalog, schemas=SchemaProvider(catalog, local_copies=True), estimator=Estimator(stats),
                      settings=case.optimizer_settings())
    planned = planner.plan(sql)
    return planned, pushdown_records(planned, RemoteQueries(catalog, partitioned_reads=False))


def test_a_pushed_join_with_its_sql_and_both_costs(tpch_parquet_catalog):
    planned, records = plan(tpch_parquet_catalog, Q3, ("customer", "orders"))
    (record,) = records
    assert record.pushed and record.source == "remote" and record.dialect == "postgres"
    assert record.operator == "Join" and record.tables == ("remote.customer", "remote.orders")
    parsed = sqlglot.parse_one(record.sql, read="postgres")
    assert {t.name for t in parsed.find_all(sqlglot.exp.Table)} == {"customer", "orders"}
    assert parsed.find(sqlglot.exp.Join) is not None
    # the remote cost is the chosen operator's; it won, so the local plan cost more (or was pruned)
    remote_ops = [o for o in planned.physical.operators() if o.algorithm is Algorithm.REMOTE_QUERY]
    assert [o.total for o in remote_ops] == [record.remote_cost]
    assert record.local_cost is None or record.local_cost >= record.remote_cost
    assert record.local_cost is not None or record.local_bound is not None
    assert record.rows > 0
    assert record.to_dict()["sql"] == record.sql


def test_everything_remote_is_one_record(tpch_parquet_catalog):
    _, records = plan(tpch_parquet_catalog, Q3, ())
    assert [(r.pushed, r.operator) for r in records] == [(True, "Limit")]


def test_a_subplan_kept_local_shows_the_cost_that_lost(tpch_parquet_catalog):
    """A join that multiplies rows (tests/testdata/rules/jdbc_pushdown.test): AUTOMATIC keeps it
    local, pushing only the filtered read; the records give the costs EXPLAIN's notes give."""
    _, records = plan(tpch_parquet_catalog, MULTIPLYING, ())
    assert [(r.operator, r.pushed) for r in records] == [("Project", False), ("Join", False), ("Filter", True)]
    for kept in records[:2]:
        assert kept.local_cost is not None
        remote = kept.remote_cost if kept.remote_cost is not None else kept.remote_bound
        assert remote is not None and remote > kept.local_cost
    _, eager = plan(tpch_parquet_catalog, MULTIPLYING, (), join_pushdown_strategy="EAGER")
    assert [(r.operator, r.pushed) for r in eager] == [("Project", True)]
    # NONE adds no remote query over a join: only the per-table fold is compared
    _, none = plan(tpch_parquet_catalog, MULTIPLYING, (), join_pushdown_strategy="NONE")
    assert [(r.operator, r.pushed) for r in none] == [("Filter", True)]


@pytest.mark.parametrize("sql", ["select count(*) from lineitem", "select n_name from nation"])
def test_no_jdbc_work_no_records(tpch_parquet_catalog, sql):
    _, records = plan(tpch_parquet_catalog, sql, ("customer",))
    assert records == []
