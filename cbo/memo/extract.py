"""The chosen plan out of the memo: an ordinary plan with each operator's strategy, the
enforcers (exchanges, sorts) Spark adds below each operator, and the plan's cost quantities."""

from __future__ import annotations

from cbo.cost.model import Quantities
from cbo.ir.operators import Plan
from cbo.memo.cascades import CascadesSearch
from cbo.memo.memo import Group, Winner
from cbo.memo.properties import Required


class Extraction:
    """The chosen plan as an ordinary plan, with each join's strategy, the enforcers Spark will
    add below each operator, and the quantities of the whole plan (for calibration)."""

    def __init__(self, search: CascadesSearch):
        self.search = search
        self.strategies: dict[Plan, str] = {}
        self.exchanges: dict[Plan, list[str]] = {}
        self.quantities: Quantities = {}
        self.groups: dict[Plan, Group] = {}   # each extracted node -> the group it came from

    def plan(self, winner: Winner, group: Group) -> Plan:
        node, _ = self._extract(winner, group)
        return node

    def _count(self, found: Quantities) -> None:
        for name, value in found.items():
            self.quantities[name] = self.quantities.get(name, 0.0) + value

    def _extract(self, winner: Winner, group: Group) -> tuple[Plan, list[str]]:
        """(plan, enforcers on top of it, innermost first)."""
        model = self.search.cost_model
        if winner.physical is None:
            assert winner.base is not None and winner.enforcer is not None
            node, enforcers = self._extract(winner.base, group)
            size = self.search.size(group)
            names = {c.id: str(c) for c in group.output}
            if winner.enforcer.ordering:
                self._count(model.sort(size))
                enforcers.append("sort(" + ", ".join(names.get(c, f"c{c}") for c in winner.enforcer.ordering) + ")")
            else:
                self._count(model.distribute(winner.enforcer, size))
                enforcers.append(_exchange_name(winner.enforcer, names))
            return node, enforcers
        physical = winner.physical
        sizes = [self.search.size(g) for g in physical.inputs]
        self._count(model.quantities(physical.node, physical.strategy, self.search.size(group), sizes))
        children = []
        below: list[str] = []
        for child, need in zip(physical.inputs, physical.required_inputs):
            plan, enforcers = self._extract(child.winner(need), child)
            children.append(plan)
            below.append(" + ".join(enforcers))
        node = physical.node.with_children(tuple(children)) if children else physical.node
        self.groups[node] = group
        if physical.strategy:
            self.strategies[node] = physical.strategy
        if any(below):
            self.exchanges[node] = below
        return node, []


def _exchange_name(need: Required, names: dict[int, str]) -> str:
    if need.distribution == "broadcast":
        return "broadcast"
    if need.distribution == "single":
        return "gather"
    return "shuffle(" + ", ".join(names.get(c, f"c{c}") for c in need.partitioning) + ")"


