"""Queries as large as machines write them, over TPC-H's nation table: long AND/OR/IN chains,
long sums, deep parentheses, subqueries nested a hundred deep (``cbo.limits``)."""

from __future__ import annotations


def or_chain(n: int) -> str:
    return "select count(*) from nation where " + " or ".join(f"n_nationkey = {i}" for i in range(n))


def and_chain(n: int) -> str:
    return "select count(*) from nation where " + " and ".join(f"n_nationkey <> {i + 100}" for i in range(n))


def in_list(n: int) -> str:
    return "select count(*) from nation where n_nationkey in (" + ", ".join(str(i) for i in range(n)) + ")"


def long_sum(n: int) -> str:
    return "select " + " + ".join(["n_nationkey"] * n) + " from nation where n_nationkey < 3"


def parentheses(n: int) -> str:
    return "select " + "(" * n + "n_nationkey" + ")" * n + " from nation where n_nationkey < 3"


def nested_in(n: int) -> str:
    """``n`` levels of ``IN (SELECT ...)``."""
    sql = "select n_nationkey from nation"
    for _ in range(n):
        sql = f"select n_nationkey from nation where n_nationkey in ({sql})"
    return f"select count(*) from ({sql}) x"


def nested_scalar(n: int) -> str:
    """``n`` correlated scalar subqueries, each inside the one before."""
    sql = "select max(n0.n_nationkey) from nation n0 where n0.n_regionkey = n1.n_regionkey"
    for i in range(1, n):
        sql = (f"select max(n{i}.n_nationkey) from nation n{i} where n{i}.n_regionkey = n{i + 1}.n_regionkey "
               f"and n{i}.n_nationkey <= ({sql})")
    return f"select count(*) from nation n{n} where n{n}.n_nationkey <= ({sql})"


def nested_exists(n: int) -> str:
    """``n`` correlated EXISTS, each inside the one before."""
    sql = f"select 1 from nation n{n} where n{n}.n_nationkey = n{n - 1}.n_nationkey"
    for i in range(n - 1, 0, -1):
        sql = f"select 1 from nation n{i} where n{i}.n_nationkey = n{i - 1}.n_nationkey and exists ({sql})"
    return f"select count(*) from nation n0 where exists ({sql})"


# The sizes the issue asks for (and the probe's failures: 200-term chains, 60 parentheses, 30
# nested IN levels, 50 correlated scalar subqueries, a 300-term sum).
SIZES = {"or_chain": 1000, "and_chain": 1000, "in_list": 1000, "long_sum": 300, "parentheses": 100,
         "nested_in": 100, "nested_scalar": 50, "nested_exists": 100}
BUILDERS = {"or_chain": or_chain, "and_chain": and_chain, "in_list": in_list, "long_sum": long_sum,
            "parentheses": parentheses, "nested_in": nested_in, "nested_scalar": nested_scalar,
            "nested_exists": nested_exists}
