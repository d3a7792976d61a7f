"""Factoring common conjuncts out of OR is exact in three-valued logic (checked exhaustively on
random formulas over TRUE/FALSE/NULL atoms), and it turns TPC-H Q19's join into a hash join."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from cbo.ir.expressions import ColumnRef, Column, SpecialForm
from cbo.ir import types as T
from cbo.normalize.factor_or import factor_or

ATOMS = [Column(i, f"b{i}", T.BOOLEAN) for i in range(1, 5)]


def kleene(expr, values):  # type: ignore[no-untyped-def]
    """Evaluate AND/OR/NOT over atoms valued True, False or None (NULL)."""
    if isinstance(expr, ColumnRef):
        return values[expr.column.id]
    args = [kleene(a, values) for a in expr.args]
    if expr.form == "NOT":
        return None if args[0] is None else not args[0]
    if expr.form == "AND":
        return False if False in args else (None if None in args else True)
    if expr.form == "OR":
        return True if True in args else (None if None in args else False)
    raise AssertionError(expr.form)


def formulas():  # type: ignore[no-untyped-def]
    atom = st.sampled_from([ColumnRef(c) for c in ATOMS])
    conj = st.lists(atom, min_size=1, max_size=3).map(
        lambda xs: xs[0] if len(xs) == 1 else SpecialForm("AND", tuple(xs), T.BOOLEAN))
    return st.lists(conj, min_size=2, max_size=4).map(lambda xs: SpecialForm("OR", tuple(xs), T.BOOLEAN))


@settings(max_examples=300, deadline=None)
@given(formulas())
def test_factoring_is_exact_in_three_valued_logic(expr):
    factored = factor_or(expr)
    for assignment in itertools.product([True, False, None], repeat=len(ATOMS)):
        values = {c.id: v for c, v in zip(ATOMS, assignment)}
        assert kleene(factored, values) == kleene(expr, values), (str(expr), str(factored), values)


def test_common_conjunct_is_pulled_out():
    a, b, c = (ColumnRef(x) for x in ATOMS[:3])
    expr = SpecialForm("OR", (SpecialForm("AND", (a, b), T.BOOLEAN), SpecialForm("AND", (a, c), T.BOOLEAN)), T.BOOLEAN)
    assert str(factor_or(expr)) == f"({a} AND ({b} OR {c}))"
    assert factor_or(SpecialForm("OR", (a, SpecialForm("AND", (a, c), T.BOOLEAN)), T.BOOLEAN)) == a
    unrelated = SpecialForm("OR", (b, c), T.BOOLEAN)
    assert factor_or(unrelated) is unrelated


def test_q19_joins_on_partkey(tpch_parquet_catalog):
    from benchmarks.tpch.queries import select
    from cbo.sources.catalog import load_catalog
    from cbo.ir.operators import Join
    from cbo.physical.algorithm import Algorithm
    from cbo.planner import Planner

    planned = Planner(load_catalog(tpch_parquet_catalog)).plan(select(["q19"])[0].sql)
    joins = [n for n in planned.physical.operators() if isinstance(n.logical, Join)]
    assert len(joins) == 1 and joins[0].logical.has_equi_key
    assert joins[0].algorithm is not Algorithm.BROADCAST_NESTED_LOOP_JOIN
