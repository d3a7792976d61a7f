"""Deferred join expressions change nothing the search decides.

``RegionBuilder`` defers most join pairs of an enumeration (``Memo.defer``): a join is made
only when the search reads more of it than its input groups. Making every pair as the
enumeration meets it (``RegionBuilder.deferred = False``) is the yardstick: on join graphs of
every shape and on random ones (equalities that form classes, non-equality and three-relation
conjuncts, local filters, aggregated relations, cross products, left and semi joins, an
aggregation on top), the
chosen plan, its cost, every group's estimate and the memo's listing (made in full) must be
the same either way.
"""

from __future__ import annotations

import math
import random
import re

import pytest

from benchmarks.join_enumeration.shapes import SHAPES, build
from cbo.estimate import Estimator
from cbo.ir import types as T
from cbo.ir.expressions import TRUE, AggregateCall, Call, ColumnFactory, ColumnRef, Constant, Expr, conjunction
from cbo.ir.operators import Aggregate, Filter, Join, Plan, Scan
from cbo.memo.memo import Deferred, Memo
from cbo.memo.render import memo_text
from cbo.memo.rules import implement
from cbo.memo.rules.reorder_joins import RegionBuilder
from cbo.memo.search import Optimizer
from cbo.settings import OptimizerSettings
from stats.model import ColumnStats, TableStats


def _searched(plan: Plan, stats: dict[str, TableStats], n: int, deferred: bool, monkeypatch):
    monkeypatch.setattr(RegionBuilder, "deferred", deferred)
    settings = OptimizerSettings(max_reordered_joins=max(n, 2), max_join_pairs=100_000)
    return Optimizer(Estimator(stats), settings).optimize(plan)


def _facts(result) -> tuple:
    """What must not depend on deferral: plan, cost, estimates, the memo listing in full."""
    estimates = tuple((g.id, g.rows) for g in result.memo)
    # (the listing's first line ends with the time the search took)
    listing = re.sub(r"; [0-9.]+ ms$", "", memo_text(result), count=1, flags=re.M)
    return str(result.physical), result.cost, estimates, listing


def _compare(plan: Plan, stats: dict[str, TableStats], n: int, monkeypatch) -> int:
    """Assert both searches agree; how many joins stayed deferred until the listing."""
    eager = _searched(plan, stats, n, False, monkeypatch)
    lazy = _searched(plan, stats, n, True, monkeypatch)
    waiting = sum(isinstance(e, Deferred) for g in lazy.memo for e in g.entries)
    assert not any(isinstance(e, Deferred) for g in eager.memo for e in g.entries)
    eager_facts, lazy_facts = _facts(eager), _facts(lazy)
    assert lazy_facts[:3] == eager_facts[:3]
    assert lazy_facts[3] == eager_facts[3]
    return waiting


@pytest.mark.parametrize("shape", SHAPES)
def test_shapes_search_the_same_deferred(shape, monkeypatch):
    waiting = 0
    for n in (4, 6, 8):
        for seed in range(2):
            workload = build(shape, n, seed)
            waiting += _compare(workload.plan, workload.stats, n, monkeypatch)
    if shape in ("clique", "star"):
        # most of their joins are never made: a clique's are never read, a star's are beaten
        # by their floors, read from the deferred records (``ImplementationRule.deferred_floor``)
        assert waiting > 0


def _column_stats(name: str, distinct: float, rows: float) -> ColumnStats:
    return ColumnStats(name, "number", 0.0, distinct, 1, int(max(rows, 1)), 8.0, 8)


