"""A plan's logical properties are derived from each input once per read: a join reading its
inputs' keys several times made a tree of d joins derive its leaves' keys 3^d times (TPC-DS
q64's CTE, read by a consumer, took seconds to plan)."""

from __future__ import annotations

import pytest

from cbo.ir import types as T
from cbo.ir.expressions import ColumnFactory, ColumnRef, compare
from cbo.ir.operators import Join, Plan, Scan


def _chain(joins: int) -> tuple[Plan, list[Scan]]:
    factory = ColumnFactory()
    scans = []
    for i in range(joins + 1):
        key, ref = factory.new(f"k{i}", T.INTEGER), factory.new(f"r{i}", T.INTEGER)
        scans.append(Scan(f"s.t{i}", (key, ref), ("k", "r"), ((key,),)))
    plan: Plan = scans[0]
    for previous, scan in zip(scans, scans[1:]):
        # each row of the chain meets one row of the next table (its key): the chain keeps its keys
        plan = Join("inner", plan, scan, compare("eq", ColumnRef(previous.columns[1]), ColumnRef(scan.columns[0])))
    return plan, scans


def test_a_join_chain_reads_each_leaf_key_once(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = []
    derive = Scan.unique_keys.fget   # type: ignore[attr-defined]

    def counted(self):  # type: ignore[no-untyped-def]
        reads.append(self.table)
        return derive(self)

    monkeypatch.setattr(Scan, "unique_keys", property(counted))
    plan, scans = _chain(10)
    assert frozenset({scans[0].columns[0]}) in plan.unique_keys   # the first table's key
    assert len(reads) <= 2 * len(scans), f"{len(reads)} reads of {len(scans)} leaves' keys"
