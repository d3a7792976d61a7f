"""join_pushdown_strategy=EAGER as a filter of alternatives (``EagerPushdown``), remote work priced
per form (the cheapest equivalent form of a subplan is the one pushed), and the scan of a JDBC
table charged its source's reading of the rows. Plans only: no server is reached."""

from __future__ import annotations

from pathlib import Path

import pytest

from cbo.cost.model import CostModel
from cbo.ir.operators import Aggregate, Join, Scan, walk
from cbo.physical.remote_work import remote_work
from cbo.physical.algorithm import Algorithm
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog
from cbo.sources.schema import SchemaProvider
from tests.quick.test_rule_files import _stored, estimator_for
from tests.rule_files import RuleCase, with_jdbc_source

MULTIPLYING_JOIN = ("select o1.o_orderkey, o2.o_orderkey from orders o1 join orders o2 on o1.o_custkey = o2.o_custkey "
                    "where o1.o_orderdate < date '1993-01-01'")
Q17 = """select sum(l_extendedprice) / 7.0 as avg_yearly from lineitem, part
where p_partkey = l_partkey and p_brand = 'Brand#23' and p_container = 'MED BOX'
  and l_quantity < (select 0.2 * avg(l_quantity) from lineitem where l_partkey = p_partkey)"""


def plan(catalog_path, sql: str, strategy: str, dialect: str = "postgres"):  # type: ignore[no-untyped-def]
    case = RuleCase(Path("eager"), 0, [], "opt", [], sql, "", jdbc=dialect,
                    settings={"join_pushdown_strategy": strategy})
    catalog, stats = with_jdbc_source(load_catalog(catalog_path), dict(_stored(case.stats)), case)
    planner = Planner(catalog, schemas=SchemaProvider(catalog, local_copies=True),
                      estimator=estimator_for(case, stats), settings=case.optimizer_settings())
    planned = planner.plan(sql)
    assert planned.optimized is not None
    return planned


def remote_operators(planned):  # type: ignore[no-untyped-def]
    return [n for n in planned.physical.operators() if n.algorithm is Algorithm.REMOTE_QUERY]


def test_eager_pushes_what_cost_keeps_local_and_prices_it_as_a_runtime(tpch_parquet_catalog):
    automatic = plan(tpch_parquet_catalog, MULTIPLYING_JOIN, "AUTOMATIC")
    eager = plan(tpch_parquet_catalog, MULTIPLYING_JOIN, "EAGER")
    # AUTOMATIC keeps the join local (its result is larger than its inputs); EAGER pushes it all
    assert len(remote_operators(eager)) == 1
    assert remote_operators(eager)[0].logical is eager.physical.logical
    assert len(remote_operators(automatic)) == 1 and remote_operators(automatic)[0].logical is not \
        automatic.physical.logical
    # no token cost: the forced plan costs more than the plan cost chose, a predicted runtime
    assert eager.optimized.cost > automatic.optimized.cost > 0.1


@pytest.mark.parametrize("dialect", ["postgres", "mysql"])
def test_none_keeps_joins_local(tpch_parquet_catalog, dialect):
    planned = plan(tpch_parquet_catalog, MULTIPLYING_JOIN, "NONE", dialect)
    for remote in remote_operators(planned):
        assert not any(type(n).__name__ == "Join" for n in walk(remote.logical))


def test_the_pushed_form_is_the_one_the_source_works_least_for(tpch_parquet_catalog):
    # Q17 pushed whole: the form whose per-part aggregation reads a copy of the outer join of
    # lineitem and part (CopyTableIntoAggregate) aggregates about 6,000 rows instead of all of
    # lineitem, and PostgreSQL computes that join once (lineitem read once, not twice as in
    # PushTableIntoAggregate's form: its work, ~12 M rows read, counted once, not ~25 M)
    eager = plan(tpch_parquet_catalog, Q17, "EAGER")
    (remote,) = remote_operators(eager)
    assert remote.logical is eager.physical.logical
    grouped = [n for n in walk(remote.logical) if isinstance(n, Aggregate) and n.group_by]
    assert grouped and all(isinstance(n.input, Join) for n in grouped)
    work = remote_work(remote.logical)
    assert work is not None and work.rows < 13e6 and 0 < work.aggregated < 1e5 and work.shared_joins


def test_remote_work_prices_aggregated_rows_at_their_own_rate(tpch_parquet_catalog):
    model = CostModel()
    k = model.k
    assert model.remote_price("postgres", 1e6, 2e6) == pytest.approx(
        k["remote_row_postgres"] * 1e6 + k["remote_agg_row_postgres"] * 2e6)
    assert model.remote_price("mysql", 1e6, 0.0) == pytest.approx(k["remote_row_mysql"] * 1e6)
    # MariaDB has no any_value (no table-pushdown form); the aggregation of a copy of the outer
    # join (CopyTableIntoAggregate) needs none, and aggregates thousands of rows, not 6 million;
    # MariaDB does not share the repeated join, so lineitem is read more than once
    (remote,) = remote_operators(plan(tpch_parquet_catalog, Q17, "EAGER", "mysql"))
    work = remote_work(remote.logical)
    assert work is not None and work.dialect == "mysql" and work.rows > 20e6 and 0 < work.aggregated < 1e5
    assert not work.shared_joins
    found = model.remote_query(remote.logical, (1.0, 8.0))
    assert found["remote_row_mysql"] == work.rows and found["remote_agg_row_mysql"] == work.aggregated
    assert found["jdbc_row"] == 1.0 and found["remote_query"] == 1.0


def test_a_jdbc_table_read_charges_its_source_reading_every_row(tpch_parquet_catalog):
    planned = plan(tpch_parquet_catalog, MULTIPLYING_JOIN, "NONE", "mysql")
    scans = [n for n in planned.physical.operators() if isinstance(n.logical, Scan)]
    assert scans
    for scan in scans:
        quantities = scan.quantities
        assert quantities["remote_row_mysql"] == quantities["jdbc_row"] == pytest.approx(1.5e6, rel=0.01)
