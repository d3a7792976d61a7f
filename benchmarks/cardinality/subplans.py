"""The sub-plans of a query whose cardinalities the harness compares.

A query's plan holds regions of inner joins and filters. Their leaves are the relations: base
tables, or any other operator (an aggregate, a semi join) taken whole. Each connected set of
a region's relations, joined by the region's predicates among them and carrying each
relation's own filters, is one sub-plan, with ``joins`` = relations - 1. A single relation is a
sub-plan when it has filters or is not a plain table. Regions inside leaves are visited too.

A region of more than ``MAX_RELATIONS`` relations is not enumerated (its connected sets grow
exponentially with it): ``too_wide`` names such regions, so that a run can say what it left out.
``spread`` keeps at most a given number of a query's sub-plans, evenly spaced in the order
found, with the widest ones (the whole query) always among them.
"""

from __future__ import annotations

from dataclasses import dataclass

from cbo.ir.expressions import Expr, columns_of, conjunction, conjuncts
from cbo.ir.operators import Filter, Join, Plan, Scan, walk

MAX_RELATIONS = 12


@dataclass(frozen=True)
class SubPlan:
    plan: Plan
    relations: tuple[str, ...]    # names of the relations, for display
    joins: int


def subplans(plan: Plan) -> list[SubPlan]:
    found: dict[Plan, SubPlan] = {}
    for region in _regions(plan):
        for sub in _connected(region):
            found.setdefault(sub.plan, sub)
    return list(found.values())


def too_wide(plan: Plan) -> list[tuple[str, ...]]:
    """The regions of ``plan`` that ``subplans`` does not enumerate (over ``MAX_RELATIONS``
    relations), each as its relations' names."""
    return [tuple(_name(leaf) for leaf in region.leaves) for region in _regions(plan)
            if len(region.leaves) > MAX_RELATIONS]


def spread(found: list[SubPlan], limit: int | None) -> list[SubPlan]:
    """At most ``limit`` of ``found`` (all when None): every sub-plan of the most joins, then
    the others picked evenly spaced along ``found``'s order (region by region, each from its
    smallest sets to its largest), so the sample spans the join counts and the regions. The
    same input gives the same choice."""
    if limit is None or len(found) <= limit:
        return found
    widest = max(sub.joins for sub in found)
    kept = {i for i, sub in enumerate(found) if sub.joins == widest}
    rest = [i for i in range(len(found)) if i not in kept]
    room = limit - len(kept)
    if room <= 0:
        return [found[i] for i in sorted(kept)[:limit]]
    if room == 1:
        kept.add(rest[0])
    else:
        # steps of (len(rest) - 1) / (room - 1) >= 1: the rounded positions are all different
        kept.update(rest[round(k * (len(rest) - 1) / (room - 1))] for k in range(room))
    return [found[i] for i in sorted(kept)]


@dataclass
class _Region:
    leaves: list[Plan]
    predicates: list[Expr]


def _regions(plan: Plan) -> list[_Region]:
    regions = []
    seen: set[int] = set()
    for node in walk(plan):
        if id(node) in seen or not _is_region_node(node):
            continue
        leaves: list[Plan] = []
        predicates: list[Expr] = []
        _flatten(node, leaves, predicates, seen)
        regions.append(_Region(leaves, predicates))
    return regions


def _is_region_node(node: Plan) -> bool:
    return (isinstance(node, Join) and node.kind == "inner") or isinstance(node, Filter)


def _flatten(node: Plan, leaves: list[Plan], predicates: list[Expr], seen: set[int]) -> None:
    seen.add(id(node))
    if isinstance(node, Join) and node.kind == "inner":
        _flatten(node.left, leaves, predicates, seen)
        _flatten(node.right, leaves, predicates, seen)
        predicates.extend(conjuncts(node.condition))
    elif isinstance(node, Filter):
        _flatten(node.input, leaves, predicates, seen)
        predicates.extend(conjuncts(node.predicate))
    else:
        leaves.append(node)


def _connected(region: _Region) -> list[SubPlan]:
    leaves = region.leaves
    if len(leaves) > MAX_RELATIONS:
        return []
    owner = {c: i for i, leaf in enumerate(leaves) for c in leaf.output}
    local: dict[int, list[Expr]] = {i: [] for i in range(len(leaves))}
    edges: list[tuple[frozenset[int], Expr]] = []
    for predicate in region.predicates:
        touched = frozenset(owner[c] for c in columns_of(predicate) if c in owner)
        if len(touched) == 1:
            local[next(iter(touched))].append(predicate)
        elif len(touched) > 1:
            edges.append((touched, predicate))
    neighbours = {i: set() for i in range(len(leaves))}
    for touched, _ in edges:
        for a in touched:
            neighbours[a] |= touched - {a}
    result = []
    for subset in _connected_subsets(len(leaves), neighbours):
        if len(subset) == 1:
            (only,) = subset
            if not local[only] and isinstance(leaves[only], Scan):
                continue
        plan = _build(sorted(subset), leaves, local, edges, neighbours)
        names = tuple(_name(leaves[i]) for i in sorted(subset))
        result.append(SubPlan(plan, names, len(subset) - 1))
    return result


def _connected_subsets(n: int, neighbours: dict[int, set[int]]) -> list[frozenset[int]]:
    found: set[frozenset[int]] = set()
    frontier = [frozenset({i}) for i in range(n)]
    found.update(frontier)
    while frontier:
        grown = []
        for subset in frontier:
            for member in subset:
                for other in neighbours[member] - subset:
                    bigger = subset | {other}
                    if bigger not in found:
                        found.add(bigger)
                        grown.append(bigger)
        frontier = grown
    return sorted(found, key=lambda s: (len(s), sorted(s)))


def _build(order: list[int], leaves: list[Plan], local: dict[int, list[Expr]],
           edges: list[tuple[frozenset[int], Expr]], neighbours: dict[int, set[int]]) -> Plan:
    def relation(i: int) -> Plan:
        return Filter(leaves[i], conjunction(local[i])) if local[i] else leaves[i]

    members = set(order)
    joined = [order[0]]
    plan = relation(order[0])
    remaining = [i for i in order[1:]]
    while remaining:
        # next: the first remaining relation connected to what is joined (keeps it cross-product free)
        pick = next(i for i in remaining if neighbours[i] & set(joined))
        remaining.remove(pick)
        inside = set(joined) | {pick}
        condition = [e for touched, e in edges if pick in touched and touched <= inside and touched <= members]
        plan = Join("inner", plan, relation(pick), conjunction(condition))
        joined.append(pick)
    return plan


def _name(leaf: Plan) -> str:
    if isinstance(leaf, Scan):
        return leaf.table.split(".", 1)[-1]
    return type(leaf).__name__.lower()


__all__ = ["MAX_RELATIONS", "SubPlan", "spread", "subplans", "too_wide"]
