"""Which rules an expression meets, and whether a deferred join needs making.

Exploration offers each expression to the patterns of its operator (and, for a join, its kind:
``Pattern.kinds``), in rule order. A join enumeration adds tens of thousands of inner joins, so
the dispatch is read once per (operator, kind) and kept: neither a projection's pattern nor a
semi join's is ever tried on them. Adjacent patterns sharing a predicate form a *run* whose test
runs once per expression; a run of patterns that each pattern one input is asked first whether any
input group holds what they need (the table-pushdown patterns ask each input group once).

A deferred join (``cbo.memo.memo.Deferred``) is made only when some pattern could bind it: each
run's test as decided for the record (``Pattern.deferred_test``), then its input groups, read
without making the join. Exploring in the same order as for made joins matters: it decides which
groups exist first, so the memo is the one offering every pattern to every join would build
(``tests/quick/test_pattern_dispatch.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cbo.ir.operators import Join, Plan
from cbo.memo.context import SearchContext
from cbo.memo.memo import Deferred, Group, inputs_of
from cbo.memo.pattern import Pattern, Where
from cbo.memo.rules.base import ImplementationRule, TransformationRule

# The operators a run of one-input patterns asks of each input: (input position, operators).
Inputs = tuple[tuple[int, tuple[type, ...]], ...]
# A run of adjacent patterns sharing a test: (the test, [(rule, pattern, whether its inputs are
# patterned)], the inputs it asks when every pattern of the run patterns exactly one input).
Run = tuple[Callable[[Plan], bool] | None, list[tuple[TransformationRule, Pattern, bool]], Inputs | None]

# What a run asks of a deferred join whose test passes (see PatternDispatch._deferred_steps).
_BIND, _BUDGET, _MAKE = object(), object(), object()
_Step = tuple[Callable[[Deferred], bool] | None, object, Inputs | None]


class PatternDispatch:
    """The runs of the transformation rules' patterns per operator and join kind, and the
    implementation rules per operator, kept for one search; ``explore`` explores a group (an
    input group is explored before a pattern reads it)."""

    def __init__(self, rules: list[TransformationRule], implementation_rules: list[ImplementationRule],
                 context: SearchContext, explore: Callable[[Group], None]):
        self.rules = rules
        self.implementation_rules = implementation_rules
        self.context = context
        self.explore = explore
        # (operator, join kind or None) -> its runs; read inline by exploration when known
        self.known: dict[tuple[type, str | None], list[Run]] = {}
        self._deferred_steps: dict[str, list[_Step]] = {}   # join kind -> see _steps
        self.implementing: dict[type, list[ImplementationRule]] = {}   # operator -> see implementations

    def implementations(self, operator: type) -> list[ImplementationRule]:
        """The implementation rules for ``operator``, in rule order."""
        found = self.implementing.get(operator)
        if found is None:
            found = self.implementing[operator] = [r for r in self.implementation_rules
                                                   if issubclass(operator, r.operator)]
        return found

    def runs(self, operator: type, kind: str | None) -> list[Run]:
        """The patterns whose operator ``operator`` is (and, for a join, that accept its ``kind``),
        in rule order, as runs of adjacent patterns sharing one test: (the test, [(rule, pattern,
        whether its inputs are patterned)], and for a run of patterns each patterning one input,
        those inputs as ``could_bind_any`` reads them)."""
        key = (operator, kind)
        found = self.known.get(key)
        if found is None:
            found = self.known[key] = self._runs(operator, kind)
        return found

    def _runs(self, operator: type, kind: str | None) -> list[Run]:
        found: list[tuple[Where | None, list[tuple[TransformationRule, Pattern, bool]]]] = []
        for rule in self.rules:
            for pattern in rule.patterns:
                if not issubclass(operator, pattern.operator) or \
                        (kind is not None and pattern.kinds is not None and kind not in pattern.kinds):
                    continue
                if found and found[-1][0] == pattern.where:   # (the same predicate: one run)
                    found[-1][1].append((rule, pattern, pattern.inputs_patterned))
                else:
                    found.append((pattern.where, [(rule, pattern, pattern.inputs_patterned)]))
        return [(entries[0][1].test, entries, _single_inputs(entries)) for _, entries in found]

    def rules_need(self, record: Deferred) -> bool | None:
        """Whether some transformation rule could bind the deferred join ``record``, decided as
        for a made one without making it: by its kind, by each pattern's test as its
        ``deferred_test`` decides it (a pattern without one needs the join made), by its input
        groups for a run of single-input patterns (explored first, as ``could_bind_any`` does),
        and a rule that takes a group's written expression only (``written_only``) never takes a
        deferred one. None when the budget ran out (the search stops exploring the group there,
        as it would at a made one)."""
        steps = self._deferred_steps.get(record.kind)
        if steps is None:
            steps = self._deferred_steps[record.kind] = self._steps(record.kind)
        for deferred_test, action, inputs in steps:
            if action is _BIND:
                # Whatever the test says, the run binds nothing when the input groups it asks
                # are explored already and hold none of its operators (the test is pure, so
                # skipping it changes nothing: a clique's joins mostly end here, without the
                # graph's walk over its classes that tells whether the join has a condition).
                # (inline, not a call: once per each of a clique's joins)
                groups = record.inputs
                for index, operators in inputs:   # type: ignore[union-attr]
                    if index >= len(groups):
                        break
                    group = groups[index]
                    if group.merged_into is not None or not group.explored or group.holds_any(operators):
                        break
                else:
                    continue
            if deferred_test is not None and not deferred_test(record):
                continue
            if action is _BIND:
                if self.could_bind_groups(record.inputs, inputs):  # type: ignore[arg-type]
                    return True
            elif action is _BUDGET:
                if self.context.out_of_budget():
                    return None
            else:
                return True
        return False

    def _steps(self, kind: str) -> list[_Step]:
        """``rules_need``'s reading of the join patterns of ``kind``, once per kind: per run, its
        test as decided for a deferred join and what follows when it passes: ``_BIND`` (ask the
        input groups), ``_BUDGET`` (only rules that take a group's written expression: the budget
        is checked, as for a made join) or ``_MAKE``."""
        steps: list[_Step] = []
        for test, entries, inputs in self.runs(Join, kind):
            deferred_test = None
            if test is not None:
                # (the patterns of a run share their predicate, and so its test of a deferred join)
                deferred_test = entries[0][1].deferred_test
                if deferred_test is None:
                    steps.append((None, _MAKE, None))   # (a test no deferred join can answer)
                    break
            if inputs is not None:
                steps.append((deferred_test, _BIND, inputs))
            elif all(not patterned and rule.written_only for rule, _, patterned in entries):
                steps.append((deferred_test, _BUDGET, None))
            else:
                steps.append((deferred_test, _MAKE, None))
        return steps

    def could_bind_groups(self, groups: Sequence[Group], inputs: Inputs) -> bool:
        """Whether some pattern of a run, each patterning one input, could bind an expression
        whose input groups are ``groups``: each input group in the order the patterns first
        name it, explored first (as each pattern's ``could_bind_inputs`` would explore it, in
        the same order, since a pattern that cannot bind changes nothing), holds one of the
        operators the run's patterns ask of it. (A deferred join is asked by its groups.)"""
        for index, operators in inputs:
            if index >= len(groups):
                return True   # (could_bind_inputs passes an input the expression lacks)
            group = groups[index]
            if group.merged_into is not None:
                group = group.find()
            if not group.explored:
                self.explore(group)
                group = group.find()
            if group.holds_any(operators):
                return True
        return False

    def could_bind_any(self, expr: Plan, inputs: Inputs) -> bool:
        """Whether some pattern of a run, each patterning one input, could bind ``expr``
        (``could_bind_groups`` over its input groups)."""
        return self.could_bind_groups([child.group for child in inputs_of(expr)], inputs)


def _single_inputs(entries: list[tuple[TransformationRule, Pattern, bool]]) -> Inputs | None:
    """For a run of patterns each patterning exactly one input: (input position, the operators
    the run's patterns ask of it, each once), positions in the order the patterns first name
    them; else None. (Two rules ask the same operators of the same inputs: asking a group
    twice whether it holds one would only repeat the answer, for each of a clique's joins.)"""
    inputs: dict[int, dict[type, None]] = {}
    for _, pattern, _ in entries:
        if len(pattern.patterned_inputs) != 1:
            return None
        index, operator = pattern.patterned_inputs[0]
        inputs.setdefault(index, {})[operator] = None
    return tuple((index, tuple(operators)) for index, operators in inputs.items())
