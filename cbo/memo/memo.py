"""The memo: groups of logically equivalent expressions whose inputs are groups.

A memo expression is an ordinary plan operator (``cbo.ir.operators``) whose children are
:class:`GroupRef` leaves, so rules match and build the same operators the rest of cbo uses, and
an expression's identity is the operator's structural hash. ``Memo.insert`` copies a plan in
bottom-up; an expression already present anywhere in the memo is found by that hash and never
added twice.

Each group carries its logical properties, derived once from the expression that created it
(every later expression of the group is equivalent, so they would agree): output columns,
estimated rows (the estimator, from the input groups' estimates), unique keys and not-null
columns. The search records per group and per required physical property set the best
physical alternative and its cost (``winners``), so no group is optimized twice for the same need.

An expression may be *deferred* (``Deferred``): known by its operator, kind and input groups,
and made (with its condition, and registered like any other) only when something reads more of
it. A join enumeration meets tens of thousands of join pairs, of which the search implements a
few in twenty; the rest need only their input groups, which exploration and the search's
ordering read from the record. A group's expressions and deferred records form one ordered
list, so ``Group.expressions`` (which makes every deferred one first) lists exactly what
adding each at once would have listed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol, cast

from cbo.ir.expressions import Column, ColumnFactory
from cbo.ir.kinds import JoinKind
from cbo.ir.operators import ForeignKeyRef, Join, Plan, walk

if TYPE_CHECKING:
    from cbo.estimate import Estimator
    from cbo.estimate.oracle import OracleEstimator
    from cbo.estimate.plugin import PluggedEstimator
    from cbo.estimate.relation import RelEstimate
    from cbo.ir.types import DataType
    from cbo.physical.algorithm import Algorithm
    from cbo.physical.properties import Delivered, Required


class GroupRef(Plan):
    """A memo expression's input: stands for every plan of a group (same columns and keys)."""

    __slots__ = ("group",)

    def __init__(self, group: Group):
        self.group = group

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GroupRef) and other.group.id == self.group.id

    def __hash__(self) -> int:
        return self.group.id

    def __repr__(self) -> str:
        return f"G{self.group.id}"

    @property
    def output(self) -> tuple[Column, ...]:
        return self.group.output

    @property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        return self.group.unique_keys

    @property
    def not_null(self) -> frozenset[Column]:
        return self.group.not_null

    @property
    def foreign_keys(self) -> frozenset[ForeignKeyRef]:
        return self.group.foreign_keys


def group_of(plan: Plan) -> Group:
    """The group a memo expression's input stands for (its inputs are group references)."""
    assert isinstance(plan, GroupRef), f"a memo expression's input is a group, not a {type(plan).__name__}"
    return plan.group


if TYPE_CHECKING:
    def inputs_of(expr: Plan) -> tuple[GroupRef, ...]:
        """A memo expression's children, which are group references: the memo's ``add``
        replaces each child of an expression it holds by its group's ``GroupRef``."""
        ...
else:
    # The children themselves, read without a check: the search reads them for each of the
    # tens of thousands of expressions a join enumeration adds.
    inputs_of = attrgetter("children")


def current(plan: Plan) -> Plan:
    """``plan`` with every group reference naming the group that stands for it now.

    Exploring a group can merge groups (``Memo.merge``): the absorbed group is emptied and the
    memo's expressions that read it are rebuilt, but an expression read before the merge (the
    one a binding is rooted at, or one bound in an input group) still names the empty group,
    whose logical properties cannot be read. Rules are given bindings as the memo holds them
    after the merge, and the memo files expressions under the groups that stand.
    """
    children = plan.children
    for child in children:
        if type(child) is not GroupRef or child.group.merged_into is not None:
            break
    else:   # (a loop, not all() over a generator: every enumerated join passes here)
        return plan
    return plan.with_children(tuple((c.group.find().ref if c.group.merged_into is not None else c)
                                    if type(c) is GroupRef else current(c) for c in children))


@dataclass
class Winner:
    """The cheapest plan found for a group under one required property set: a physical
    alternative, or an enforcer (exchange, broadcast, sort) over ``base``, the group's winner
    under a weaker requirement."""

    physical: PhysicalExpr | None
    cost: float                       # of the whole subtree
    delivered: Delivered
    enforcer: Required | None = None
    base: Winner | None = None


