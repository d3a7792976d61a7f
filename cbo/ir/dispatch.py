"""One place per operator per concern: a table from operator type to its handler.

Each concern that treats operators differently (estimation, cost, delivered properties,
EXPLAIN's details, SQL rendering) keeps one ``OperatorTable`` and registers one handler per
operator. An operator without a handler is a clear error naming the concern, never a silent
default; ``tests/quick/test_operator_tables.py`` checks that every concern handles every
operator of ``LOGICAL_OPERATORS``, so adding an operator shows every place it needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from cbo.errors import CboError
from cbo.ir.operators import (
    Aggregate,
    CteAnchor,
    CteConsumer,
    Filter,
    GroupingSets,
    Join,
    Limit,
    Plan,
    Project,
    Scan,
    SetOp,
    Sort,
    Values,
    Window,
)

LOGICAL_OPERATORS: tuple[type[Plan], ...] = (
    Scan,
    Filter,
    Project,
    Join,
    Aggregate,
    GroupingSets,
    Sort,
    Limit,
    SetOp,
    Values,
    CteAnchor,
    CteConsumer,
    Window,
)

H = TypeVar("H")


class UnsupportedOperator(CboError):
    """A concern met an operator it has no handler for."""


class OperatorTable(Generic[H]):
    def __init__(self, concern: str):
        self.concern = concern
        self._handlers: dict[type, H] = {}

    def register(self, *operators: type) -> Callable[[H], H]:
        """Decorator: the function handles these operator types (and their subclasses)."""
        def add(handler: H) -> H:
            for operator in operators:
                if operator in self._handlers:
                    raise ValueError(f"{self.concern}: two handlers for {operator.__name__}")
                self._handlers[operator] = handler
            return handler
        return add

    def handles(self, operator: type) -> bool:
        return any(base in self._handlers for base in operator.__mro__)

    def __getitem__(self, node: object) -> H:
        """The handler for ``node``'s type (the nearest registered base type)."""
        found = self._handlers.get(type(node))
        if found is None:
            for base in type(node).__mro__[1:]:
                if base in self._handlers:
                    found = self._handlers[type(node)] = self._handlers[base]
                    break
            else:
                raise UnsupportedOperator(f"{self.concern} has no handler for the operator {type(node).__name__}")
        return found
