"""Inner-join trees pushed to PostgreSQL as one FROM list, referencing tables first.

PostgreSQL estimates a join with a foreign key by the first matching key in the order of the
referencing tables in FROM (``cbo.sqlgen``); TPC-H Q9 listed as cbo joined it was estimated at
20 rows instead of 50,509 at SF 1. The flat rendering answers as the nested one (DuckDB), keeps
outer joins and aggregations as they were, and lists lineitem before partsupp in Q9.
"""

from __future__ import annotations

import pytest
import sqlglot

from cbo.estimate import Estimator
from cbo.ir.operators import Join, walk
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog
from cbo.sqlgen import SqlRenderer, flat_inputs
from cbo.workloads.tpch_queries import QUERY_DIR
from tests.duckdb_answers import assert_answers_as_planned
from tests.quick.test_pushdown_records import plan
from tests.quick.test_rule_files import _stored

Q9 = (QUERY_DIR / "q09.sql").read_text()
LEFT = ("select c_name, o_orderkey, n_name from customer left join orders on c_custkey = o_custkey "
        "and o_totalprice > 300000 join nation on c_nationkey = n_nationkey where n_regionkey = 1")


@pytest.fixture(scope="module")
def planner(tpch_parquet_catalog):
    return Planner(load_catalog(tpch_parquet_catalog), estimator=Estimator(_stored("tpch-sf1")))


def _flat_sql(planned) -> str:  # type: ignore[no-untyped-def]
    renderer = SqlRenderer("duckdb", flat_joins=True)
    query = renderer.query(planned.plan)
    columns = [sqlglot.exp.alias_(sqlglot.exp.column(f"c{c.id}", quoted=True), n, quoted=True)
               for c, n in zip(planned.plan.output, planned.names)]
    return sqlglot.exp.select(*columns).from_(query.subquery("q")).sql(dialect="duckdb")


@pytest.mark.parametrize("sql", [Q9, LEFT, (QUERY_DIR / "q03.sql").read_text()], ids=["q09", "left", "q03"])
def test_the_flat_rendering_answers_as_the_nested_one(planner, tpch_parquet_catalog, sql):
    planned = planner.plan(sql)
    flat = _flat_sql(planned)
    joins = [n for n in walk(planned.plan) if isinstance(n, Join)]
    outer = sum(1 for j in joins if j.kind != "inner")
    # an outer join keeps its JOIN ... ON; inner joins have none
    assert flat.upper().count(" JOIN ") == outer
    assert_answers_as_planned(tpch_parquet_catalog, planned, flat)


def test_flat_inputs_stop_at_outer_joins_and_computed_projections(planner):
    planned = planner.plan(LEFT)
    nodes = list(walk(planned.plan))
    assert any(isinstance(n, Join) and n.kind == "left" for n in nodes)
    roots = [n for n in nodes if isinstance(n, Join) and n.kind == "inner"]
    assert roots
    for root in roots:
        inputs, conditions = flat_inputs(root)
        assert len(inputs) >= 2 and conditions
        # an input is never an inner join (it is part of the flat list), a left join always is one
        assert not any(isinstance(i, Join) and i.kind == "inner" for i in inputs)
        below = {id(n) for i in inputs for n in walk(i)}
        assert all(id(n) in below for n in walk(root) if isinstance(n, Join) and n.kind == "left")


def test_pushed_q9_lists_lineitem_before_partsupp(tpch_parquet_catalog):
    tables = ("part", "partsupp", "supplier", "lineitem", "orders", "nation")
    _, records = plan(tpch_parquet_catalog, Q9, tables, join_pushdown_strategy="EAGER")
    (record,) = [r for r in records if r.pushed]
    assert "JOIN" not in record.sql.upper()
    parsed = sqlglot.parse_one(record.sql, read="postgres")
    listed = [t.name for t in parsed.find_all(sqlglot.exp.Table)]
    assert set(listed) >= {"lineitem", "partsupp", "part", "supplier", "orders"}
    # in the SQL's text order: lineitem (which references partsupp) before partsupp before part
    text = record.sql
    assert text.index('"lineitem"') < text.index('"partsupp"') < text.index('"part"')