UNPREDICTED = object()


class PhysicalExpr:
    """A way to run a logical expression: the operator (children are groups, possibly swapped
    against the logical expression's order), its algorithm, and what it needs from each input."""

    __slots__ = ("node", "algorithm", "required_inputs", "logical", "rule", "inputs", "local_cost", "best_cost",
                 "costed", "predicted", "floor")

    def __init__(self, node: Plan, algorithm: Algorithm, required_inputs: tuple[Required, ...],
                 logical: Plan, rule: str):
        self.node = node
        self.algorithm = algorithm
        self.required_inputs = required_inputs
        self.logical = logical     # the logical expression it implements
        self.rule = rule
        # Its inputs are the groups at its leaves: an operator's children, or, for an operator
        # that runs several logical ones at once (a top-N runs a limit over a sort), the groups
        # below all of them, in order.
        children = node.children
        if len(children) == 2 and type(children[0]) is GroupRef and type(children[1]) is GroupRef:
            # a join's (most alternatives are joins): no walk below the operator
            self.inputs: tuple[Group, ...] = (children[0].group.find(), children[1].group.find())
        else:
            self.inputs = tuple(ref.group.find() for ref in _group_refs(node))
        self.local_cost: float | None = None   # set by the search the first time it costs this
        self.best_cost: float | None = None    # the cheapest complete subtree found with it
        self.costed = False                    # whether the search costed it (it skips the hopeless)
        self.predicted: object = UNPREDICTED   # what it delivers, as the search predicts it before costing
        self.floor: float | None = None        # a lower bound of its complete cost (the search's)

    def __repr__(self) -> str:
        return f"PhysicalExpr({self.rule}, {self.algorithm.name}, {self.node!r})"


def _group_refs(node: Plan) -> list[GroupRef]:
    found: list[GroupRef] = []
    for child in node.children:
        if isinstance(child, GroupRef):
            found.append(child)
        else:
            found.extend(_group_refs(child))
    return found


def with_inputs(node: Plan, inputs: tuple[Plan, ...]) -> Plan:
    """``node`` with the plans ``inputs`` in place of its group references, in order (the
    inverse of ``PhysicalExpr.inputs``)."""
    remaining = iter(inputs)

    def build(plan: Plan) -> Plan:
        if not plan.children:
            return plan
        return plan.with_children(tuple(next(remaining) if isinstance(c, GroupRef) else build(c)
                                        for c in plan.children))

    return build(node)


class JoinSource(Protocol):
    """What makes a deferred join (``RegionBuilder``), given the arguments it deferred it with:
    ``join_parts(*args)`` its condition and equi-join keys, ``make_join(*args, parts=...)`` the
    join (from those parts when known), ``has_condition(*args)`` whether it is not a cross
    product."""

    @property
    def join_parts(self) -> Callable[..., tuple[Any, tuple[tuple[Column, Column], ...]]]: ...

    @property
    def make_join(self) -> Callable[..., Plan]: ...

    @property
    def has_condition(self) -> Callable[..., bool]: ...


class Deferred:
    """A join not made yet: its kind, its input groups, and the source that makes it
    (``source.make_join(*args)``, a join whose inputs are those groups' references) and tells
    its condition and equi-join keys (``join_parts``, kept: the join is made from them) and
    whether it has a condition (is not a cross product) without making it. ``Memo.make`` makes
    it in its place in its group's list; ``made`` is then the expression."""

    __slots__ = ("kind", "inputs", "source", "args", "group", "position", "rule", "made", "parts", "sides")
    operator = Join

    def __init__(self, kind: JoinKind, inputs: tuple[Group, ...], source: JoinSource, args: tuple,
                 group: Group, position: int, rule: str | None):
        self.kind = kind
        self.inputs = inputs
        self.source = source
        self.args = args
        self.group = group
        self.position = position    # its index in the group's list (no list shrinks while one waits)
        self.rule = rule
        self.made: Plan | None = None
        self.parts: tuple[Any, tuple[tuple[Column, Column], ...]] | None = None
        # the (left, right) input groups of each way the join may run, as the implementation
        # rules' floors read them (``cbo.memo.rules.implement``: kept, three rules ask)
        self.sides: tuple[tuple[Group, Group], ...] | None = None

    def keys(self) -> tuple[tuple[Column, Column], ...]:
        """Its equi-join keys, as ``Join.equi_keys`` of the join it makes."""
        parts = self.parts
        if parts is None:
            parts = self.parts = self.source.join_parts(*self.args)
        return parts[1]

    def conditioned(self) -> bool:
        """Whether its condition is other than TRUE."""
        return self.source.has_condition(*self.args)

    def __repr__(self) -> str:
        return f"Deferred(Join[{self.kind}], {', '.join(f'G{g.id}' for g in self.inputs)})"


