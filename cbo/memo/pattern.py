"""What a transformation rule matches, and every binding of it in the memo.

A rule declares its patterns in one place (``TransformationRule.patterns``); ``cbo rules``
prints them. A pattern names an operator (with an optional test on it) and, per input, either
a pattern that input must match or ``None`` (any plan of the input group, left as a group
reference).

A *binding* is the matched expression with each patterned input replaced by an expression of
that input's group that matches the sub-pattern, recursively. Every expression of the input
group is tried, not only the first, so a rule sees the alternatives other rules added: before
its expressions are bound, the input group is explored (``explore``), as in Cascades. Bindings
are enumerated lazily, one at a time.

    Join[inner](Aggregate[grouped], *)      an inner join whose left input group holds a
                                            grouped aggregation (one binding per such
                                            aggregation), over any right input
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from cbo.ir.operators import Plan
from cbo.memo.memo import current, group_of

if TYPE_CHECKING:
    from cbo.memo.memo import Group


@dataclass(frozen=True)
class Pattern:
    operator: type
    inputs: tuple[Pattern | None, ...] = ()
    test: Callable[[Plan], bool] | None = None
    label: str = ""   # how ``describe`` names the operator with its test, e.g. "Join[inner]"
    # For a join pattern, the join kinds its test can accept (None: any). A quick filter the
    # search applies before the test: it dispatches patterns by operator and join kind, so the
    # tens of thousands of inner joins an enumeration adds never meet a semi-join pattern. The
    # test must still reject the other kinds itself (it decides; this only skips).
    kinds: frozenset[str] | None = None
    # The test decided for a deferred join (``cbo.memo.memo.Deferred``: its kind, whether it has
    # a condition) without making it; None: such a join is made to be tested. The search skips
    # the pattern for a deferred join whose ``deferred_test`` fails, as the test would.
    deferred_test: Callable[[Any], bool] | None = None

    @cached_property
    def inputs_patterned(self) -> bool:
        """Whether some input has a pattern (else the only binding is the expression itself)."""
        return any(p is not None for p in self.inputs)

    def matches_operator(self, expr: Plan) -> bool:
        return isinstance(expr, self.operator) and \
            (self.kinds is None or expr.kind in self.kinds) and (self.test is None or self.test(expr))  # type: ignore[attr-defined]

    def could_bind(self, expr: Plan, explore: Callable[[Group], None] | None = None) -> bool:
        """A quick test before enumerating bindings: the operator matches, and each patterned
        input's group (explored first) holds an expression of the sub-pattern's operator type."""
        return self.matches_operator(expr) and self.could_bind_inputs(expr, explore)

    @cached_property
    def patterned_inputs(self) -> tuple[tuple[int, type], ...]:
        """(input position, its sub-pattern's operator) of the patterned inputs."""
        return tuple((i, sub.operator) for i, sub in enumerate(self.inputs) if sub is not None)

    def could_bind_inputs(self, expr: Plan, explore: Callable[[Group], None] | None = None) -> bool:
        """``could_bind`` for an expression whose operator is known to match."""
        children = expr.children
        for index, operator in self.patterned_inputs:
            if index >= len(children):
                continue
            group = children[index].group.find()   # type: ignore[attr-defined]   # (a group reference)
            if explore is not None and not group.explored:
                explore(group)
                group = group.find()
            if not group.holds(operator):
                return False
        return True

    def describe(self) -> str:
        name = self.label or self.operator.__name__
        if not any(p is not None for p in self.inputs):
            return name
        return f"{name}({', '.join('*' if p is None else p.describe() for p in self.inputs)})"


def bindings(pattern: Pattern, expr: Plan, explore: Callable[[Group], None] | None = None) -> Iterator[Plan]:
    """Every binding of ``pattern`` rooted at ``expr`` (whose inputs are group references)."""
    if not pattern.matches_operator(expr):
        return
    if not pattern.inputs_patterned:
        yield expr
        return
    children = expr.children

    def choices(index: int) -> Iterator[Plan]:
        child = children[index]
        sub = pattern.inputs[index] if index < len(pattern.inputs) else None
        if sub is None:
            yield child
            return
        group = group_of(child)
        if explore is not None:
            explore(group)
        operator = sub.operator
        if not any(issubclass(t, operator) for t in group.operator_types):
            return
        # A snapshot: what the group gains while these bindings are used is bound when the
        # rule runs on it again (every expression is explored once).
        for candidate in tuple(group.expressions):
            if isinstance(candidate, operator):   # (bindings' own first test, without a generator)
                yield from bindings(sub, candidate, explore)

    def product(index: int, chosen: tuple[Plan, ...]) -> Iterator[Plan]:
        if index == len(children):
            # Exploring the inputs may have merged groups that ``expr`` or the chosen
            # expressions, read before, name.
            yield current(expr.with_children(chosen))
            return
        for choice in choices(index):
            yield from product(index + 1, chosen + (choice,))

    yield from product(0, ())

