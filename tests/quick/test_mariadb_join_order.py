"""A join pushed to MariaDB is listed in cbo's driving order and kept so by STRAIGHT_JOIN.

MariaDB cannot estimate ``p_name LIKE '%green%'`` and started TPC-H Q9's pushed join at nation,
looking up every partsupp row (18 s at SF 1); cbo's order starts at the filtered part (1.5 s).
``cbo.exec.remote_join_order`` picks the order; ``cbo.exec.remote`` puts the modifier on every
SELECT (MariaDB merges derived tables and drops theirs) and a LIMIT keeps Spark's wrapper apart.
"""

from __future__ import annotations

from pathlib import Path

import sqlglot

from cbo.app.pushdown import pushdown_records
from cbo.estimate import Estimator
from cbo.exec.remote import RemoteQueries
from cbo.exec.remote_join_order import driving_order
from cbo.ir.operators import Join, walk
from cbo.planner import Planner
from cbo.sources.catalog import load_catalog
from cbo.sources.schema import SchemaProvider
from cbo.sqlgen import flat_inputs
from cbo.workloads.tpch_queries import QUERY_DIR
from tests.quick.test_rule_files import _stored
from tests.rule_files import RuleCase, with_jdbc_source

Q9 = (QUERY_DIR / "q09.sql").read_text()
MARIA = ("part", "partsupp", "supplier", "nation")


def _plan(catalog_path: Path, dialect: str):  # type: ignore[no-untyped-def]
    case = RuleCase(Path("order"), 0, [], "opt", [], Q9, "", jdbc=dialect, jdbc_tables=MARIA,
                    settings={"join_pushdown_strategy": "EAGER"})
    catalog, stats = with_jdbc_source(load_catalog(catalog_path), dict(_stored(case.stats)), case)
    estimator = Estimator(stats)
    planner = Planner(catalog, schemas=SchemaProvider(catalog, local_copies=True), estimator=estimator,
                      settings=case.optimizer_settings())
    planned = planner.plan(Q9)
    return planned, pushdown_records(planned, RemoteQueries(catalog, partitioned_reads=False)), estimator


def test_q9_pushed_to_mariadb_starts_at_the_filtered_part(tpch_parquet_catalog):
    _, records, _ = _plan(tpch_parquet_catalog, "mysql")
    (record,) = [r for r in records if r.pushed and r.operator == "Join"]
    parsed = sqlglot.parse_one(record.sql, read="mysql")
    selects = list(parsed.find_all(sqlglot.exp.Select))
    assert selects and all("STRAIGHT_JOIN" in s.sql(dialect="mysql").split(" FROM ")[0] for s in selects)
    # Spark's reader wraps the query in a SELECT of its own, into which MariaDB would merge it
    # (dropping the modifier); a LIMIT keeps it apart
    assert parsed.args.get("limit") is not None
    text = record.sql
    # nested loops from part (the LIKE filter), then partsupp by its key, supplier, nation
    assert text.index("`part`") < text.index("`partsupp`") < text.index("`supplier`") < text.index("`nation`")


def test_postgres_keeps_planning_its_own_join_order(tpch_parquet_catalog):
    _, records, _ = _plan(tpch_parquet_catalog, "postgres")
    assert all("STRAIGHT_JOIN" not in r.sql for r in records if r.sql)


def test_the_driving_order_has_the_fewest_intermediate_rows(tpch_parquet_catalog):
    planned, _, estimator = _plan(tpch_parquet_catalog, "mysql")
    roots = [n for n in walk(planned.plan) if isinstance(n, Join) and n.kind == "inner"
             and {s for s in (getattr(x, "table", "") for x in walk(n)) if s} <= {f"remote.{t}" for t in MARIA}]
    root = max(roots, key=lambda n: len(list(walk(n))))
    inputs, conditions = flat_inputs(root)
    assert len(inputs) == 4
    chosen = driving_order(inputs, conditions, estimator.rows)
    reversed_order = driving_order(list(reversed(inputs)), conditions, estimator.rows)
    # the same order whatever order the inputs came in (no ties at SF 1's statistics)
    assert chosen == reversed_order
    assert getattr(chosen[0], "table", None) == "remote.part" or "remote.part" in {
        getattr(n, "table", None) for n in walk(chosen[0])}
