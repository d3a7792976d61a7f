"""EXPLAIN tells the truth about what runs: the SQL sent to PostgreSQL, per-operator actuals.

The pushed SQL is checked against PostgreSQL's own statement log (``log_statement = all`` for
the catalog's role while the query runs), not against cbo's idea of what it sent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import psycopg
import pytest

import cbo
from cbo.workloads.tpch_queries import QUERY_DIR
from cbo.connectors.postgres.server import LocalPostgres

QUERIES = QUERY_DIR


def _nodes(node: dict) -> list[dict]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(current["children"])
    return found


class StatementLog:
    """The statements the local PostgreSQL receives while the ``with`` block runs (its server log,
    with ``log_statement = all`` set for the role, reset afterwards)."""

    def __init__(self) -> None:
        info = LocalPostgres().status()
        assert info is not None, "the local PostgreSQL is not running"
        self.info = info
        self.log = Path(info.data_dir).parent / "server.log"
        self.statements: list[str] = []

    def _set(self, value: str | None) -> None:
        with psycopg.connect(**self.info.conninfo(), autocommit=True) as conn:
            role = psycopg.sql.Identifier(self.info.user)
            if value is None:
                conn.execute(psycopg.sql.SQL("ALTER ROLE {} RESET log_statement").format(role))
            else:
                conn.execute(psycopg.sql.SQL("ALTER ROLE {} SET log_statement = 'all'").format(role))

    def __enter__(self) -> StatementLog:
        self._set("all")
        self._offset = self.log.stat().st_size
        return self

    def __exit__(self, *exc: object) -> None:
        self._set(None)
        with open(self.log, encoding="utf-8", errors="replace") as handle:
            handle.seek(self._offset)
            text = handle.read()
        # "LOG:  statement: ..." (simple protocol) or "LOG:  execute <unnamed>: ..." (JDBC's
        # extended protocol); a statement may continue on the following lines.
        entries = re.split(r"\n(?=\S)", text)
        for entry in entries:
            match = re.search(r"LOG:\s+(?:statement|execute [^:]*):\s(.*)", entry, re.DOTALL)
            if match:
                self.statements.append(match.group(1).strip())


# The WHERE of one partition of a partitioned JDBC read (Spark's JDBCRelation.columnPartition).
PARTITION_RANGE = re.compile(r'(?:"\w+" >= -?\d+)?(?:(?: AND )?"\w+" < -?\d+)?(?: or "\w+" is null)?')


def _sent_queries(statements: list[str], schema: str) -> list[str]:
    """The queries Spark's JDBC reader sent, without its wrapper ``SELECT cols FROM (q) alias [WHERE
    partition range]``; statements not reading the schema's tables (metadata look-ups) are left out."""
    found = []
    for statement in statements:
        if f'"{schema}".' not in statement:
            continue
        match = re.fullmatch(r"SELECT .*? FROM \((.*)\)\s+\w+(?:\s+WHERE\s+(.*))?", statement, re.DOTALL)
        assert match, f"not the shape Spark's JDBC reader sends: {statement}"
        # Spark may add only a partitioned read's key range, or "WHERE 1=0" when it asks for the
        # result's columns, never filters of its own.
        where = (match.group(2) or "").strip()
        assert where in ("", "1=0") or PARTITION_RANGE.fullmatch(where), statement
        found.append(match.group(1).strip())
    return found


@pytest.mark.parametrize("query", ["q05", "q10"])
def test_pushed_sql_is_what_postgres_receives(spark, tpch_catalogs, query):
    # Q5 and Q10 read orders with a date range and customer/nation: the filters go with the scan.
    session = cbo.Session(tpch_catalogs["federated"])
    sql = (QUERIES / f"{query}.sql").read_text()
    body = json.loads(session.explain(sql, format="json"))
    pushed = sorted(n["pushed_sql"] for n in _nodes(body["plan"]) if "pushed_sql" in n)
    assert pushed, "EXPLAIN shows no pushed SQL for a federated query"
    schema = session.catalog.sources["pg"].schema
    with StatementLog() as log:
        session.query(sql)
    sent = _sent_queries(log.statements, schema)
    assert sorted(set(sent)) == sorted(set(pushed)), (
        "EXPLAIN's pushed SQL differs from what PostgreSQL received:\n"
        f"EXPLAIN: {pushed}\nreceived: {sorted(set(sent))}")
    # The date range of Q5/Q10 on orders is part of what is sent, and EXPLAIN shows it there.
    orders = [text for text in pushed if '"orders"' in text]
    assert orders and all("o_orderdate" in text and "WHERE" in text for text in orders)


