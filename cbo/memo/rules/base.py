"""Rules: the units the search applies to memo expressions.

A *transformation* rule adds logically equivalent expressions to a group (or, like the join
enumerator, new groups below it); an *implementation* rule turns a logical expression into
the physical alternatives that could run it. Every rule is a small class whose docstring
states its pattern, the equivalence it relies on and when that holds; ``RuleSet`` lists them
by name and enables or disables them.

Connectors add their own rules per source type (as in Presto's federation planner, a connector
rewrites the largest subplan it owns): ``register_connector_rules("jdbc", MyRule())`` makes the rule part of every
rule set built for a catalog that has a source of that type.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from cbo.errors import CboError
from cbo.ir.operators import Plan
from cbo.memo.pattern import Pattern

if TYPE_CHECKING:
    from cbo.cost import CostModel
    from cbo.memo.context import SearchContext
    from cbo.memo.memo import Deferred, Group, PhysicalExpr


class Rule:
    name: str   # a class attribute, but ImplementRule names each instance by its operator
    kind: ClassVar[Literal["transformation", "implementation"]]

    def matches(self, expr: Plan, group: Group, context: SearchContext) -> bool:
        return True

    @property
    def summary(self) -> str:
        # The docstring's first paragraph, on one line: its first line alone may stop mid-sentence.
        doc = (type(self).__doc__ or "").strip()
        return " ".join(doc.split("\n\n")[0].split())


class TransformationRule(Rule):
    """A rule that adds equivalent expressions. ``patterns`` say what it matches (``cbo.memo.
    pattern``); ``apply`` gets each binding (the matched expression with its patterned inputs
    bound to expressions of their groups) and returns new plans. It never changes the memo:
    the search adds what it returns."""

    kind = "transformation"
    patterns: ClassVar[tuple[Pattern, ...]] = ()
    # True when ``matches`` accepts only a group's first (written) expression: the search then
    # need not make a deferred expression (never a group's first) to offer it to the rule.
    written_only: ClassVar[bool] = False

    def apply(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[Plan]:
        """Equivalent expressions for ``group``: plans whose leaves may be group references."""
        raise NotImplementedError

    @property
    def pattern_text(self) -> str:
        return " | ".join(p.describe() for p in self.patterns)


class Bounds(Protocol):
    """What the search knows of a group before any alternative over it is made: enough for an
    implementation rule to bound the cost of what it would yield (``ImplementationRule.floor``)."""

    cost_model: CostModel

    def size(self, group: Group) -> tuple[float, float]:
        """(estimated rows, bytes per row)."""

    def cheapest_cost(self, group: Group) -> float:
        """The group's cheapest plan (math.inf: it has none)."""

    def broadcast_floor(self, group: Group) -> float:
        """The least the group costs broadcast (its cheapest plan and the broadcast)."""

    def hash_floor(self, group: Group) -> float:
        """The least the group costs hash-partitioned on any columns (sorted or not)."""


class ImplementationRule(Rule):
    kind = "implementation"
    operator: type = Plan   # the operator type it implements (the search only tries matching rules)
    # The only way to run some plans (every Scan, a join without an equality): disabled, the
    # search would find no plan for them, so ``RuleSet`` refuses to disable it.
    required: bool = False
    # Whether its alternatives read below the expression's inputs (a top-N reads its sort's
    # input, not the sort): they may cost less than those inputs' cheapest plans, which then
    # bound neither them nor the expression (``CascadesSearch.table``).
    reads_below: bool = False

    def implement(self, expr: Plan, group: Group, context: SearchContext) -> Iterable[PhysicalExpr]:
        raise NotImplementedError

    def floor(self, expr: Plan, group: Group, context: SearchContext, bounds: Bounds) -> float | None:
        """A lower bound of the complete cost (its own and its inputs' under what it requires of
        them, as the search's floor of an alternative counts it) of every alternative
        ``implement`` would yield for ``expr``, without making them; ``math.inf`` when it would
        yield none; None when the rule cannot tell (the default: the search then implements the
        expression to know). A join enumeration adds tens of thousands of joins that cannot
        beat their group's winner; with every rule's floor the search skips them unimplemented."""
        return None

    def deferred_floor(self, record: Deferred, group: Group, context: SearchContext,
                       bounds: Bounds) -> float | None:
        """``floor`` of the join a deferred record (``cbo.memo.memo.Deferred``) would make, read
        from the record (its kind, equi-join keys and input groups) without making the join;
        ``math.inf`` when the rule would not match it; None when it cannot tell (the default:
        the search then makes the join and asks ``matches`` and ``floor`` of it). Most joins a
        join enumeration adds are beaten this way and never made."""
        return None


