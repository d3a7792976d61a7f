"""The join enumeration's shortcuts change nothing but time: ``Memo.add_join`` (the common case of
``Memo.add`` in line) and ``JoinGraph.condition_and_keys``' classes kept per left set. For join
graphs of every shape and several seeds, the search with the shortcuts and the search through the
general ``Memo.add`` choose the same plan at the same cost, and list the same memo, character for
character (groups, expressions in order, costs, bounds, counters); a region's pairs asked in any
order get the condition and keys their own conjuncts make."""

from __future__ import annotations

import random
import re

import pytest

from benchmarks.join_enumeration.shapes import SHAPES, build
from cbo.estimate import Estimator
from cbo.ir.expressions import Expr, conjunction
from cbo.joinorder.dphyp import DPhyp
from cbo.joinorder.graph import JoinGraph, region_of
from cbo.memo.memo import Memo
from cbo.memo.render import memo_text
from cbo.memo.search import Optimized, Optimizer
from cbo.settings import OptimizerSettings


def _search(shape: str, n: int, seed: int) -> Optimized:
    workload = build(shape, n, seed)
    settings = OptimizerSettings(max_reordered_joins=n, max_join_pairs=60_001)
    return Optimizer(Estimator(workload.stats), settings).optimize(workload.plan)


def _general_add(self: Memo, expr, group, rule):  # type: ignore[no-untyped-def]
    return self.add(expr, group, rule)[0]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_shortcut_adds_what_the_general_add_adds(shape: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    n = 6 + seed
    fast = _search(shape, n, seed)
    fast_text = memo_text(fast)
    with monkeypatch.context() as patched:
        patched.setattr(Memo, "add_join", _general_add)
        general = _search(shape, n, seed)
        general_text = memo_text(general)
    # (a physical plan's repr spells out every operator, input and estimate: its equality
    # compares some parts by identity, different in two searches)
    assert repr(fast.physical) == repr(general.physical)
    assert fast.cost == general.cost
    assert fast.memo.counters.join_pairs == general.memo.counters.join_pairs > 0
    # (the search's elapsed time, on the listing's first line, differs)
    assert re.sub(r"[0-9.]+ ms$", "", fast_text, count=1, flags=re.M) == \
        re.sub(r"[0-9.]+ ms$", "", general_text, count=1, flags=re.M)
    assert len(fast.memo.added_by) == len(general.memo.added_by)


def _plain(graph: JoinGraph, left: int, right: int) -> tuple[Expr, tuple]:
    found, pairs = [], []
    for cls in graph.classes:
        if cls.mask & left and cls.mask & right:
            equality, pair = cls.equality_and_pair(left, right)
            found.append(equality)
            pairs.append(pair)
    graph._place_conjuncts(left, right, found, pairs)
    return conjunction(found), tuple(pairs)


@pytest.mark.parametrize("shape", SHAPES)
def test_conditions_in_any_order_are_each_pairs_own(shape: str) -> None:
    workload = build(shape, 7, 3)
    graph = region_of(Memo(Estimator(workload.stats)).insert(workload.plan))
    pairs: list[tuple[int, int]] = []
    DPhyp(graph.hypergraph, lambda a, b: pairs.append((a, b))).run()
    random.Random(shape).shuffle(pairs)   # left sets met out of DPhyp's order, and again later
    for a, b in pairs + pairs[: len(pairs) // 2]:
        kind, swap = graph.join_kind(a, b)
        left, right = (b, a) if swap else (a, b)
        assert graph.condition_and_keys(left, right, kind) == _plain(graph, left, right), (left, right)