class Group:
    """Logically equivalent expressions (``entries``: made ones and ``Deferred`` records, in the
    order they were added) and the logical properties they share, read from the first (always
    made)."""

    def __init__(self, memo: Memo, gid: int, first: Plan):
        self.memo = memo
        self.id = gid
        self.entries: list[Plan | Deferred] = [first]
        self.deferred = 0   # how many entries are ``Deferred`` still
        self.explored = False
        self.merged_into: Group | None = None   # set when merged: that group stands for this one
        # The operator types among the expressions: a pattern skips a group without its operator
        # without reading the expressions (a 10-relation clique's join groups hold hundreds).
        self.operator_types: set[type] = {type(first)}
        # see holds and holds_any (by operator, or tuple of operators); cleared when operator_types grows
        self._holds: dict[type | tuple[type, ...], bool] = {}
        self.winners: dict[Required, Winner | None] = {}   # None: no plan delivers it
        self.size: tuple[float, float] | None = None   # (rows, bytes per row), see SearchContext.size
        self.ref = GroupRef(self)

    @property
    def expressions(self) -> list[Plan]:
        """Every expression of the group, in order, deferred ones made first (``Memo.make``)."""
        if self.deferred:
            self.memo.make_group(self)
        return cast("list[Plan]", self.entries)   # (none deferred now)

    @expressions.setter
    def expressions(self, value: list[Plan | Deferred]) -> None:
        self.entries = value
        self.deferred = sum(type(e) is Deferred for e in value)

    @property
    def first(self) -> Plan:
        return cast(Plan, self.entries[0])   # (the first is always made)

    def holds(self, operator: type) -> bool:
        """Whether some expression of the group is an ``operator`` (or of a subclass): what a
        pattern's input asks of a group, kept per operator until the group gains a new type
        (the patterns of each of a clique's 28,501 joins ask it of both its inputs)."""
        found = self._holds.get(operator)
        if found is None:
            found = self._holds[operator] = any(t is operator or issubclass(t, operator) for t in self.operator_types)
        return found

    def holds_any(self, operators: tuple[type, ...]) -> bool:
        """Whether the group ``holds`` one of ``operators``, kept as ``holds`` keeps its answers
        (the patterns of each of a clique's joins ask it of both its inputs)."""
        found = self._holds.get(operators)
        if found is None:
            found = self._holds[operators] = any(self.holds(operator) for operator in operators)
        return found

    def winner(self, required: Required) -> Winner:
        """The search's winner under ``required`` (after a search that chose a plan using it)."""
        found = self.winners.get(required)
        if found is None:
            raise KeyError(f"G{self.id} has no plan delivering {required}")
        return found

    def find(self) -> Group:
        """The group standing for this one: itself, or the group it was merged into."""
        group = self
        while group.merged_into is not None:
            group = group.merged_into
        if group is not self:
            self.merged_into = group   # path compression
        return group

    @cached_property
    def output(self) -> tuple[Column, ...]:
        return self.first.output

    @cached_property
    def unique_keys(self) -> frozenset[frozenset[Column]]:
        return self.first.unique_keys

    @cached_property
    def not_null(self) -> frozenset[Column]:
        return self.first.not_null

    @cached_property
    def foreign_keys(self) -> frozenset[ForeignKeyRef]:
        return self.first.foreign_keys

    @cached_property
    def estimate(self) -> RelEstimate:
        inputs = [group_of(child).estimate for child in self.first.children]
        return self.memo.estimator.estimate_node(self.first, inputs)

    @property
    def rows(self) -> float:
        return self.estimate.rows

    def __repr__(self) -> str:
        return f"Group(G{self.id}, {len(self.entries)} expressions)"


