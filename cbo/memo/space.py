"""The plan space of a finished search: every complete physical plan its memo holds, counted,
numbered, drawn uniformly and listed cheapest first.

After Waas and Galindo-Legaria ("Counting, enumerating, and sampling of execution plans in a
cost-based query optimizer", SIGMOD 2000): the plans of a group under a required property set
are counted from its physical alternatives and the plans of their input groups under what each
alternative requires of them, so counting is one pass over the memo, a plan's number (its
*rank*) is a mixed-radix number over the choices made at each group, *unranking* a number
builds its plan top-down, and a number drawn uniformly below the count is a plan drawn
uniformly from the space (a draw per group, as ``draw_plan`` does, favours the plans of groups
with few alternatives).

A plan of group ``g`` under requirement ``r`` is one of:

* a physical alternative of one of ``g``'s expressions (every one its implementation rules
  make, costed by the search or not) over a plan of each input group under what the
  alternative requires of it, when what it then delivers satisfies ``r``;
* an enforcer (a sort, or an exchange: shuffle, broadcast, gather) over a plan of ``g`` under
  the weaker requirement that does *not* already satisfy ``r``, as Spark's
  ``EnsureRequirements`` adds an exchange only where it is needed. No enforcer makes rows
  clustered (the search asks that only of a final-only aggregation's input), as in the search.

What an alternative delivers depends on what its inputs' plans deliver (a broadcast join keeps
its probe side's partitioning), so counts are kept per delivered property set: ``count(g, r)``
is a table ``{delivered: plans}``. Every plan the search could choose is in the space and the
search's winner is the cheapest (``cheapest(1)`` costs what the search found), so the space
is the search's own, not a larger one.

Ranks follow the memo's order: the options of a group in order (enforcers first, then the
physical alternatives in the order of their expressions), the last input varying fastest. The
memo of a query is deterministic, so a plan's number names the same plan in another process
planning the same query with the same statistics and settings.

Counting makes every physical alternative of every reachable expression (deferred joins too):
for a large join enumeration that is the cost of an unpruned search.
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass, field, replace
from itertools import product

from cbo.memo.cascades import CascadesSearch
from cbo.memo.delivery import deliver
from cbo.memo.extract import enforcer_node, operator_node
from cbo.memo.memo import Group, PhysicalExpr, Winner
from cbo.physical.plan import PhysicalPlan
from cbo.physical.properties import ANY, Delivered, Required

Space = tuple[Group, Required, Delivered]   # the plans of a group under a requirement delivering a set


@dataclass(frozen=True, eq=False)
class Option:
    """One way to make a plan of ``group`` under ``required``: a physical alternative, or an
    enforcer (``physical`` None, ``enforcer`` the requirement it makes), over one plan from
    each of ``inputs``; it delivers ``delivered``; ``count`` plans are made this way."""

    group: Group
    required: Required
    physical: PhysicalExpr | None
    enforcer: Required | None
    inputs: tuple[Space, ...]
    delivered: Delivered
    local: float      # its own cost
    count: int


@dataclass(frozen=True, eq=False)
class Choice:
    """A plan of the space: an option and a plan of each of its inputs."""

    option: Option
    children: tuple[Choice, ...] = field(default=())

    @property
    def group(self) -> Group:
        return self.option.group

    @property
    def delivered(self) -> Delivered:
        return self.option.delivered

    @property
    def cost(self) -> float:
        return self.option.local + sum(c.cost for c in self.children)


class PlanSpace:
    """The plan space under ``root`` of a finished search (``Optimized.search``). It owns what
    it counts: one space per search, built when first asked."""

    def __init__(self, search: CascadesSearch, root: Group):
        self.search = search
        self.root = root.find()
        self._physicals: dict[int, list[PhysicalExpr]] = {}
        self._options: dict[tuple[int, Required], list[Option]] = {}
        self._counts: dict[tuple[int, Required], dict[Delivered, int]] = {}
        self._best: dict[tuple[int, Required, Delivered | None], list[Choice]] = {}
        self._best_k = 0

    # -- the space ---------------------------------------------------------------------------------

    def physicals(self, group: Group) -> list[PhysicalExpr]:
        """Every physical alternative of every expression of ``group`` (made now if the search
        never implemented them), each once."""
        group = group.find()
        found = self._physicals.get(group.id)
        if found is None:
            seen: dict[PhysicalExpr, None] = {}
            for expr in list(group.expressions):
                for physical in self.search.optimize_expression(expr, group):
                    seen.setdefault(physical, None)
            found = self._physicals[group.id] = list(seen)
        return found

    def options(self, group: Group, required: Required = ANY) -> list[Option]:
        """The ways to make a plan of ``group`` under ``required``, in rank order."""
        group = group.find()
        key = (group.id, required)
        found = self._options.get(key)
        if found is not None:
            return found
        found = []
        search = self.search
        if required is not ANY and required.distribution != "clustered":
            model = search.cost_model
            if required.ordering:
                weaker = search.context.required.without_ordering(required)
                step = model.price(model.sort(search.size(group)))
            else:
                weaker = ANY
                step = model.price(model.distribute(required, search.size(group)))
            for delivered, count in self.count_by_delivered(group, weaker).items():
                if delivered.satisfies(required):
                    continue   # an enforcer only where the input does not already deliver it
                made = replace(delivered, ordering=tuple(frozenset({c}) for c in required.ordering)) \
                    if required.ordering else required.enforced
                found.append(Option(group, required, None, required, ((group, weaker, delivered),), made, step, count))
        for physical in self.physicals(group):
            tables = [list(self.count_by_delivered(child, need).items())
                      for child, need in zip(physical.inputs, physical.required_inputs)]
            if any(not t for t in tables):
                continue   # an input without a plan
            local = search.local_cost(physical, group)
            for combination in product(*tables):
                delivered = deliver(physical, [d for d, _ in combination])
                if required is not ANY and not delivered.satisfies(required):
                    continue
                inputs = tuple((child.find(), need, d) for (child, need), (d, _)
                               in zip(zip(physical.inputs, physical.required_inputs), combination))
                found.append(Option(group, required, physical, None, inputs, delivered, local,
                                    math.prod(n for _, n in combination)))
        self._options[key] = found
        return found

    def count_by_delivered(self, group: Group, required: Required = ANY) -> dict[Delivered, int]:
        """How many plans of ``group`` under ``required`` deliver each property set."""
        group = group.find()
        key = (group.id, required)
        found = self._counts.get(key)
        if found is None:
            found = {}
            for option in self.options(group, required):
                found[option.delivered] = found.get(option.delivered, 0) + option.count
            self._counts[key] = found
        return found

    def count(self, group: Group | None = None, required: Required = ANY) -> int:
        """How many complete plans the memo holds for ``group`` (default the root) under ``required``."""
        return sum(self.count_by_delivered(group or self.root, required).values())

    def groups(self) -> list[Group]:
        """The groups reachable from the root through physical alternatives, root first."""
        seen: dict[int, Group] = {}
        stack = [self.root]
        while stack:
            group = stack.pop().find()
            if group.id in seen:
                continue
            seen[group.id] = group
            for physical in self.physicals(group):
                stack.extend(physical.inputs)
        return list(seen.values())

    # -- numbering ---------------------------------------------------------------------------------

    def unrank(self, number: int, group: Group | None = None, required: Required = ANY,
               delivered: Delivered | None = None) -> Choice:
        """The plan numbered ``number`` (0 <= number < count) of ``group`` under ``required``
        (among those delivering ``delivered`` when given)."""
        group = (group or self.root).find()
        total = self.count(group, required) if delivered is None else \
            self.count_by_delivered(group, required).get(delivered, 0)
        if not 0 <= number < total:
            raise IndexError(f"plan {number} out of range: the space holds {total} plans (0 to {total - 1})")
        for option in self.options(group, required):
            if delivered is not None and option.delivered != delivered:
                continue
            if number < option.count:
                break
            number -= option.count
        sizes = [self.count_by_delivered(child, need)[d] for child, need, d in option.inputs]
        digits = []
        for size in reversed(sizes):   # the last input varies fastest
            digits.append(number % size)
            number //= size
        children = tuple(self.unrank(digit, child, need, d)
                         for digit, (child, need, d) in zip(reversed(digits), option.inputs))
        return Choice(option, children)

    def rank(self, choice: Choice, delivered: Delivered | None = None) -> int:
        """The number of ``choice`` among the plans of its group and requirement (``unrank``'s
        inverse); its number in the whole space when it is a plan of the root under "any"."""
        option = choice.option
        number = 0
        for other in self.options(option.group, option.required):
            if other is option:
                break
            if delivered is None or other.delivered == delivered:
                number += other.count
        else:
            raise ValueError("the choice's option is not one of its group's")
        inner = 0
        for child, (group, need, d) in zip(choice.children, option.inputs):
            inner = inner * self.count_by_delivered(group, need)[d] + self.rank(child, d)
        return number + inner

    def sample(self, rng: random.Random) -> tuple[int, Choice]:
        """A plan drawn uniformly from the whole space, with its number."""
        number = rng.randrange(self.count())
        return number, self.unrank(number)

    # -- the cheapest ------------------------------------------------------------------------------

    def cheapest(self, k: int) -> list[tuple[int, Choice]]:
        """The ``k`` cheapest plans of the space by the search's cost model, cheapest first
        (ties in rank order), with their numbers. Costs add up over the tree, so the k best of
        a group are made from the k best of its inputs' spaces."""
        if k > self._best_k:
            self._best.clear()
            self._best_k = k
        found = self._k_best(self.root, ANY, None)[:k]
        return [(self.rank(choice), choice) for choice in found]

    def _k_best(self, group: Group, required: Required, delivered: Delivered | None) -> list[Choice]:
        key = (group.id, required, delivered)
        found = self._best.get(key)
        if found is not None:
            return found
        k = self._best_k
        candidates: list[tuple[float, int, Choice]] = []
        for index, option in enumerate(self.options(group, required)):
            if delivered is not None and option.delivered != delivered:
                continue
            # the k cheapest combinations of the inputs' k cheapest, one input at a time
            partial: list[tuple[float, tuple[Choice, ...]]] = [(option.local, ())]
            for child, need, d in option.inputs:
                below = self._k_best(child, need, d)
                partial = heapq.nsmallest(k, ((cost + c.cost, chosen + (c,)) for cost, chosen in partial
                                              for c in below), key=lambda pair: pair[0])
            candidates += [(cost, index, Choice(option, chosen)) for cost, chosen in partial]
        candidates.sort(key=lambda item: (item[0], item[1]))
        found = self._best[key] = [choice for _, _, choice in candidates[:k]]
        return found

    # -- as a physical plan ------------------------------------------------------------------------

    def physical(self, choice: Choice) -> PhysicalPlan:
        """The tree of physical operators of ``choice`` (as ``extract`` makes the winner's)."""
        option = choice.option
        if option.physical is None:
            assert option.enforcer is not None
            return enforcer_node(self.search, option.group, option.enforcer, self.physical(choice.children[0]),
                                 option.delivered)
        inputs = tuple(self.physical(child) for child in choice.children)
        return operator_node(self.search, option.group, option.physical, inputs, option.delivered)

    def choice_of(self, winner: Winner, group: Group, required: Required) -> Choice:
        """The search's winner of ``group`` under ``required`` as a plan of the space."""
        group = group.find()
        if winner.physical is None:
            need = winner.enforcer
            assert need is not None and winner.base is not None
            weaker = self.search.context.required.without_ordering(need) if need.ordering else ANY
            base = self.choice_of(winner.base, group, weaker)
            wanted: tuple[Space, ...] = ((group, weaker, base.delivered),)
            children: tuple[Choice, ...] = (base,)
        else:
            children = tuple(self.choice_of(child.winner(need), child, need)
                             for child, need in zip(winner.physical.inputs, winner.physical.required_inputs))
            wanted = tuple((c.group, need, c.delivered) for c, need in zip(children, winner.physical.required_inputs))
        for option in self.options(group, required):
            if option.physical is winner.physical and option.inputs == wanted:
                return Choice(option, children)
        raise AssertionError(f"the search's winner of G{group.id} under {required} is not in the plan space")

    def lift(self, choice: Choice, required: Required) -> Choice:
        """``choice`` (a plan of its group under "any") as a plan under ``required``: itself if it
        delivers it, else with the enforcers it needs on top; a ValueError when none can make
        it deliver it (rows clustered)."""
        if required is choice.option.required:
            return choice
        option = choice.option
        group = option.group
        if option.physical is not None and option.delivered.satisfies(required):
            for other in self.options(group, required):
                if other.physical is option.physical and other.inputs == option.inputs:
                    return Choice(other, choice.children)
        if required.distribution == "clustered" and not option.delivered.satisfies(required):
            raise ValueError(f"G{group.id}'s plan delivers {option.delivered}, not {required}, and no "
                             "enforcer makes rows clustered")
        weaker = self.search.context.required.without_ordering(required) if required.ordering else ANY
        base = self.lift(choice, weaker)
        for other in self.options(group, required):
            if other.physical is None and other.inputs == ((group, weaker, base.delivered),):
                return Choice(other, (base,))
        raise ValueError(f"G{group.id}: no plan delivering {required} over one delivering {base.delivered}")
