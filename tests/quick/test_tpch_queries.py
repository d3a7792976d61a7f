"""The 22 TPC-H queries: present, parseable in every engine's dialect, deterministic under LIMIT."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from benchmarks.tpch.queries import all_queries, select
from cbo.errors import CboError


def test_there_are_22_queries_numbered_1_to_22():
    assert [q.number for q in all_queries()] == list(range(1, 23))


@pytest.mark.parametrize("dialect", ["spark", "duckdb", "postgres"])
@pytest.mark.parametrize("query", all_queries(), ids=lambda q: q.name)
def test_each_query_parses_as_one_select(query, dialect):
    statements = sqlglot.parse(query.sql, read=dialect)
    assert len(statements) == 1
    assert isinstance(statements[0], (exp.Select, exp.Union))


@pytest.mark.parametrize("query", all_queries(), ids=lambda q: q.name)
def test_every_limit_has_an_order_by(query):
    tree = sqlglot.parse_one(query.sql)
    if tree.args.get("limit"):
        assert tree.args.get("order"), f"{query.name}: LIMIT without ORDER BY is not deterministic"


def test_select_by_name():
    assert [q.name for q in select(["q1", "6", "Q22"])] == ["q01", "q06", "q22"]
    with pytest.raises(CboError, match="unknown TPC-H query 'q23'"):
        select(["q23"])
