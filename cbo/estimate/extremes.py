"""An extreme joined back: ``x = min(x)`` of the same table's rows, grouped by a key the join set
also joins on (a decorrelated ``x = (SELECT min(x) ... WHERE key = outer.key)``, TPC-H Q2).

Each group keeps the one row (ties aside) that holds its extreme, of the rows it pairs with in
the set. Which rows those are depends on what restricted the aggregate's input:

* **Unrestricted, or restricted otherwise than the set restricts ``x``'s rows**: the extreme
  is one of the group's rows of ``x``'s leaf, and the set's other joins and filters keep it as
  they keep any row. The class keeps one in ``f``, ``f`` the group's rows of ``x``'s leaf in
  the set (``extreme_selectivity``).
* **Restricted as the set restricts ``x``'s rows** (the cheapest supplier of each part among
  the EUROPE suppliers, joined back through the same EUROPE filter): the extreme row passes
  those restrictions by construction, so the set keeps one row per group. Counted as above, the
  EUROPE share was applied a second time (Q2's whole query: 0.27 of the truth). The class then
  keeps one in ``f`` of the group's rows that pass them.

"Restricted as" is decided by ``restriction``: the leaves reached from ``x``'s leaf through
the set's classes (not through the grouping key, nor into the aggregate), each described by
its table and the conditions its filters apply (``RelEstimate.conditions``, columns by name),
and the classes traversed, described by their members' tables and columns. The
aggregate's input carries its own description on the extreme's ``Origin``
(``extreme_over``); the two must be equal.
"""

from __future__ import annotations

from collections.abc import Sequence

from cbo.estimate.relation import Leaf
from cbo.ir.expressions import Call, Column, ColumnRef, Constant, Expr, SpecialForm, conjuncts

Restriction = frozenset

# Below this share of ``x``'s rows passing the restrictions, the restricted count is not used:
# a near-empty restriction is better left to the set's own floors than divided by.
MIN_PASSING = 1e-3


def restriction(leaves: Sequence[Leaf], classes: Sequence[Sequence[Column]], leaf_of: dict[Column, int],
                start: int, excluded_leaves: frozenset[int], excluded_classes: frozenset[int],
                residual: frozenset[Column] = frozenset()) -> tuple[Restriction, list[int], list[int]] | None:
    """What restricts the rows of leaf ``start`` in a join set: (its description, the leaves
    reached, the classes traversed). Only a chain that keeps each row of ``start`` at most once
    is described: each class traversed joins a leaf already reached to a new one on that new
    leaf's unique key, and no leaf is reached twice (a composite key, a cycle); a leaf reached
    is in no excluded class and no residual conjunct reads ``start`` or a leaf reached (those
    would restrict or multiply the rows otherwise than the description says). None otherwise,
    or where a leaf cannot be described (``_leaf_description``)."""
    described = _leaf_description(leaves[start])
    if described is None or leaves[start].key & residual:
        return None
    parts: set = {("start", described)}
    reached = [start]
    traversed: list[int] = []
    seen = {start}
    frontier = [start]
    while frontier:
        index = frontier.pop()
        for k, members in enumerate(classes):
            if k in excluded_classes or k in traversed or not any(leaf_of[c] == index for c in members):
                continue
            inside = [c for c in members if leaf_of[c] not in excluded_leaves]
            if len({leaf_of[c] for c in inside}) < 2:
                continue
            if len(inside) != 2:
                return None
            near, far = inside if leaf_of[inside[0]] == index else inside[::-1]
            other = leaf_of[far]
            if leaf_of[near] != index or other in seen or far not in leaves[other].single_keys \
                    or leaves[other].key & residual:
                return None
            if any(j in excluded_classes and leaf_of[c] == other for j, c_s in enumerate(classes) for c in c_s):
                return None
            edge = (_column_description(leaves[index], near), _column_description(leaves[other], far))
            described = _leaf_description(leaves[other])
            if None in edge or described is None:
                return None
            traversed.append(k)
            parts.add(("class", edge))
            parts.add(("leaf", described))
            seen.add(other)
            reached.append(other)
            frontier.append(other)
    return frozenset(parts), reached[1:], traversed


def _leaf_description(leaf: Leaf) -> tuple | None:
    """The leaf's table and the conditions its filters apply (columns by name: the two copies
    of a table have columns of different ids), where it is a filtered scan of one table; None
    otherwise."""
    conditions = leaf.estimate.conditions
    origins = leaf.estimate.origins
    tables = {getattr(o.scan, "table", None) for o in origins.values()}
    if conditions is None or len(tables) != 1 or None in tables or any(o.extreme for o in origins.values()):
        return None
    described = frozenset(_canonical(c) for p in conditions for c in conjuncts(p))
    return None if None in described else (next(iter(tables)), described)


