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

Required sets are interned (``required()``) so the search keys its winners by identity.
"""

from __future__ import annotations

from dataclasses import dataclass

DISTRIBUTIONS = ("any", "single", "hash", "clustered", "broadcast")


@dataclass(frozen=True, eq=False)
class Required:
    """``hash``: hash-partitioned on exactly these columns in this order (join inputs must be
    co-partitioned). ``clustered``: equal values of these columns in one partition: any hash
    partitioning on a subset of them, or a single partition (aggregations). ``ordering``: sorted
    ascending on these columns within each partition (sort-merge join inputs)."""

    distribution: str = "any"
    partitioning: tuple[int, ...] = ()   # column ids, for "hash" and "clustered"
    ordering: tuple[int, ...] = ()       # column ids, ascending

    def __str__(self) -> str:
        parts = [self.distribution]
        if self.partitioning:
            parts.append("on " + ",".join(f"c{c}" for c in self.partitioning))
        if self.ordering:
            parts.append("ordered by " + ",".join(f"c{c}" for c in self.ordering))
        return " ".join(parts)

    def without_ordering(self) -> Required:
        return required(self.distribution, self.partitioning)


_INTERNED: dict[tuple[object, ...], Required] = {}


def required(distribution: str = "any", partitioning: tuple[int, ...] = (),
             ordering: tuple[int, ...] = ()) -> Required:
    """The one ``Required`` with these values: property sets are interned, so the search keys
    its winners by identity (hashing a property set per lookup would cost more than the lookup)."""
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"unknown distribution {distribution!r}")
    key = (distribution, partitioning, ordering)
    found = _INTERNED.get(key)
    if found is None:
        found = _INTERNED[key] = Required(distribution, partitioning, ordering)
    return found


ANY = required()
BROADCAST = required("broadcast")
SINGLE = required("single")


Classes = tuple[frozenset[int], ...]


@dataclass(frozen=True)
class Delivered:
    """What a plan delivers. ``partitioning`` and ``ordering`` hold one set of column ids per
    position: columns a join made equal are interchangeable (a join on ``a = b`` partitioned on
    ``a`` is also partitioned on ``b``, as Spark's ``PartitioningCollection`` says)."""

    distribution: str = "any"        # any | single | hash | broadcast
    partitioning: Classes = ()
    ordering: Classes = ()

    def satisfies(self, need: Required) -> bool:
        if need.ordering and not _prefix(need.ordering, self.ordering):
            return False
        kind = need.distribution
        if kind == "any":
            return True
        if kind in ("single", "broadcast"):
            return self.distribution == kind
        if kind == "hash":
            return (self.distribution == "hash" and len(self.partitioning) == len(need.partitioning)
                    and all(c in s for c, s in zip(need.partitioning, self.partitioning)))
        # clustered
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
        if self.distribution != "hash":
            return Delivered(self.distribution, (), ordering)
        partitioning = rename(self.partitioning)
        if partitioning is None:
            return Delivered("any", (), ordering)
        return Delivered("hash", partitioning, ordering)

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

        return Delivered(self.distribution, widen(self.partitioning), widen(self.ordering))

    def __str__(self) -> str:
        def show(classes: Classes) -> str:
            return ",".join("=".join(f"c{c}" for c in sorted(s)) for s in classes)

        text = self.distribution + (f" on {show(self.partitioning)}" if self.partitioning else "")
        return text + (f" ordered by {show(self.ordering)}" if self.ordering else "")


def _prefix(columns: tuple[int, ...], ordering: Classes) -> bool:
    return len(ordering) >= len(columns) and all(c in s for c, s in zip(columns, ordering))


UNKNOWN = Delivered()


_DELIVERED_BY: dict[int, Delivered] = {}


def delivered_by(need: Required) -> Delivered:
    """What an enforcer producing ``need`` delivers."""
    found = _DELIVERED_BY.get(id(need))   # requirements are interned: one answer per identity
    if found is None:
        found = _DELIVERED_BY[id(need)] = _delivered_by(need)
    return found


def _delivered_by(need: Required) -> Delivered:
    ordering = tuple(frozenset({c}) for c in need.ordering)
    if need.distribution in ("hash", "clustered"):
        return Delivered("hash", tuple(frozenset({c}) for c in need.partitioning), ordering)
    return Delivered(need.distribution, (), ordering)
