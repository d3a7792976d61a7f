"""Every concern handles every logical operator, in one place each (``cbo.ir.dispatch``); an
operator a concern lacks is a clear error naming the concern, not a silent default."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from cbo.cost.model import QUANTITIES, CostModel
from cbo.estimate.estimator import ESTIMATES, Estimator
from cbo.app.explain import DETAILS, describe
from cbo.ir.dispatch import LOGICAL_OPERATORS, UnsupportedOperator
from cbo.ir.operators import Plan, UnaryPlan
from cbo.memo.delivery import DELIVERY
from cbo.memo.rules.implement import implementation_rules
from cbo.sqlgen import SqlRenderer, to_sql

TABLES = {"estimation": ESTIMATES, "cost": QUANTITIES, "delivered properties": DELIVERY, "EXPLAIN": DETAILS}


@pytest.mark.parametrize("concern", sorted(TABLES))
@pytest.mark.parametrize("operator", LOGICAL_OPERATORS, ids=lambda o: o.__name__)
def test_every_concern_handles_every_operator(concern, operator):
    assert TABLES[concern].handles(operator), f"{concern} has no handler for {operator.__name__}"


@pytest.mark.parametrize("operator", LOGICAL_OPERATORS, ids=lambda o: o.__name__)
def test_every_operator_renders_as_sql_and_has_an_implementation(operator):
    assert SqlRenderer.handles(operator)
    assert any(issubclass(operator, rule.operator) for rule in implementation_rules())


def test_the_logical_operators_are_all_there_are():
    def subclasses(cls: type) -> set[type]:
        found = set()
        for sub in cls.__subclasses__():
            found |= {sub} | subclasses(sub)
        return found

    # Operators of the IR (not the memo's group reference, not the abstract unary base).
    defined = {c for c in subclasses(Plan) if c.__module__ == "cbo.ir.operators" and c is not UnaryPlan}
    assert defined == set(LOGICAL_OPERATORS)


@dataclass(frozen=True)
class Mystery(UnaryPlan):
    """An operator no concern knows."""

    input: Plan


def test_an_unknown_operator_is_a_clear_error_in_each_concern():
    from cbo.ir import types as T
    from cbo.ir.expressions import Column
    from cbo.ir.operators import Scan

    plan = Mystery(Scan("lake.t", (Column(1, "a", T.BIGINT, True),), ("a",)))
    with pytest.raises(UnsupportedOperator, match="estimation has no handler for the operator Mystery"):
        Estimator({}).estimate(plan)
    with pytest.raises(UnsupportedOperator, match="cost has no handler"):
        CostModel().quantities(plan, None, (1.0, 8.0), [(1.0, 8.0)])
    with pytest.raises(UnsupportedOperator, match="EXPLAIN has no handler"):
        describe(plan)
    with pytest.raises(UnsupportedOperator, match="SQL rendering has no handler"):
        to_sql(plan, ("a",), "duckdb")
