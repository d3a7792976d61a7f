"""P-error (Han et al., "Cardinality Estimation in DBMS: A Comprehensive Benchmark Evaluation",
VLDB 2022): what estimation errors cost, measured in the cost model's own terms.

    P-error = C(P(est), true) / C(P(true), true)

``P(est)`` is the plan chosen with the estimates under test, ``P(true)`` the plan chosen with
true cardinalities (``cardinalities=oracle``), and ``C(plan, true)`` a plan's cost when every
operator's rows are the true ones. Each plan keeps what was chosen: its operators, algorithms,
exchanges and partition count; only the rows it is costed with change (``cost_under``). So a
P-error of 1 says the estimates, however wrong, chose a plan as cheap as the best one; unlike
q-error, it weighs an error by what it changed. It can be below 1 only where the search is not
exhaustive for the estimates given (a greedy join order; a rule decided by estimated bytes).

cbo's costs are predicted seconds on Spark, so a P-error can be set beside the measured ratio
of the two plans' running times (``benchmarks.cardinality.perror``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cbo.cost.model import CostModel
from cbo.errors import CboError
from cbo.ir.operators import Plan
from cbo.physical.algorithm import Algorithm
from cbo.physical.plan import PhysicalPlan

if TYPE_CHECKING:
    from typing import Any as PlannedQuery  # cbo.planner.PlannedQuery (the planner imports this module)


def cost_under(physical: PhysicalPlan, model: CostModel, true_rows: Callable[[Plan], float]) -> float:
    """The cost of ``physical`` as chosen, each operator costed with its true rows
    (``true_rows`` of the logical plan it runs) and its estimated row width."""
    total, _ = _recost(physical, model, true_rows)
    return total


def _recost(node: PhysicalPlan, model: CostModel, true_rows: Callable[[Plan], float]) -> tuple[float, float]:
    if node.is_enforcer:
        below, rows = _recost(node.inputs[0], model, true_rows)
        size = (rows, node.width)
        if node.algorithm is Algorithm.LOCAL_SORT:
            quantities = model.sort(size)
        elif node.algorithm is Algorithm.BROADCAST:
            quantities = {"broadcast_row": rows, "broadcast_byte": rows * node.width * model.profile.executors}
        elif node.algorithm is Algorithm.GATHER:
            quantities = model.exchange(rows, node.width, 1)
        else:
            quantities = model.exchange(rows, node.width)
        return below + model.enforcer_price(node.algorithm, quantities, size), rows
    inputs = [_recost(child, model, true_rows) for child in node.inputs]
    rows = float(true_rows(node.logical))
    sizes = [(r, child.width) for (_, r), child in zip(inputs, node.inputs)]
    quantities = model.quantities(node.logical, node.algorithm, (rows, node.width), sizes)
    own = model.operator_price(node.logical, node.algorithm, quantities, (rows, node.width), sizes)
    return own + sum(t for t, _ in inputs), rows


@dataclass(frozen=True)
class PError:
    """One query's P-error and what it is made of, with the q-errors of the chosen plan's operators."""

    estimated_cost: float        # the chosen plan's cost as the search saw it (estimated rows)
    cost_under_truth: float      # the same plan, costed with true rows
    optimal_cost: float          # the plan chosen with true rows, costed with them
    same_plan: bool              # whether both searches chose the same plan
    q_errors: tuple[float, ...]  # per operator of the chosen plan: max(est/true, true/est), rows floored at 1

    @property
    def p_error(self) -> float:
        if self.optimal_cost <= 0:
            return 1.0 if self.cost_under_truth <= 0 else math.inf
        return self.cost_under_truth / self.optimal_cost

    @property
    def q_error_max(self) -> float:
        return max(self.q_errors, default=1.0)

    @property
    def q_error_median(self) -> float:
        return statistics.median(self.q_errors) if self.q_errors else 1.0

    def to_json(self) -> dict[str, object]:
        return {"p_error": self.p_error, "cost_under_truth": self.cost_under_truth,
                "optimal_cost": self.optimal_cost, "estimated_cost": self.estimated_cost,
                "same_plan": self.same_plan, "q_error_max": self.q_error_max,
                "q_error_median": self.q_error_median}


def p_error(chosen: PlannedQuery, optimal: PlannedQuery, true_rows: Callable[[Plan], float]) -> PError:
    """P-error of ``chosen`` (planned with the estimates under test) against ``optimal``
    (planned with ``cardinalities=oracle``); ``true_rows`` counts a plan's rows (the oracle's
    ``true_rows``, whose counts it keeps)."""
    for planned, what in ((chosen, "the plan under test"), (optimal, "the plan with true cardinalities")):
        if planned.optimized is None or planned.optimized.search is None:
            raise CboError(f"P-error needs {what} from the memo search")
    assert chosen.optimized is not None and chosen.optimized.search is not None
    assert optimal.optimized is not None and optimal.optimized.search is not None
    under = cost_under(chosen.optimized.physical, chosen.optimized.search.cost_model, true_rows)
    best = cost_under(optimal.optimized.physical, optimal.optimized.search.cost_model, true_rows)
    q_errors = []
    for node in chosen.optimized.physical.operators():
        truth = max(float(true_rows(node.logical)), 1.0)
        estimate = max(node.rows, 1.0)
        q_errors.append(max(truth / estimate, estimate / truth))
    mine, theirs = chosen.optimized.physical, optimal.optimized.physical
    same = mine.logical == theirs.logical and [n.algorithm for n in mine.walk()] == [n.algorithm for n in theirs.walk()]
    return PError(chosen.optimized.cost, under, best, same, tuple(q_errors))


__all__ = ["PError", "cost_under", "p_error"]
