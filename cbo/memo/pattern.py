"""What a transformation rule matches, and every binding of it in the memo.

A rule declares its patterns in one place (``TransformationRule.patterns``); ``cbo rules``
prints them. A pattern names an operator, optionally a predicate on it (``where``: ``Joins`` of
some kinds, conditioned or equi-keyed; ``GROUPED`` aggregations), and, per input, either a
pattern that input must match or ``None`` (any plan of the input group, left as a group
reference). The predicate is declared once: the pattern's test, its label, the join kinds the
search dispatches it by and its test of a join not made yet (``cbo.memo.memo.Deferred``) all
derive from it, so they cannot disagree.

A *binding* is the matched expression with each patterned input replaced by an expression of
that input's group that matches the sub-pattern, recursively. Every expression of the input
group is tried, not only the first, so a rule sees the alternatives other rules added: before
its expressions are bound, the input group is explored (``explore``), as in Cascades. Bindings
are enumerated lazily, one at a time.

    Join[inner, conditioned](Aggregate[grouped], *)
                                   an inner join with a condition whose left input group holds
                                   a grouped aggregation (one binding per such aggregation),
                                   over any right input
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from cbo.ir.expressions import TRUE, Constant
from cbo.ir.kinds import JOIN_KINDS, JoinKind
from cbo.ir.operators import Plan
from cbo.memo.memo import current, group_of, inputs_of

if TYPE_CHECKING:
    from cbo.memo.memo import Deferred, Group


class Where(Protocol):
    """A predicate on a pattern's operator, declared once; everything the search asks of it
    derives from it."""

    @property
    def label(self) -> str:
        """How ``describe`` shows it: ``inner, conditioned`` in ``Join[inner, conditioned]``."""

    @property
    def kinds(self) -> frozenset[str] | None:
        """The join kinds it can accept (None: not a join predicate)."""

    def test(self) -> Callable[[Any], bool]:
        """The test of a made expression."""

    def deferred_test(self) -> Callable[[Deferred], bool] | None:
        """The same test of a deferred join, decided without making it; None: it cannot be."""


@dataclass(frozen=True)
class Joins:
    """Joins of one of ``kinds``; ``conditioned``: whose condition is not TRUE (not a cross
    product); ``equi_keyed``: some conjunct of whose equates a left column with a right one."""

    kinds: frozenset[JoinKind]
    conditioned: bool = False
    equi_keyed: bool = False

    @property
    def label(self) -> str:
        parts = ["|".join(k for k in JOIN_KINDS if k in self.kinds)]
        parts += [name for name, on in (("conditioned", self.conditioned), ("equi-keyed", self.equi_keyed)) if on]
        return ", ".join(parts)

    def test(self) -> Callable[[Any], bool]:
        kinds, conditioned, equi_keyed = self.kinds, self.conditioned, self.equi_keyed

        def joins(join: Any) -> bool:
            if join.kind not in kinds:
                return False
            if conditioned:
                # (only a Constant can equal TRUE: the type test spares a comparison per
                # enumerated join)
                condition = join.condition
                if type(condition) is Constant and condition == TRUE:
                    return False
            return not equi_keyed or join.has_equi_key

        return joins

    def deferred_test(self) -> Callable[[Deferred], bool] | None:
        kinds, conditioned, equi_keyed = self.kinds, self.conditioned, self.equi_keyed

        def joins(record: Deferred) -> bool:
            return record.kind in kinds and (not conditioned or record.conditioned()) \
                and (not equi_keyed or bool(record.keys()))

        return joins


@dataclass(frozen=True)
class Grouped:
    """Aggregations with grouping columns; ``aggregating``: that compute at least one aggregate
    (not a DISTINCT)."""

    aggregating: bool = False
    kinds = None

    @property
    def label(self) -> str:
        return "grouped, aggregating" if self.aggregating else "grouped"

    def test(self) -> Callable[[Any], bool]:
        return _grouped_aggregating if self.aggregating else _grouped

    def deferred_test(self) -> Callable[[Deferred], bool] | None:
        return None


def _grouped(aggregate: Any) -> bool:
    return bool(aggregate.group_by)


def _grouped_aggregating(aggregate: Any) -> bool:
    return bool(aggregate.group_by) and bool(aggregate.aggregates)


GROUPED = Grouped()


@dataclass(frozen=True)
class Pattern:
    operator: type
    inputs: tuple[Pattern | None, ...] = ()
    where: Where | None = None   # the predicate on the operator (None: any such operator)

    @cached_property
    def test(self) -> Callable[[Plan], bool] | None:
        """The predicate's test of a made expression of the operator (None: every one passes)."""
        return None if self.where is None else self.where.test()

    @cached_property
    def kinds(self) -> frozenset[str] | None:
        """For a join pattern, the join kinds its predicate can accept (None: any): the search
        dispatches patterns by operator and join kind, so the tens of thousands of inner joins
        an enumeration adds never meet a semi-join pattern."""
        return None if self.where is None else self.where.kinds

    @cached_property
    def deferred_test(self) -> Callable[[Deferred], bool] | None:
        """The predicate's test of a deferred join, decided without making it (None: the join
        must be made to be tested)."""
        return None if self.where is None else self.where.deferred_test()

    @property
    def label(self) -> str:
        """The operator with its predicate, e.g. ``Join[inner, conditioned]``."""
        name = self.operator.__name__
        return name if self.where is None else f"{name}[{self.where.label}]"

    @cached_property
    def inputs_patterned(self) -> bool:
        """Whether some input has a pattern (else the only binding is the expression itself)."""
        return any(p is not None for p in self.inputs)

    def matches_operator(self, expr: Plan) -> bool:
        test = self.test
        return isinstance(expr, self.operator) and (test is None or test(expr))

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
        children = inputs_of(expr)
        for index, operator in self.patterned_inputs:
            if index >= len(children):
                continue
            group = children[index].group.find()
            if explore is not None and not group.explored:
                explore(group)
                group = group.find()
            if not group.holds(operator):
                return False
        return True

    def describe(self) -> str:
        name = self.label
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

