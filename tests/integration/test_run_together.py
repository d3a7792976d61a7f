"""``Session.run_together``: several planned queries in one Spark job answer as each run alone,
and a query whose output a batch cannot carry is refused by number before anything runs."""

from __future__ import annotations

import pytest

from cbo.answers import compare
from cbo.app.session import Session
from cbo.errors import CboError

QUERIES = [
    "select n_name, r_name from nation join region on n_regionkey = r_regionkey",
    "select c_nationkey, count(*) from customer group by c_nationkey",
    "select n_name, r_name from nation join region on n_regionkey = r_regionkey",   # the same statement: one branch
    "select r_name from region where r_regionkey > 10",                             # no rows
]


def test_queries_run_together_answer_as_each_alone(spark, tpch_parquet_catalog):  # type: ignore[no-untyped-def]
    session = Session(tpch_parquet_catalog)
    planned = [session.planner.plan(sql) for sql in QUERIES]
    together = session.run_together(planned, shuffle_partitions=1)
    assert len(together) == len(QUERIES)
    for sql, query, rows in zip(QUERIES, planned, together):
        _, alone = session.run(query)
        verdict = compare(alone, rows, ordered=False)
        assert verdict.matches, f"{sql}: {verdict.detail}"
    assert together[0] and not together[3]


def test_a_decimal_output_is_refused_by_query_number(spark, tpch_parquet_catalog):  # type: ignore[no-untyped-def]
    session = Session(tpch_parquet_catalog)
    planned = [session.planner.plan(QUERIES[0]), session.planner.plan("select sum(c_acctbal) from customer")]
    with pytest.raises(CboError, match=r"query 1 returns a type a batch cannot carry \(decimal"):
        session.run_together(planned)