def _executions(spark) -> int:  # type: ignore[no-untyped-def]
    """SQL executions that ran Spark jobs, as Spark's SQL status store (its UI's SQL tab) has
    them (making a temporary view is an execution without jobs)."""
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    return sum(1 for i in range(executions.size()) if executions.apply(i).jobs().size() > 0)


@pytest.mark.parametrize("placement,query", [("all-spark", "q03"), ("all-spark", "q13"), ("all-spark", "q18"),
                                             ("federated", "q05"), ("all-spark", "q21")])
def test_analyze_takes_actuals_from_one_run(spark, tpch_catalogs, placement, query):
    from cbo.engines.duckdb_engine import DuckDBEngine
    from cbo.ir.operators import walk
    from cbo.sqlgen import to_sql

    session = cbo.Session(tpch_catalogs[placement])
    sql = (QUERIES / f"{query}.sql").read_text()
    before = _executions(spark)
    body = json.loads(session.explain(sql, format="json", analyze=True))
    assert _executions(spark) - before == 1, "EXPLAIN ANALYZE must run the query once"
    assert body["plan"]["analyze"]["runs"] == 1
    # The true count of every node: its subplan counted by DuckDB over the same data.
    planned = session.planner.plan(sql)
    duck = DuckDBEngine(session.catalog)
    nodes = list(walk(planned.plan))
    shown = _nodes(body["plan"])
    # walk() and _nodes() visit in different orders: pair them by position in a pre-order walk.
    shown_in_order: list[dict] = []

    def pre(node: dict) -> None:
        shown_in_order.append(node)
        for child in node["children"]:
            pre(child)

    pre(body["plan"])
    assert len(shown) == len(nodes)
    plans_in_order: list = []

    def pre_plan(node) -> None:  # type: ignore[no-untyped-def]
        plans_in_order.append(node)
        for child in node.children:
            pre_plan(child)

    pre_plan(planned.plan)
    measured = 0
    for node, info in zip(plans_in_order, shown_in_order):
        assert info["actual_rows_from"], info["operator"]
        if info["actual_rows"] is None:
            assert "not measured" in info["actual_rows_from"] or "no Spark operator" in info["actual_rows_from"]
            continue
        names = tuple(f"c{i}" for i in range(len(node.output)))
        _, rows, _ = duck.run(f"SELECT count(*) FROM ({to_sql(node, names, 'duckdb')}) AS sub")
        assert info["actual_rows"] == rows[0][0], (query, info["operator"], info["actual_rows_from"])
        measured += 1
    if query == "q21":
        # Spark's optimizer pushes Q21's semi and anti joins below the inner joins: those
        # nodes have no counterpart in what ran, and say so rather than borrow numbers.
        assert any(n["actual_rows"] is None and "moved it" in n["actual_rows_from"] for n in shown)
    else:
        in_source = [n for n in shown if "runs in the source" in n["actual_rows_from"]]
        assert measured + len(in_source) == len(shown), [n["actual_rows_from"] for n in shown]
    assert body["plan"]["actual_rows"] == body["plan"]["analyze"]["rows"]


@pytest.mark.parametrize("sql", [
    # a plain window over an aggregation, and a per-partition top-k over a window (Spark's
    # WindowGroupLimit below its WindowExec)
    "select o_custkey, n, rank() over (partition by o_orderpriority order by n desc) r from "
    "(select o_custkey, o_orderpriority, count(*) n from orders group by o_custkey, o_orderpriority) t",
    "select * from (select s_nationkey, s_suppkey, row_number() over (partition by s_nationkey "
    "order by s_acctbal desc) rn from supplier) t where rn <= 2",
])
def test_analyze_measures_windows(spark, tpch_catalogs, sql):
    from cbo.engines.duckdb_engine import DuckDBEngine
    from cbo.ir.operators import Window, walk
    from cbo.sqlgen import to_sql

    session = cbo.Session(tpch_catalogs["all-spark"])
    body = json.loads(session.explain(sql, format="json", analyze=True))
    windows = [n for n in _nodes(body["plan"]) if n["operator"].startswith("Window")]
    planned = session.planner.plan(sql)
    plans = [n for n in walk(planned.plan) if isinstance(n, Window)]
    assert len(windows) == len(plans) == 1
    assert windows[0]["actual_rows"] is not None, windows[0]["actual_rows_from"]
    duck = DuckDBEngine(session.catalog)
    names = tuple(f"c{i}" for i in range(len(plans[0].output)))
    _, rows, _ = duck.run(f"SELECT count(*) FROM ({to_sql(plans[0], names, 'duckdb')}) AS sub")
    assert windows[0]["actual_rows"] == rows[0][0]