@dataclass
class Counters:
    """What the search did: reported by EXPLAIN (MEMO) and the enumeration benchmark."""

    rule_applications: int = 0
    join_pairs: int = 0
    duplicates: int = 0            # expressions a rule produced that the memo already held
    merges: int = 0                # groups merged because a rule found them equal
    alternatives_costed: int = 0
    alternatives_pruned: int = 0   # costed, but dearer than another delivering the same
    budget_exhausted: str | None = None
    heuristic_regions: int = 0     # join regions above the exhaustive limit
    elapsed_ms: float = 0.0
    by_rule: dict[str, int] = field(default_factory=dict)   # applications (bindings it was applied to)
    # Rules that fired: a transformation rule that added an expression (or merged groups), an
    # implementation rule that gave an alternative. Rule tests (expect=, expect-not=) read it.
    fired: dict[str, int] = field(default_factory=dict)


class Memo:
    """Groups and their expressions, deduplicated by structural hash, merged when equal.

    Two groups are merged when one expression is found to belong to both (a rule derived, in
    one group, an expression that already lives in another): they are the same set of plans.
    The group with the lower id stays; the other points to it (``Group.find``). Expressions
    whose inputs named the absorbed group are rebuilt with the one that stays, and where that
    makes two of them equal, their groups merge in turn. Merges happen while the memo is
    explored, before anything is costed.

    Deferred expressions (``defer``) are made when first read: by ``Group.expressions``, by the
    search (``make``), and before anything could find one of them equal to another expression,
    so the memo deduplicates and merges exactly as if each had been added at once: a join added
    or looked up makes the deferred join over the same two groups first (only that one could
    equal it; there is at most one per pair of groups), a merge makes all of them first, and
    ``defer`` refuses (the caller adds the expression) when a join over those groups is held.
    """

    def __init__(self, estimator: Estimator | OracleEstimator | PluggedEstimator):
        # one estimation context for the search: the groups' estimates, and what join sets
        # derive from them, live as long as the memo
        self.estimator = estimator.context()
        self.groups: list[Group] = []     # by id; merged groups stay in place (``find``)
        self._index: dict[Plan, Group] = {}
        self._parents: dict[int, list[Plan]] = {}   # group id -> expressions reading it
        self.additions = 0   # expressions registered so far (tells whether a rule added any)
        self.counters = Counters()
        # Decisions rules took at a group that EXPLAIN shows there (e.g. whether a join was
        # byte-reducing enough to keep an aggregation above it), by group id, in order.
        self.notes: dict[int, list[str]] = {}
        # The transformation rule that added each expression (the written plan's have none):
        # the memo dump shows it, and tests force one rule's alternatives with it.
        self.added_by: dict[Plan, str] = {}
        self._columns: ColumnFactory | None = None   # fresh column ids for rules (new_column)
        # (left group id, right group id) -> the group holding a join over them, made or
        # deferred: what tells whether a deferred join could equal an expression (see defer)
        self._join_pairs: dict[tuple[int, int], Group | Deferred] = {}
        self._waiting: list[Deferred] = []   # deferred expressions, in the order deferred
        # id(made expression) -> the record it was made from (kept: ids stay theirs): the search
        # does not apply rules twice to a join the rules saw while it was deferred
        self.made_from: dict[int, Deferred] = {}

    def defer(self, group: Group, kind: JoinKind, inputs: tuple[Group, Group], source: JoinSource, args: tuple,
              rule: str | None = None) -> bool:
        """Add to ``group`` a join of ``kind`` over ``inputs``, made by ``source.make_join(*args)``
        only when read. False (nothing added) when the memo already holds a join over the same
        two groups: the caller adds it with ``add``, which deduplicates (or merges) at once."""
        if group.merged_into is not None:
            group = group.find()
        key = (inputs[0].id, inputs[1].id)
        pairs = self._join_pairs
        if key in pairs:
            return False
        entries = group.entries
        record = pairs[key] = Deferred(kind, inputs, source, args, group, len(entries), rule)
        entries.append(record)
        group.deferred += 1
        types = group.operator_types
        if Join not in types:
            types.add(Join)
            group._holds.clear()
        self._waiting.append(record)
        self.additions += 1
        return True

    def make(self, record: Deferred) -> Plan:
        """The deferred expression, made and registered in its place in its group's list."""
        made = record.made
        if made is not None:
            return made
        expr = current(record.source.make_join(*record.args, parts=record.parts))
        group = record.group.find()
        entries = group.entries
        position = record.position
        if position >= len(entries) or entries[position] is not record:
            position = next(i for i, e in enumerate(entries) if e is record)
        # Never a duplicate: whatever could equal it made it first (see the class docstring).
        assert expr not in self._index, f"deferred {record} made twice"
        entries[position] = expr
        group.deferred -= 1
        self._register(expr, group, counted=False)
        if record.rule is not None:
            self.added_by[expr] = record.rule
        record.made = expr
        self.made_from[id(expr)] = record
        return expr

    def make_all(self) -> None:
        """Make every deferred expression, in the order they were deferred."""
        waiting, self._waiting = self._waiting, []
        for record in waiting:
            if record.made is None:
                self.make(record)

    def _make_pair(self, expr: Plan) -> None:
        """Before ``expr`` (a join) is looked up: make the deferred join over the same two groups,
        the only deferred expression it could equal (``defer`` keeps one per pair of groups)."""
        children = expr.children
        if len(children) == 2 and type(children[0]) is GroupRef and type(children[1]) is GroupRef:
            holder = self._join_pairs.get((children[0].group.find().id, children[1].group.find().id))
            if type(holder) is Deferred and holder.made is None:
                self.make(holder)

    def make_group(self, group: Group) -> None:
        """Make the group's deferred expressions, in their order."""
        if group.deferred:
            for entry in list(group.entries):
                if type(entry) is Deferred:
                    self.make(entry)

    def parents(self, group: Group) -> list[Plan]:
        """The expressions that read ``group``, some perhaps no longer held (see ``owner``): a merge
        files the readers of the absorbed group under the group that stays."""
        self.make_all()   # (deferred expressions read groups too)
        return list(self._parents.get(group.find().id, []))

    def owner(self, expr: Plan) -> Group | None:
        """The group holding ``expr``, if the memo still holds it (merges rebuild expressions)."""
        if self._waiting and isinstance(expr, Join):
            self._make_pair(expr)
        found = self._index.get(expr)
        return found.find() if found is not None else None

    def new_column(self, name: str, type_: DataType, nullable: bool = True) -> Column:
        """A column no expression of the memo uses yet, for a rule that computes a new value
        (the DISTINCT-above rewrite's row id, eager aggregation's partial results): one numbering per memo, started
        above every id the memo's plans define or read, shared by all rules."""
        if self._columns is None:
            largest = 0
            for group in self.groups:
                # (deferred joins left unmade: a join defines no column its inputs do not)
                for expr in group.entries:
                    if isinstance(expr, Deferred):
                        continue
                    for node in walk(expr):
                        for column in node.output:
                            largest = max(largest, column.id)
            self._columns = ColumnFactory(largest + 1)
        return self._columns.new(name, type_, nullable)

    def note(self, group: Group, text: str) -> None:
        """Record a rule's decision at ``group`` (once per text)."""
        notes = self.notes.setdefault(group.find().id, [])
        if text not in notes:
            notes.append(text)

    def notes_of(self, group: Group) -> list[str]:
        """The decisions recorded at ``group`` and at the groups merged into it."""
        found: list[str] = []
        for gid, texts in self.notes.items():
            if self.groups[gid].find() is group.find():
                found.extend(t for t in texts if t not in found)
        return found

    def insert(self, plan: Plan) -> Group:
        """Copy a plan in bottom-up; the group of its root (an existing one if already present)."""
        if isinstance(plan, GroupRef):
            return plan.group.find()
        refs = tuple(self.insert(child).ref for child in plan.children)
        expr = plan.with_children(refs) if refs else plan
        if self._waiting and isinstance(expr, Join):
            self._make_pair(expr)
        found = self._index.get(expr)
        if found is not None:
            return found.find()
        return self._new_group(expr)

    def _new_group(self, expr: Plan) -> Group:
        group = Group(self, len(self.groups), expr)
        self.groups.append(group)
        self._register(expr, group)
        return group

    def _register(self, expr: Plan, group: Group, counted: bool = True) -> None:
        if counted:   # (a deferred expression was counted when deferred)
            self.additions += 1
        self._index[expr] = group
        parents = self._parents
        for child in inputs_of(expr):
            gid = child.group.id
            readers = parents.get(gid)
            if readers is None:
                parents[gid] = [expr]
            else:
                readers.append(expr)
        if isinstance(expr, Join):
            left, right = expr.children
            if type(left) is GroupRef and type(right) is GroupRef:
                self._join_pairs[(left.group.id, right.group.id)] = group

    def add(self, expr: Plan, group: Group | None = None, rule: str | None = None) -> tuple[Group, bool]:
        """Add ``expr`` (children group references) to ``group`` (a new group when None).

        Returns the group holding the expression and whether it was new. An expression the
        memo already holds is not added again; if it lives in another group than ``group``,
        the two groups merge.
        """
        expr = self._canonical(expr)
        if group is not None:
            group = group.find()
        if self._waiting and isinstance(expr, Join):
            self._make_pair(expr)
        found = self._index.get(expr)
        if found is not None:
            found = found.find()
            self.counters.duplicates += 1
            if group is not None and found is not group:
                return self.merge(group, found), False
            return found, False
        if group is None:
            return self._new_group(expr), True
        group.entries.append(expr)
        if type(expr) not in group.operator_types:
            group.operator_types.add(type(expr))
            group._holds.clear()
        self._register(expr, group)
        if rule is not None:
            self.added_by[expr] = rule
        return group, True

    def _canonical(self, expr: Plan) -> Plan:
        """``expr`` with every input naming the group that stands for it."""
        return current(expr)

    def merge(self, a: Group, b: Group) -> Group:
        """Make ``a`` and ``b`` one group (and any groups that become equal through them)."""
        # Deferred expressions read groups too: made first, they are rebuilt as the rest are.
        self.make_all()
        pending = [(a, b)]
        while pending:
            first, second = pending.pop()
            first, second = first.find(), second.find()
            if first is second:
                continue
            keep, gone = (first, second) if first.id < second.id else (second, first)
            gone.merged_into = keep
            keep.explored = keep.explored and gone.explored
            self.counters.merges += 1
            keep.operator_types |= gone.operator_types
            keep._holds.clear()
            for expr in gone.expressions:
                keep.expressions.append(expr)
                self._index[expr] = keep
            gone.expressions = []
            # Expressions reading the absorbed group now read the one that stays.
            for parent in self._parents.pop(gone.id, []):
                owner = self._index.pop(parent, None)
                if owner is None:
                    continue
                owner = owner.find()
                rebuilt = self._canonical(parent)
                position = owner.expressions.index(parent)
                if any(group_of(child) is owner for child in rebuilt.children):
                    # It now reads its own group (an identity projection of a plan found equal
                    # to the group): a cycle that holds no plan of its own.
                    del owner.expressions[position]
                    continue
                other = self._index.get(rebuilt)
                if other is None:
                    owner.expressions[position] = rebuilt
                    self._register(rebuilt, owner)
                    if parent in self.added_by:
                        self.added_by[rebuilt] = self.added_by[parent]
                    continue
                del owner.expressions[position]   # now the same as an expression already held
                if other.find() is not owner:
                    pending.append((owner, other))
        return a.find()

    @property
    def live(self) -> list[Group]:
        """The groups not merged into another, by id."""
        return [g for g in self.groups if g.merged_into is None]

    @property
    def expression_count(self) -> int:
        return sum(len(g.entries) for g in self.live)

    def __iter__(self) -> Iterator[Group]:
        return iter(self.live)

    def __len__(self) -> int:
        return len(self.live)
