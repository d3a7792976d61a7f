"""The physical plan: the tree of physical operators the search chose.

Each node is one operator as it runs: its algorithm, the logical operator it implements, what
it required of each input and what it delivers, its estimated rows and bytes, and its cost
(its own, and with everything below it). Enforcers (shuffles, broadcasts, gathers, sorts) are
nodes of their own, between an operator and the input that did not deliver what the operator
required. Spark SQL generation, DuckDB execution, EXPLAIN, the plan files and calibration all
read this one tree; nothing else carries physical choices.

``logical`` of each operator node is the logical plan it and its inputs compute, built along
with the tree, so the logical plan of the whole query is ``root.logical`` and each of its
nodes maps back to exactly one physical node (by identity: two equal subtrees of a self-join
may run differently).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from cbo.ir.operators import Plan
from cbo.physical.algorithm import Algorithm
from cbo.physical.properties import UNKNOWN, Delivered, Required

Quantities = dict[str, float]


@dataclass(frozen=True, eq=False)
class PhysicalPlan:
    algorithm: Algorithm
    logical: Plan                          # for an enforcer: the plan it moves or sorts
    inputs: tuple[PhysicalPlan, ...] = ()
    rows: float = 0.0                      # estimated output rows
    width: float = 0.0                     # estimated bytes per row
    cost: float = 0.0                      # this operator's own cost
    total: float = 0.0                     # with its inputs
    required: tuple[Required, ...] = ()    # of each input
    delivered: Delivered = UNKNOWN
    quantities: Quantities = field(default_factory=dict)   # what it alone does (cbo.cost.profile)
    group: Any = None                      # the memo group it came from (its estimate)
    rule: str | None = None                # the implementation rule that proposed it
    detail: str = ""                       # an enforcer's columns: "shuffle(l_orderkey)"
    expression: Any = None                 # the memo expression it runs (inputs are groups)

    @property
    def bytes(self) -> float:
        return self.rows * self.width

    @property
    def is_enforcer(self) -> bool:
        return self.algorithm.enforcer

    @property
    def strategy(self) -> str | None:
        """What EXPLAIN shows as the operator's strategy."""
        return self.algorithm.shown

    def walk(self) -> Iterator[PhysicalPlan]:
        yield self
        for child in self.inputs:
            yield from child.walk()

    def operators(self) -> Iterator[PhysicalPlan]:
        return (node for node in self.walk() if not node.is_enforcer)

    def input_operators(self) -> list[tuple[PhysicalPlan, list[PhysicalPlan]]]:
        """Per input: the operator below and the enforcers between it and this one (innermost
        first)."""
        found = []
        for child in self.inputs:
            enforcers = []
            while child.is_enforcer:
                enforcers.append(child)
                child = child.inputs[0]
            found.append((child, enforcers[::-1]))
        return found

    def exchanges(self) -> list[str]:
        """Per input, the enforcers on it as EXPLAIN shows them ("" for none)."""
        return [" + ".join(e.describe() for e in enforcers) for _, enforcers in self.input_operators()]

    def describe(self) -> str:
        return self.detail or self.algorithm.label

    def by_logical(self) -> dict[int, PhysicalPlan]:
        """Each logical node of ``self.logical`` (by identity) -> the operator that runs it (for
        the logical nodes an operator runs inside itself, like a top-N's sort, that operator)."""
        found: dict[int, PhysicalPlan] = {}
        for node in self.operators():
            found[id(node.logical)] = node
            inputs = {id(i.logical) for i in node.inputs}
            stack = list(node.logical.children)
            while stack:
                inner = stack.pop()
                if id(inner) not in inputs:
                    found.setdefault(id(inner), node)
                    stack.extend(inner.children)
        return found

    def total_quantities(self) -> Quantities:
        total: Quantities = {}
        for node in self.walk():
            for name, value in node.quantities.items():
                total[name] = total.get(name, 0.0) + value
        return total

    def strategies(self) -> dict[int, Algorithm]:
        """Each logical node (by identity) -> its algorithm."""
        return {id(node.logical): node.algorithm for node in self.operators()}

    def text(self, indent: int = 0) -> str:
        """The tree, one operator per line (for debugging and notebooks)."""
        label = type(self.logical).__name__ if not self.is_enforcer else "Exchange"
        line = (f"{'  ' * indent}{self.describe() if self.is_enforcer else label}"
                f"{'' if self.is_enforcer or not self.strategy else ' [' + self.strategy + ']'}"
                f"  rows={self.rows:,.0f} cost={self.total:.4g}")
        return "\n".join([line] + [child.text(indent + 1) for child in self.inputs])
