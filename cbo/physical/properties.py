"""Physical properties: what a parent requires of a group's plan and what a plan delivers.

The properties are Spark's: how rows are spread over partitions (its ``Distribution`` and
``Partitioning``) and how they are ordered within a partition. An operator states what it needs
of each input (a shuffled hash join: both inputs hash-partitioned on their join keys, position
by position; a final aggregation: rows clustered on a subset of its grouping columns; a
broadcast join: its build side broadcast); a plan delivers what its top operator produces from
its inputs' delivered properties. Where a plan does not deliver what is required, the search
puts an enforcer on top (a shuffle, a broadcast, a gather to one partition, a sort), exactly
where Spark's ``EnsureRequirements`` would put its exchange or sort, so the memo weighs reusing
a partitioning a join already made against shuffling again.

An ordering is a sequence of columns, each with its direction and NULL order (``Direction``;
by default Spark's ascending order, NULLs first, which a sort-merge join's inputs need). A window
needs its input clustered on its partition columns and sorted on them (ascending) and then on
its order keys, each in its own direction, as Spark's ``WindowExec`` requires it.

A search asks for each property set it builds through its ``Requirements``, which holds one
object per distinct set, so the search keys its winners by identity.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Literal, get_args

# How a plan's rows are spread over partitions (a Literal, not an enum, for the reason
# cbo.ir.kinds gives): see Required and Delivered. "partitioned" is "clustered" that an
# exchange may make (a window's need: Spark meets it with a hash exchange on all the columns);
# "clustered" is only ever found delivered (a final-only aggregation: where the input is not
# clustered, the aggregation runs partially first).
Distribution = Literal["any", "single", "hash", "clustered", "partitioned", "broadcast"]
DISTRIBUTIONS: tuple[Distribution, ...] = get_args(Distribution)


class Direction(Enum):
    """The order of one key: ascending or descending, NULLs first or last."""

    ASC_NULLS_FIRST = "ASC NULLS FIRST"
    ASC_NULLS_LAST = "ASC NULLS LAST"
    DESC_NULLS_FIRST = "DESC NULLS FIRST"
    DESC_NULLS_LAST = "DESC NULLS LAST"


ASC = Direction.ASC_NULLS_FIRST   # Spark's ascending order: a merge join's and a window partition's


def direction(ascending: bool, nulls_first: bool) -> Direction:
    if ascending:
        return Direction.ASC_NULLS_FIRST if nulls_first else Direction.ASC_NULLS_LAST
    return Direction.DESC_NULLS_FIRST if nulls_first else Direction.DESC_NULLS_LAST


Directions = tuple[Direction, ...]   # per ordering position; () means ASC for every position


def _show_ordering(keys: list[str], directions: Directions) -> str:
    return ",".join(k if not directions or directions[i] is ASC else f"{k} {directions[i].value}"
                    for i, k in enumerate(keys))


@dataclass(frozen=True, eq=False)
class Required:
    """``hash``: hash-partitioned on exactly these columns in this order (join inputs must be
    co-partitioned). ``clustered``: equal values of these columns in one partition: any hash
    partitioning on a subset of them, or a single partition (aggregations); ``partitioned``:
    the same, which an exchange may make (windows). ``ordering``: sorted on these columns
    within each partition, each in its ``directions`` (ascending, NULLs first, when empty: a
    sort-merge join's inputs)."""

    distribution: Distribution = "any"
    partitioning: tuple[int, ...] = ()   # column ids, for "hash", "clustered" and "partitioned"
    ordering: tuple[int, ...] = ()       # column ids
    directions: Directions = ()          # per ordering position; () for all ASC

    def __post_init__(self) -> None:
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(f"unknown distribution {self.distribution!r}")

    def __str__(self) -> str:
        parts: list[str] = [self.distribution]
        if self.partitioning:
            parts.append("on " + ",".join(f"c{c}" for c in self.partitioning))
        if self.ordering:
            parts.append("ordered by " + _show_ordering([f"c{c}" for c in self.ordering], self.directions))
        return " ".join(parts)

    @cached_property
    def enforced(self) -> Delivered:
        """What an enforcer producing these properties delivers."""
        ordering = tuple(frozenset({c}) for c in self.ordering)
        if self.distribution in ("hash", "clustered", "partitioned"):
            return Delivered("hash", tuple(frozenset({c}) for c in self.partitioning), ordering, self.directions)
        return Delivered(self.distribution, (), ordering, self.directions)


ANY = Required()
BROADCAST = Required("broadcast")
SINGLE = Required("single")


class Requirements:
    """The property sets one search asks for, one object per distinct set: the search keys its
    winners by a set's identity (hashing a property set per lookup would cost more than the
    lookup), so every set it builds comes from here. ``ANY``, ``BROADCAST`` and ``SINGLE`` are
    the same objects in every search."""

    def __init__(self) -> None:
        self._known = {(r.distribution, r.partitioning, r.ordering, r.directions): r for r in (ANY, BROADCAST, SINGLE)}

    def __call__(self, distribution: Distribution = "any", partitioning: tuple[int, ...] = (),
                 ordering: tuple[int, ...] = (), directions: Directions = ()) -> Required:
        if all(d is ASC for d in directions):
            directions = ()   # (one spelling of all ascending, so that equal sets are one object)
        elif len(directions) != len(ordering):
            raise ValueError("an ordering needs one direction per column")
        key = (distribution, partitioning, ordering, directions)
        found = self._known.get(key)
        if found is None:
            found = self._known[key] = Required(distribution, partitioning, ordering, directions)
        return found

    def without_ordering(self, need: Required) -> Required:
        return self(need.distribution, need.partitioning)


Classes = tuple[frozenset[int], ...]


@dataclass(frozen=True)
class Delivered:
    """What a plan delivers. ``partitioning`` and ``ordering`` hold one set of column ids per
    position: columns a join made equal are interchangeable (a join on ``a = b`` partitioned on
    ``a`` is also partitioned on ``b``, as Spark's ``PartitioningCollection`` says)."""

    distribution: Distribution = "any"   # any, single, hash or broadcast
    partitioning: Classes = ()
    ordering: Classes = ()
    directions: Directions = ()      # per ordering position; () for all ASC

    def satisfies(self, need: Required) -> bool:
        if need.ordering and not _prefix(need.ordering, self.ordering):
            return False
        if (need.directions or self.directions) and need.ordering and \
                any(_at(need.directions, i) is not _at(self.directions, i) for i in range(len(need.ordering))):
            return False
        kind = need.distribution
        if kind == "any":
            return True
        if kind in ("single", "broadcast"):
            return self.distribution == kind
        if kind == "hash":
            return (self.distribution == "hash" and len(self.partitioning) == len(need.partitioning)
                    and all(c in s for c, s in zip(need.partitioning, self.partitioning)))
        # clustered, partitioned
        if self.distribution == "single":
            return True
        wanted = set(need.partitioning)
        return self.distribution == "hash" and all(s & wanted for s in self.partitioning)

    def renamed(self, mapping: dict[int, set[int]]) -> Delivered:
        """Through a projection: each column id becomes the output ids carrying it; a position
        whose columns are all dropped loses the property from there on."""
        def rename(classes: Classes) -> Classes | None:
            out = []
            for members in classes:
                mapped = frozenset(m for c in members for m in mapping.get(c, ()))
                if not mapped:
                    return None
                out.append(mapped)
            return tuple(out)

        ordering = rename(self.ordering) if self.ordering else ()
        if ordering is None:
            # an ordering is still good up to its first dropped column
            ordering = ()
        directions = self.directions[:len(ordering)] if ordering and self.directions else ()
        if self.distribution != "hash":
            return Delivered(self.distribution, (), ordering, directions)
        partitioning = rename(self.partitioning)
        if partitioning is None:
            return Delivered("any", (), ordering, directions)
        return Delivered("hash", partitioning, ordering, directions)

    def merged(self, equal: list[tuple[int, int]]) -> Delivered:
        """After a join made ``a = b`` for each pair: each position also holds the equal columns."""
        if not equal:
            return self

        def widen(classes: Classes) -> Classes:
            # Each pair in order, as a growing set would take it; a class no pair touches is
            # kept as it is (the search widens a probe side's classes for each join it adds).
            out = []
            for members in classes:
                grown = members
                for a, b in equal:
                    if a in grown:
                        if b not in grown:
                            grown = grown | {b}
                    elif b in grown:
                        grown = grown | {a}
                out.append(grown)
            return tuple(out)

        return Delivered(self.distribution, widen(self.partitioning), widen(self.ordering), self.directions)

    def __str__(self) -> str:
        def show(classes: Classes) -> list[str]:
            return ["=".join(f"c{c}" for c in sorted(s)) for s in classes]

        text = self.distribution + (f" on {','.join(show(self.partitioning))}" if self.partitioning else "")
        return text + (f" ordered by {_show_ordering(show(self.ordering), self.directions)}" if self.ordering else "")


def _prefix(columns: tuple[int, ...], ordering: Classes) -> bool:
    return len(ordering) >= len(columns) and all(c in s for c, s in zip(columns, ordering))


def _at(directions: Directions, index: int) -> Direction:
    return directions[index] if directions else ASC


UNKNOWN = Delivered()


def exchange_algorithm(need: Required):
    """The exchange enforcer delivering ``need``'s distribution: a broadcast, a gather to one
    partition, or a hash shuffle (``cbo.physical.algorithm.Algorithm``)."""
    from cbo.physical.algorithm import Algorithm

    if need.distribution == "broadcast":
        return Algorithm.BROADCAST
    if need.distribution == "single":
        return Algorithm.GATHER
    return Algorithm.SHUFFLE