class ImplementationFilter:
    """Keeps expressions or alternatives from running: a setting that forces one form among
    equivalent ones (``existential_form``, ``join_pushdown_strategy=EAGER``) narrows the plans a
    group may run, without a rule of its own or a special case in the search or the cost model.
    An expression any filter of the rule set excludes gets no physical alternative; of the
    alternatives the rules make for an expression, each filter may keep only some (``narrow``)."""

    name: ClassVar[str]

    def excludes(self, expr: Plan, group: Group, context: SearchContext) -> bool:
        return False

    def excludes_deferred(self, record: Deferred, group: Group, context: SearchContext) -> bool | None:
        """``excludes`` of the join a deferred record would make, without making it; None when
        it cannot tell (the default for a filter that excludes anything: the search then makes
        the join and asks ``excludes``)."""
        return False if type(self).excludes is ImplementationFilter.excludes else None

    def narrow(self, alternatives: list[PhysicalExpr], expr: Plan, group: Group,
               context: SearchContext) -> list[PhysicalExpr]:
        """The alternatives the rules made for ``expr`` that may run (all of them unless the
        filter forces one kind: ``join_pushdown_strategy=EAGER`` keeps only the remote query)."""
        return alternatives


_CONNECTOR_RULES: dict[str, list[Rule]] = {}


def register_connector_rules(source_type: str, *rules: Rule) -> None:
    """Rules a source type contributes (used for catalogs that have such a source)."""
    known = _CONNECTOR_RULES.setdefault(source_type, [])
    for rule in rules:
        if all(r.name != rule.name for r in known):
            known.append(rule)


def connector_rules(source_types: Iterable[str]) -> list[Rule]:
    found: list[Rule] = []
    for source_type in sorted(set(source_types)):
        found.extend(_CONNECTOR_RULES.get(source_type, []))
    return found


class RuleSet:
    """The rules a search uses, in order, each enabled or disabled by name."""

    def __init__(self, rules: Iterable[Rule], disabled: Iterable[str] = (),
                 filters: Iterable[ImplementationFilter] = ()):
        self.filters = list(filters)   # see ImplementationFilter
        self._rules: dict[str, Rule] = {}
        for rule in rules:
            if rule.name in self._rules:
                raise ValueError(f"two rules named {rule.name}")
            if isinstance(rule, TransformationRule) and not rule.patterns:
                raise ValueError(f"transformation rule {rule.name} declares no patterns (what it matches)")
            self._rules[rule.name] = rule
        self.disabled: set[str] = set()
        for name in disabled:
            self.disable(name)

    def _check(self, name: str) -> None:
        if name not in self._rules:
            raise CboError(f"unknown rule {name!r} (known: {', '.join(self._rules)})")

    def disable(self, name: str) -> None:
        self._check(name)
        rule = self._rules[name]
        if isinstance(rule, ImplementationRule) and rule.required:
            raise CboError(f"rule {name} cannot be disabled: it is a required implementation rule, the only way "
                           f"to run some {rule.operator.__name__} operators")
        self.disabled.add(name)

    def enable(self, name: str) -> None:
        self._check(name)
        self.disabled.discard(name)

    def names(self) -> list[str]:
        return list(self._rules)

    def describe(self) -> list[dict[str, object]]:
        return [{"name": r.name, "kind": r.kind, "enabled": r.name not in self.disabled, "summary": r.summary,
                 "pattern": r.pattern_text if isinstance(r, TransformationRule)
                 else r.operator.__name__ if isinstance(r, ImplementationRule) else ""}
                for r in self._rules.values()]

    def transformations(self) -> list[TransformationRule]:
        return [r for r in self._rules.values()
                if isinstance(r, TransformationRule) and r.name not in self.disabled]

    def implementations(self) -> list[ImplementationRule]:
        return [r for r in self._rules.values()
                if isinstance(r, ImplementationRule) and r.name not in self.disabled]

    def implementation_only(self) -> RuleSet:
        """The same rules with every transformation disabled: a search that only implements
        the plan it is given (its join order and rewrites stay as they are)."""
        return RuleSet(self._rules.values(), self.disabled | {r.name for r in self.transformations()}, self.filters)
