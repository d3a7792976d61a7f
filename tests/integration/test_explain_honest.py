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
from cbo.localpg import LocalPostgres

QUERIES = Path(__file__).resolve().parents[2] / "benchmarks" / "tpch" / "queries"


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

    def __enter__(self) -> "StatementLog":
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
            match = re.search(r"LOG:\s+(?:statement|execute [^:]*):\s(.*)", entry, re.S)
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
        match = re.fullmatch(r"SELECT .*? FROM \((.*)\)\s+\w+(?:\s+WHERE\s+(.*))?", statement, re.S)
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
