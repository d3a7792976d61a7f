"""Cost plug-ins: a researcher's function prices each physical operator.

A cost function (:class:`CostFunction`) is called with an :class:`OperatorCost`: the physical
operator (its ``Algorithm`` and the logical operator it runs; for an enforcer, the sort or
exchange and the plan below it), the estimated rows and row width of its output and of each
input, its **quantities** (what it does, in the profile's units: rows scanned, hashed, bytes
shuffled, ... ``cbo.cost.profile``), and cbo's own price of them. It returns the operator's
cost in any unit, the same for every operator (the search adds them up). The plan's cost is
the sum over its operators, so a cost still depends only on the operator and its groups'
estimates (the optimal substructure the search needs).

cbo's bounds are lower bounds of its own costs, not of another function's: with a cost
function the search costs every alternative (``Optimizer`` turns pruning off). It is slower
(every join strategy of every enumerated pair is costed) and exact for any function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from cbo.cost.model import CostModel, Quantities, Size
from cbo.cost.profile import CostProfile
from cbo.errors import CboError
from cbo.ir.expressions import Column
from cbo.ir.operators import Plan
from cbo.physical.algorithm import Algorithm


@dataclass(frozen=True)
class OperatorCost:
    """What a cost function sees of one physical operator.

    ``node`` is the logical operator (for an enforcer: None); ``output`` and ``inputs`` are
    (estimated rows, bytes per row); ``quantities`` what the operator alone does;
    ``default`` cbo's cost of them (predicted seconds with the session's profile)."""

    algorithm: Algorithm
    node: Plan | None
    output: Size
    inputs: tuple[Size, ...]
    quantities: Mapping[str, float]
    default: float

    @property
    def enforcer(self) -> bool:
        return self.algorithm.enforcer


class CostFunction(Protocol):
    """A cost plug-in: the cost of one operator, never negative."""

    def __call__(self, operator: OperatorCost) -> float: ...


class FunctionCostModel(CostModel):
    """cbo's cost model with each operator's price given by a function: the quantities are
    cbo's, what they cost is the function's."""

    def __init__(self, function: CostFunction, profile: CostProfile | None = None,
                 remote_tables: frozenset[str] = frozenset(), partitions: int | None = None,
                 column_width: Callable[[Column], float] | None = None,
                 remote_dialects: Mapping[str, str] | None = None):
        super().__init__(profile, remote_tables, partitions, column_width, remote_dialects)
        self.function = function

    def _call(self, operator: OperatorCost) -> float:
        cost = self.function(operator)
        try:
            value = float(cost)
        except (TypeError, ValueError):
            raise CboError(f"cost function {_name(self.function)} returned {cost!r} for "
                           f"{operator.algorithm.name}, not a number") from None
        if not value >= 0:
            raise CboError(f"cost function {_name(self.function)} returned {value!r} for "
                           f"{operator.algorithm.name}: a cost is a non-negative number")
        return value

    def operator_price(self, node: Plan, algorithm: Algorithm, quantities: Quantities, out: Size,
                       inputs: list[Size]) -> float:
        return self._call(OperatorCost(algorithm, node, out, tuple(inputs), dict(quantities), self.price(quantities)))

    def enforcer_price(self, algorithm: Algorithm, quantities: Quantities, size: Size) -> float:
        return self._call(OperatorCost(algorithm, None, size, (size,), dict(quantities), self.price(quantities)))

    def local(self, node: Plan, algorithm: Algorithm, out: Size, inputs: list[Size]) -> float:
        return self.operator_price(node, algorithm, self.quantities(node, algorithm, out, inputs), out, inputs)

    def join_kind_local(self, kind: str, algorithm: Algorithm, out: Size, left: Size, right: Size) -> float:
        quantities = self._join_quantities(kind, algorithm, out, [left, right])
        return self._call(OperatorCost(algorithm, None, out, (left, right), quantities, self.price(quantities)))

    def join_floor(self, out: Size, inputs: list[Size]) -> float:
        return 0.0   # no bound is known of another function's costs (pruning is off anyway)

    def join_floors(self, out: Size, left_rows: list[float], right_rows: list[float]) -> list[float]:
        return [0.0] * len(left_rows)


def _name(function: object) -> str:
    return getattr(function, "__name__", type(function).__name__)


__all__ = ["CostFunction", "FunctionCostModel", "OperatorCost"]