def _random_query(seed: int) -> tuple[Plan, dict[str, TableStats], int]:
    rng = random.Random(f"deferred-joins-{seed}")
    factory = ColumnFactory()
    n = rng.randint(4, 7)
    scans: list[Scan] = []
    stats: dict[str, TableStats] = {}
    for i in range(n):
        rows = float(10 ** rng.uniform(2, 6))
        names = ("id", "a", "b")
        columns = tuple(factory.new(name, T.BIGINT, nullable=False) for name in names)
        table = f"rnd.t{i}"
        scans.append(Scan(table, columns, names, ((columns[0],),)))
        stats[table] = TableStats(table, rows, rows * 24, "2026-01-01T00:00:00Z", "synthetic", "synthetic",
                                  columns={"id": _column_stats("id", rows, rows),
                                           "a": _column_stats("a", max(rows / 10, 1), rows),
                                           "b": _column_stats("b", rng.choice([10.0, 100.0, rows]), rows)})

    def ref(i: int, name: str) -> ColumnRef:
        return ColumnRef(scans[i].columns[("id", "a", "b").index(name)])

    def call(op: str, *args: Expr) -> Expr:
        return Call(op, args, T.BOOLEAN)

    # The last relation may join by a left or semi join above the rest; the others by inner
    # joins, some conjuncts of which are placed on the written join that first covers them.
    outer = rng.choice([None, "left", "semi"]) if n > 4 else None
    inner_n = n - 1 if outer else n
    conjuncts: list[tuple[int, Expr]] = []   # (highest relation read, conjunct)
    for j in range(1, inner_n):
        if rng.random() < 0.15:
            continue   # no edge to j here: a cross product unless another conjunct reaches it
        i = rng.randrange(j)
        kind = rng.random()
        if kind < 0.5:
            conjuncts.append((j, call("eq", ref(i, "a"), ref(j, "id"))))
        elif kind < 0.7:
            conjuncts.append((j, call("eq", ref(i, "b"), ref(j, "b"))))   # classes over b
        elif kind < 0.85:
            conjuncts.append((j, call("lt", ref(i, "a"), ref(j, "a"))))
        elif j >= 2:
            k = rng.randrange(j)
            total = Call("add", (ref(i, "a"), ref(k, "b")), T.BIGINT)
            conjuncts.append((j, call("eq", total, ref(j, "a"))))      # reads three relations
        for _ in range(rng.randint(0, 1)):
            x, y = rng.sample(range(j + 1), 2)
            conjuncts.append((max(x, y), call("eq", ref(x, "b"), ref(y, "b"))))
    plan: Plan = scans[0]
    for j in range(1, inner_n):
        right: Plan = scans[j]
        if rng.random() < 0.3:
            # an aggregated relation (by all its columns): what table pushdown's patterns bind
            summed = factory.new("summed", T.BIGINT)
            right = Aggregate(right, scans[j].columns, ((summed, AggregateCall("sum", (ref(j, "a"),), False,
                                                                                T.BIGINT)),))
        if rng.random() < 0.3:
            right = Filter(right, call("gt", ref(j, "b"), Constant(rng.randint(1, 50), T.BIGINT)))
        on = [c for top, c in conjuncts if top == j]
        plan = Join("inner", plan, right, conjunction(on) if on else TRUE)
    if outer:
        last = n - 1
        plan = Join(outer, plan, scans[last], call("eq", ref(rng.randrange(last), "a"), ref(last, "id")))
    if rng.random() < 0.5:
        key = scans[0].columns[2]
        value = scans[rng.randrange(inner_n)].columns[1]
        total = factory.new("total", T.BIGINT)
        plan = Aggregate(plan, (key,), ((total, AggregateCall("sum", (ColumnRef(value),), False, T.BIGINT)),))
    return plan, stats, n


@pytest.mark.parametrize("seed", range(16))
def test_random_graphs_search_the_same_deferred(seed, monkeypatch):
    plan, stats, n = _random_query(seed)
    _compare(plan, stats, n, monkeypatch)


def test_a_wrong_deferred_join_is_caught(monkeypatch):
    """The comparison fails when deferred joins are made wrongly (their sides swapped)."""
    workload = build("clique", 6, 0)
    original = Memo.make

    def swapped(self: Memo, record: Deferred) -> Plan:
        if record.made is None:
            kind, left, right = record.args
            record.args = (kind, right, left)
        return original(self, record)

    monkeypatch.setattr(Memo, "make", swapped)
    with pytest.raises(AssertionError) as caught:
        _compare(workload.plan, workload.stats, 6, monkeypatch)
    assert "made twice" not in str(caught.value)   # (the comparison caught it, not Memo.make)


def test_a_wrong_deferred_floor_is_caught(monkeypatch):
    """The comparison fails when a deferred join's floor is not the made join's: here the
    swapped orientation of each deferred inner join is forgotten (``_deferred_sides``), so its
    floor is too high and a join the made join's floors would implement is skipped unmade."""
    workload = build("clique", 6, 0)

    def one_way(record: Deferred) -> tuple:
        return ((record.inputs[0].find(), record.inputs[1].find()),)

    monkeypatch.setattr(implement, "_deferred_sides", one_way)
    with pytest.raises(AssertionError) as caught:
        _compare(workload.plan, workload.stats, 6, monkeypatch)
    assert "made twice" not in str(caught.value)   # (the comparison caught it, not Memo.make)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_records_floor_is_its_made_joins(shape, monkeypatch):
    """The oracle for ``deferred_floor``: for every join record a search left unmade or skipped,
    each join rule's floor of the record equals its floor of the join the record makes (infinite
    where the rule does not match; None, "cannot tell", only where the made join has none
    either). A floor too high would skip a join that could win; one too low only costs time,
    which the plan comparison above cannot see."""
    workload = build(shape, 6, 1)
    result = _searched(workload.plan, workload.stats, 6, True, monkeypatch)
    search = result.search
    records = {id(e): e for g in result.memo for e in g.entries if isinstance(e, Deferred)}
    records.update((id(s.expr), s.expr) for s in search.state.exprs.values() if s.skipped and isinstance(s.expr, Deferred))
    assert records, "the search left no join unmade: nothing checked"
    checked = 0
    for record in records.values():
        group = record.group.find()
        rules = search.dispatch.implementations(Join)
        floors = [rule.deferred_floor(record, group, search.context, search.bounds) for rule in rules]
        made = search.memo.make(record)
        for rule, floor in zip(rules, floors):
            matches = rule.matches(made, group, search.context)
            expected = rule.floor(made, group, search.context, search.bounds) if matches else math.inf
            if floor is None:
                assert expected is None or rule.name == "ScalarSubqueryJoin", (rule.name, record)
                continue
            assert floor == expected, (rule.name, record, floor, expected)
            checked += 1
    assert checked > len(records)
