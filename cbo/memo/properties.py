"""Physical properties a parent can require of a group's plan.

The search optimizes a group once per distinct required set and keeps a winner for each, so
a plan that delivers a property (e.g. rows already partitioned on the join key) can win over
a cheaper one that needs an enforcer on top. Today every operator requires ``ANY``: Spark's
planner inserts its own exchanges. Distribution and ordering (and the enforcers that deliver
them: shuffle, broadcast, gather, sort) arrive with the Spark cost model.
"""

from __future__ import annotations

from dataclasses import dataclass

from cbo.ir.operators import SortKey


@dataclass(frozen=True, eq=False)
class Required:
    distribution: str = "any"            # any | single | hash | broadcast
    partitioning: tuple[int, ...] = ()   # column ids, for distribution "hash"
    ordering: tuple[SortKey, ...] = ()

    def __str__(self) -> str:
        parts = [self.distribution]
        if self.partitioning:
            parts.append("on " + ",".join(f"c{c}" for c in self.partitioning))
        if self.ordering:
            parts.append("ordered by " + ", ".join(str(k) for k in self.ordering))
        return " ".join(parts)


_INTERNED: dict[tuple[object, ...], Required] = {}


def required(distribution: str = "any", partitioning: tuple[int, ...] = (),
             ordering: tuple[SortKey, ...] = ()) -> Required:
    """The one ``Required`` with these values: property sets are interned, so the search keys
    its winners by identity (hashing a property set per lookup would cost more than the lookup)."""
    key = (distribution, partitioning, ordering)
    found = _INTERNED.get(key)
    if found is None:
        found = _INTERNED[key] = Required(distribution, partitioning, ordering)
    return found


ANY = required()