def _canonical(e: Expr) -> tuple | None:
    """An expression with its columns by name (constants as they are: ``'Brand#12'`` is not
    ``'Brand#34'``); None for a kind of expression not described (a subquery)."""
    if isinstance(e, ColumnRef):
        return ("column", e.column.name.lower())
    if isinstance(e, Constant):
        return ("constant", repr(e.value), str(e.type))
    if isinstance(e, (Call, SpecialForm)):
        args = tuple(_canonical(a) for a in e.args)
        if None in args:
            return None
        return (type(e).__name__, e.name if isinstance(e, Call) else e.form, args, str(e.type))
    return None


def _column_description(leaf: Leaf, column: Column) -> tuple | None:
    origin = leaf.estimate.origins.get(column)
    table = getattr(origin.scan, "table", None) if origin is not None else None
    if origin is None or table is None or origin.name is None or origin.extreme is not None:
        return None
    return (table, origin.name.lower())


def extreme_selectivity(k: int, classes: Sequence[tuple[Column, ...]], selectivities: Sequence[float],
                        leaves: Sequence[Leaf], leaf_of: dict[Column, int],
                        residual: frozenset[Column] = frozenset()) -> float | None:
    """The selectivity of class ``k`` where it is ``x = min(x)`` (or max) and the aggregate's
    leaf is also joined to ``x``'s leaf through other classes (its grouping key); None when
    the class is not of that shape. ``residual``: the columns the set's other conjuncts read.
    See the module's docstring."""
    members = classes[k]
    for x, m in _extreme_orientations(members, leaves, leaf_of):
        own, other = leaf_of[x], leaf_of[m]
        linking = [j for j, c in enumerate(classes) if j != k and {own, other} <= {leaf_of[y] for y in c}]
        if not linking:
            continue
        per_group = leaves[own].estimate.rows
        mine = [c for j in linking for c in classes[j] if leaf_of[c] == own]
        if len(linking) == 1 and len(mine) == 1:
            # the group's rows in ``x``'s leaf: its rows with a key per value of the key (the
            # linking class's selectivity would also count the class's other members: the part
            # table joined on the same key as well made it 1 / 200,000 too small)
            key = leaves[own].estimate.column(mine[0])
            per_group = key.non_null / max(key.distinct, 1.0)
        else:
            for j in linking:
                per_group *= selectivities[j]
        over = leaves[other].estimate.origins[m].extreme_over
        if over is not None:
            found = restriction(leaves, classes, leaf_of, own, frozenset([other]), frozenset([k, *linking]), residual)
            if found is not None and found[0] == over and found[2]:
                # Restricted as the aggregate's input was: each row of ``x``'s leaf meets at
                # most one row of each leaf reached (unique keys), so the reached leaves' rows
                # times the classes' selectivities are the share of its rows passing. The set
                # counts each group's passing rows as it counts any (``per_group`` times that
                # share: 0.8 of Q2's four supplies of a part); the extreme keeps one of them.
                _, reached, traversed = found
                passing = 1.0
                for index in reached:
                    passing *= leaves[index].estimate.rows
                for j in traversed:
                    passing *= selectivities[j]
                passing = min(passing, 1.0)
                if passing >= MIN_PASSING and per_group > 0:
                    return 1.0 / (per_group * passing)
        return 1.0 / max(per_group, 1.0)
    return None


def _extreme_orientations(members: Sequence[Column], leaves: Sequence[Leaf],
                          leaf_of: dict[Column, int]) -> list[tuple[Column, Column]]:
    """The (column, its extreme) orders of a class of two in which the second member is an
    extreme of the first's column of the same table (the shape ``extreme_selectivity`` looks
    for before it reads the set's other classes)."""
    if len(members) != 2:
        return []
    found = []
    for x, m in (members, members[::-1]):
        source, extreme = leaves[leaf_of[x]].estimate.origins.get(x), leaves[leaf_of[m]].estimate.origins.get(m)
        if source is None or extreme is None or extreme.extreme is None or source.extreme is not None:
            continue
        if getattr(source.scan, "table", None) != getattr(extreme.scan, "table", None) or source.name != extreme.name:
            continue
        found.append((x, m))
    return found


def extreme_candidate(members: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int]) -> bool:
    """Whether ``extreme_selectivity`` may find the class an extreme joined back."""
    return bool(_extreme_orientations(members, leaves, leaf_of))
