"""The exploration's shortcuts skip only what could not match: the memo is the one the plain loop
builds, expression for expression.

``PatternDispatch.runs`` dispatches a join's patterns by its kind (``Pattern.kinds``), runs a
test shared by adjacent patterns once, and asks a run of one-input patterns whether any input
group holds what they need before trying each (``could_bind_any``). The yardstick is the plain
loop: every pattern of the operator, its test, then ``could_bind_inputs``, one by one.
Both must explore the same groups in the same order, so the memo, and the plan, are the same.
"""

from __future__ import annotations

import pytest

from benchmarks.join_enumeration.shapes import build
from benchmarks.tpch.queries import all_queries
from cbo.estimate import Estimator
from cbo.ir import types as T
from cbo.ir.expressions import TRUE, Call, Column, ColumnRef, SpecialForm, and_of_distinct
from cbo.ir.operators import JOIN_KINDS, Join, Scan, enumerated_join
from cbo.memo import cascades, dispatch
from cbo.memo.search import Optimizer, default_rules
from cbo.planner import Planner
from cbo.settings import OptimizerSettings
from cbo.sources.catalog import load_catalog
from stats.store import StatsStore
from tests.plan_files import TPCH_STATS


class PlainLoop(dispatch.PatternDispatch):
    """The dispatch with one run per pattern, no kind dispatch and no shared input check."""

    def _runs(self, operator, kind):
        return [(pattern.test, [(rule, pattern, pattern.inputs_patterned)], None)
                for rule in self.rules for pattern in rule.patterns if issubclass(operator, pattern.operator)]


def _memo(result) -> list[tuple[int, list[str]]]:
    return [(group.id, [repr(expr) for expr in group.expressions]) for group in result.memo]


def _both(monkeypatch, optimize):
    fast = optimize()
    monkeypatch.setattr(cascades, "PatternDispatch", PlainLoop)   # the class the search builds
    plain = optimize()
    monkeypatch.undo()
    return fast, plain


def _scan(name: str, first: int) -> Scan:
    columns = (Column(first, "a", T.BIGINT), Column(first + 1, "b", T.BIGINT))
    return Scan(name, columns, ("a", "b"), ((columns[0],),))


def test_join_kinds_only_skip_what_the_tests_reject():
    left, right = _scan("l", 1), _scan("r", 3)
    equal = Call("eq", (ColumnRef(left.columns[0]), ColumnRef(right.columns[0])), T.BOOLEAN)
    checked = 0
    for rule in default_rules().transformations():
        for pattern in rule.patterns:
            if pattern.kinds is None:
                continue
            for kind in JOIN_KINDS:
                join = Join(kind, left, right, equal)
                if kind not in pattern.kinds:
                    checked += 1
                    assert pattern.test is not None and not pattern.test(join), (rule.name, kind)
                assert pattern.matches_operator(join) == (kind in pattern.kinds and pattern.test(join))
    assert checked > 0


def test_a_patterns_test_of_a_deferred_join_is_its_test_of_the_made_join():
    """A pattern's predicate is declared once; its test of a made join and of the record a
    deferred join is (its kind, whether it has a condition, its keys) agree for every rule's
    pattern, every join kind and conditions with and without equi-join keys or none at all."""
    from types import SimpleNamespace

    left, right = _scan("l", 1), _scan("r", 3)
    keyed = Call("eq", (ColumnRef(left.columns[0]), ColumnRef(right.columns[0])), T.BOOLEAN)
    computed = Call("eq", (Call("add", (ColumnRef(left.columns[0]), ColumnRef(left.columns[1])), T.BIGINT),
                           ColumnRef(right.columns[0])), T.BOOLEAN)
    checked = 0
    for rule in default_rules().transformations():
        for pattern in rule.patterns:
            if pattern.where is None or pattern.deferred_test is None:
                continue
            for kind in JOIN_KINDS:
                for condition in (TRUE, keyed, computed):
                    join = Join(kind, left, right, condition)
                    record = SimpleNamespace(kind=kind, conditioned=lambda c=condition: c != TRUE,
                                             keys=lambda j=join: j.equi_keys)
                    assert pattern.deferred_test(record) == pattern.test(join), (rule.name, kind, condition)  # type: ignore[arg-type,misc]
                    checked += 1
            assert pattern.describe().startswith(f"Join[{pattern.where.label}]")
    assert checked > 0


def test_an_enumerated_join_is_the_join():
    left, right = _scan("l", 1), _scan("r", 3)
    equal = Call("eq", (ColumnRef(left.columns[0]), ColumnRef(right.columns[0])), T.BOOLEAN)
    keys = ((left.columns[0], right.columns[0]),)
    made = enumerated_join("inner", left, right, equal, keys)
    written = Join("inner", left, right, equal)
    assert made == written and hash(made) == hash(written)
    assert made.equi_keys == written.equi_keys == keys
    assert enumerated_join("left", left, right, equal, None).equi_keys == Join("left", left, right, equal).equi_keys
    # a condition of several conjuncts, built without conjunction()'s flattening
    other = Call("eq", (ColumnRef(left.columns[1]), ColumnRef(right.columns[1])), T.BOOLEAN)
    both = and_of_distinct((equal, other))
    assert both == SpecialForm("AND", (equal, other), T.BOOLEAN)
    assert hash(both) == hash(SpecialForm("AND", (equal, other), T.BOOLEAN))
    made = enumerated_join("inner", left, right, both, None)
    assert made == Join("inner", left, right, both) and hash(made) == hash(Join("inner", left, right, both))
    assert {made: 1}.get(Join("inner", left, right, SpecialForm("AND", (equal, other), T.BOOLEAN))) == 1


@pytest.mark.parametrize("shape", ["star", "clique", "snowflake"])
def test_shapes_explore_as_the_plain_loop(monkeypatch, shape):
    workload = build(shape, 6, 1)
    settings = OptimizerSettings(max_reordered_joins=6)
    fast, plain = _both(monkeypatch, lambda: Optimizer(Estimator(workload.stats), settings).optimize(workload.plan))
    assert _memo(fast) == _memo(plain)
    assert fast.cost == plain.cost


def test_tpch_explores_as_the_plain_loop(monkeypatch, tpch_parquet_catalog):
    store = StatsStore(TPCH_STATS)
    estimator = Estimator({t: store.load(t).stats for t in store.tables()})
    planner = Planner(load_catalog(tpch_parquet_catalog), estimator=estimator)
    for query in all_queries():
        _, normalized, _ = planner.logical(query.sql)
        fast, plain = _both(monkeypatch, lambda n=normalized: planner.optimizer().optimize(n))
        assert _memo(fast) == _memo(plain), query.name
        assert fast.cost == plain.cost, query.name
