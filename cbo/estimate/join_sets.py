"""Inner-join sets: the estimate of a tree of inner joins as a function of the set it joins.

A tree of inner joins is one relation however it is ordered: its inputs (the *leaves*: scans,
filtered scans, anything that is not itself an inner join) and the conjuncts of all its join
conditions. Estimating it pair by pair in the order the tree (or the memo) built it makes the
estimate depend on that order: each join narrows and rescales the key columns it matched, and
the next join reads those rescaled columns, so (A ⋈ B) ⋈ C and A ⋈ (B ⋈ C) differ, sometimes by
orders of magnitude near empty results. Here the estimate is computed from the set alone:

    rows = product(leaf rows) x product over equivalence classes of the class's selectivity
           x product of the residual conjuncts' selectivities x composite-key corrections

* **Equivalence classes.** Equalities ``a = b`` between leaf columns are merged into classes
  (union-find), so which member a condition names does not matter, and redundant equalities
  (``a = b, b = c, a = c``) count once. A class's selectivity is ``matching_tuples`` of its
  members' distributions (``cbo.estimate.matching``) over the product of their leaves' rows: a
  foreign key meeting another at a primary key is estimated from both foreign keys' skew.
  Two members from one leaf (``x.a = y.k = x.b``) are matched as if independent within the leaf.
* **Samples.** Filters correlated with the join (busy users pass a reputation filter and own
  many posts; excerpt posts are never linked) are measured on the leaves' row samples, which
  are independent across tables: the product of per-value counts among sampled rows passing
  the filters counts matching tuples. Where every sample is its whole table that count is
  exact (``_counted``). Otherwise the unfiltered distributions' count is scaled by the sample
  (``_from_base``, as ``joins.sampled_selectivity`` does for one pair), and where the sample
  matches too rarely for that, the filtered distributions' count stands unless the sample
  contradicts it by more than two standard deviations (``_sampled``).
* **Self-joins.** Two members read from one table's sample (``p1.OwnerUserId = u.Id =
  p2.LastEditorUserId``) are counted on it, a row paired with itself weighted by the sample's
  fraction ``f`` rather than ``f^2`` (``_ClassIndex``).
* **Empty classes bound their set.** A class the samples find empty (no sampled tuple passes,
  or two members of a class of three never meet: ``_empty_pairs``) is estimated at half a
  sampled tuple, and the set keeps at most that class's own estimate: the other joins would
  multiply a floor, not rows.
* **A key bounds its class.** A unique key holds each value once, so a class has no more
  tuples than its other members alone; where their samples show that they never meet (tags
  and post links never share a post), that bounds the class (``_bound_without_key``).
* **Leaves in several classes.** Classes are independent of each other only as a first
  guess: a leaf matched through two of them (posts through ``posts.Id`` by tags and through
  ``posts.OwnerUserId`` by badges) is checked on its sample for correlation between them
  (``_leaf_correlation``).
* **An extreme joined back.** ``x = min(x)`` of the same table's rows, grouped by the key the
  set also joins on (a decorrelated ``x = (SELECT min(x) ... WHERE key = outer.key)``), keeps
  one row per group (``_extreme_of_same_rows``).
* **Keys.** A class member that is a unique key of its leaf matches each tuple of the others at
  most once: the class's selectivity is at most one over that leaf's rows. Two leaves joined on
  several classes whose columns form a known column group (a composite key or foreign key) are
  matched on the group's domain, not as independent single columns.

Every output column in a class carries the class's joint distribution (per value, the product
of the members' rows), scaled to the output rows: after ``posts ⋈ users``, ``users.Id`` carries
the skew of ``posts.LastEditorUserId``. Other columns are their leaf's, scaled.
"""

from __future__ import annotations

import math
import weakref
from collections import ChainMap
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

import numpy as np

from cbo.estimate import defaults
from cbo.estimate.column import ColumnEstimate
from cbo.estimate.filters import generic_selectivity
from cbo.estimate.joins import matched_rows
from cbo.estimate.matching import joint, matching_tuples
from cbo.estimate.plan_facts import PlanFacts, leaf_facts
from cbo.estimate.relation import DerivedColumns, JoinSet, Leaf, Origin, RelEstimate
from cbo.estimate.upper_bound import join_bound
from cbo.ir.expressions import Column, Expr, columns_of, conjuncts
from cbo.ir.operators import Join, Plan, equated_columns

T = TypeVar("T")


def leaves_of(estimate: RelEstimate, plan: Plan, facts: PlanFacts | None = None) \
        -> tuple[tuple[Leaf, ...], frozenset[Expr]]:
    """The leaves and join conjuncts of an input: its own if it is an inner-join set, else
    itself as one leaf (its columns and keys from ``facts`` where given)."""
    if estimate.join_set is not None:
        return estimate.join_set.leaves, estimate.join_set.conjuncts
    key, unique, foreign = facts.leaf(plan) if facts is not None else leaf_facts(plan)
    return (Leaf(key, estimate, unique, foreign),), frozenset()


def _leaf_order(leaf: Leaf) -> int:
    return leaf.order


def join_set_of(node: Join, left: RelEstimate, right: RelEstimate, facts: PlanFacts | None = None) -> JoinSet:
    """The set ``node`` joins; ``facts`` keeps what is read of the plan nodes."""
    left_leaves, left_conjuncts = leaves_of(left, node.left, facts)
    right_leaves, right_conjuncts = leaves_of(right, node.right, facts)
    leaves = sorted(left_leaves + right_leaves, key=_leaf_order)
    own = facts.conjuncts(node) if facts is not None else frozenset(conjuncts(node.condition))
    return JoinSet(tuple(leaves), left_conjuncts | right_conjuncts | own)


def estimate_join_set(join_set: JoinSet, upper: bool = False) -> RelEstimate:
    """The set's estimate; with ``upper``, its rows are the degree bound of ``upper_bound``
    (the pessimistic mode) rather than the estimate."""
    leaves = join_set.leaves
    leaf_of: dict[Column, int] = {}
    for index, leaf in enumerate(leaves):
        leaf_of.update(dict.fromkeys(leaf.key, index))
    classes, residual = _classes(join_set.conjuncts, leaf_of)
    notes: list[str] = []
    rows = 1.0
    for leaf in leaves:
        rows *= leaf.estimate.rows
    combined: ChainMap[Column, ColumnEstimate] = ChainMap(*[leaf.estimate.columns for leaf in leaves])  # type: ignore[arg-type]
    # each class member's class, filled when a column is first derived (a memo reads the
    # columns of few of its join sets)
    class_of: dict[Column, int] = {}
    empty_alone: list[float] = []
    if rows > 0:
        grouped = _composite_pairs(classes, leaves, leaf_of)
        in_group = {k for _, _, ks in grouped for k in ks}
        selectivities = []
        extremes = []   # the classes that may be an extreme joined back
        # each class's members' leaves, found once per set (a column's hash is a Python call)
        where = [[leaf_of[c] for c in members] for members in classes]
        for k, members in enumerate(classes):
            selectivity, own_notes, empty, caps, extreme = _class_outcome(
                members, k not in in_group, leaves, leaf_of, tuple([leaves[i].estimate for i in where[k]]))
            selectivities.append(selectivity)
            notes.extend(own_notes)
            if empty:
                # (in this set's order of leaves, as products are rounded in their order)
                alone = selectivity
                for index in set(where[k]):
                    alone *= leaves[index].estimate.rows
                empty_alone.append(alone)
            empty_alone.extend(caps)
            if extreme:
                extremes.append(k)
        for k in range(len(classes)):
            found = _extreme_of_same_rows(k, classes, selectivities, leaves, leaf_of) if k in extremes else None
            rows *= found if found is not None else selectivities[k]
        for i, j, ks in grouped:
            rows *= _group_correction(i, j, [classes[k] for k in ks], leaves, leaf_of)
        # A composite key's classes are already matched jointly (``_group_correction``): for
        # each of its two leaves they count as one class, its first, so the dependence between
        # them (a lineitem's part and supplier are one partsupp row) is not corrected twice.
        merged = {(index, k) for _, _, ks in grouped for k in sorted(ks)[1:] for index in _pair_of(grouped, ks)}
        in_classes = [0] * len(leaves)
        for k in range(len(classes)):
            for index in set(where[k]):
                if (index, k) not in merged:
                    in_classes[index] += 1
        for index, count in enumerate(in_classes):
            if count >= 2 and leaves[index].estimate.sample is not None:
                own_classes = [m for k, m in enumerate(classes) if (index, k) not in merged]
                involved = tuple(m for m in own_classes if any(leaf_of[c] == index for c in m))
                members_of = tuple(c for m in involved for c in m)

                def correlation(_: list[str], i: int = index, these: list = own_classes) -> float:
                    return _leaf_correlation(i, these, leaves, leaf_of)

                rows *= _remembered(("leaf", involved, index), members_of, leaves, leaf_of, correlation, notes)
        scale = max((leaf.estimate.rows for leaf in leaves), default=1.0)
        for conjunct in sorted(residual, key=str):
            share, note = _residual_share(conjunct, combined, scale, leaves, leaf_of)
            rows *= share
            if note:
                notes.append(note)
        # A class the samples find empty is estimated at a floor (half a sampled tuple), not
        # from rows; the set's other joins would multiply that floor by their fan-out (empty
        # tags-posts pairs times the badges of busy editors). The set keeps at most the
        # class's own estimate: near empty stays near empty, whatever joins it.
        if empty_alone:
            rows = min(rows, min(empty_alone))
        if upper:
            rows = join_bound(leaves, classes, leaf_of)
            notes.append("pessimistic: join rows bounded by the leaves' largest value frequencies")
    total = rows
    joints: dict[int, ColumnEstimate] = {}

    kept: dict[int, float] = {}

    def derive(c: Column, e: ColumnEstimate) -> ColumnEstimate:
        if not class_of and classes:
            class_of.update({member: k for k, members in enumerate(classes) for member in members})
        k = class_of.get(c)
        if k is None:
            index = leaf_of.get(c)
            own = leaves[index].estimate.rows if index is not None else 0.0
            if own <= 0:
                return e.scaled(0.0)
            # First the leaf's rows that find a match (their values thin out), then the
            # repetition by the matches (no new values).
            share = kept.get(index)  # type: ignore[arg-type]
            if share is None:
                share = kept[index] = _shared_match(index, classes, leaves, leaf_of)  # type: ignore[index,arg-type]
            if share <= 0:
                return e.scaled(0.0)
            return e.scaled(share).scaled(total / (own * share))
        found = joints.get(k)
        if found is None:
            members = classes[k]
            distribution = _kept(("joint", members), members, leaves, leaf_of,
                                 lambda: joint([leaves[leaf_of[m]].estimate.column(m) for m in members]))
            mass = distribution.non_null
            found = joints[k] = distribution.scaled(total / mass) if mass > 0 else distribution.scaled(0.0)
        return found

    columns = DerivedColumns(combined, derive)
    groups: dict[frozenset[Column], float] = {}
    origins: dict[Column, Origin] = {}
    all_notes = frozenset(notes)
    for leaf in leaves:
        groups.update(leaf.estimate.groups)
        origins.update(leaf.estimate.origins)
        all_notes |= leaf.estimate.notes
    return RelEstimate(rows, columns, groups, origins, None, all_notes, join_set)


def _class_outcome(members: tuple[Column, ...], use_sample: bool, leaves: Sequence[Leaf],
                   leaf_of: dict[Column, int], estimates: tuple[RelEstimate, ...]) \
        -> tuple[float, tuple[str, ...], bool, tuple[float, ...], bool]:
    """``_class_result``, kept for the same members over the same leaf estimates (``estimates``,
    the members' leaves' in member order): the sets of a memo share most of their classes (a
    clique's class of ``t9.id`` is the same in every set with the same referencing leaves), and
    each set would otherwise look up the class, its floor's pairs and its empty pairs again."""
    return _kept_over(("outcome", members, use_sample), estimates,
                      lambda: _class_result(members, use_sample, leaves, leaf_of, estimates))


def _class_result(members: tuple[Column, ...], use_sample: bool, leaves: Sequence[Leaf],
                  leaf_of: dict[Column, int], estimates: tuple[RelEstimate, ...]) \
        -> tuple[float, tuple[str, ...], bool, tuple[float, ...], bool]:
    """What a class contributes to any set holding it, whatever the set's other classes: its
    selectivity (floored by ``_busy_everywhere_floor``), its notes, whether the samples find
    it empty, the caps its pairs found empty put on the set's rows, and whether it may be an
    extreme joined back (``_extreme_candidate``). Nothing here depends on the set's order of
    leaves (``leaf_of`` is read only to find each member's leaf)."""
    def measure(found: list[str]) -> float:
        return _class_selectivity(members, leaves, leaf_of, use_sample, found)

    own: list[str] = []
    selectivity = _remembered_over(("class", members, use_sample), estimates, measure, own)
    if use_sample and len(members) >= 3:
        floor = _busy_everywhere_floor(members, leaves, leaf_of, EMPTY_NOTE in own)
        if floor is not None and floor > selectivity:
            selectivity = floor
            own = [n for n in own if n != EMPTY_NOTE] + [FLOOR_NOTE]
    empty = EMPTY_NOTE in own
    caps: tuple[float, ...] = ()
    if use_sample and len(members) >= 3:
        # Pairs of members that never meet in their samples still cap the set (the bound
        # above is only about the class's own sampled tuples).
        caps = tuple(_empty_pairs(members, leaves, leaf_of, own))
    return selectivity, tuple(own), empty, caps, _extreme_candidate(members, leaves, leaf_of)


def _residual_share(conjunct: Expr, combined: Mapping[Column, ColumnEstimate], scale: float,
                    leaves: Sequence[Leaf], leaf_of: dict[Column, int]) -> tuple[float, str | None]:
    """``generic_selectivity`` of a conjunct that is not an equality class, kept for the same
    estimates of the leaves it reads (and the same scale): every set holding the conjunct's
    leaves asks again, and a conjunct over an aggregate's output (TPC-H Q17's ``l_quantity <
    0.2 * avg``) derives that output's distribution each time it is read."""
    read = sorted(columns_of(conjunct), key=lambda c: c.id)
    if not all(c in leaf_of for c in read):
        return generic_selectivity(conjunct, combined, scale)
    return _kept(("residual", conjunct, scale), read, leaves, leaf_of,
                 lambda: generic_selectivity(conjunct, combined, scale))


def _empty_pairs(members: tuple[Column, ...], leaves: Sequence[Leaf], leaf_of: dict[Column, int],
                 notes: list[str]) -> list[float]:
    """``_pairs_found_empty``, kept for the same class over the same leaf estimates (a clique's
    classes have dozens of pairs, and every set joining the same leaves asks again)."""
    sampled = 0
    for c in members:
        if leaves[leaf_of[c]].estimate.sample is not None:
            sampled += 1
    if sampled < 2:
        return []   # no pair with two samples: ``_pairs_found_empty`` measures none
    found = _kept(("empty pairs", members), members, leaves, leaf_of,
                  lambda: tuple(_pairs_found_empty(members, leaves, leaf_of)))
    notes.extend([EMPTY_NOTE] * len(found))   # one note per pair found empty, as measured
    return list(found)


def _pairs_found_empty(members: tuple[Column, ...], leaves: Sequence[Leaf], leaf_of: dict[Column, int]) -> list[float]:
    """The estimates of the class's pairs of members (of different leaves) that the samples
    find empty: a class of three is empty where two of its members never meet (recent users
    and old badges), which its own sampled tuples, few under all filters at once, may not
    show. Pairs are measured as a two-leaf set of the same leaves would be (and remembered).

    Only members whose leaf has a sample can be in such a pair: a pair is found empty by its
    samples alone (``_from_base`` and ``_sampled`` read both members' samples, and say nothing
    where one lacks it), so the others are not measured (a clique of leaves without samples
    has dozens of pairs per class, asked for every set)."""
    found: list[float] = []
    sampled = [c for c in members if leaves[leaf_of[c]].estimate.sample is not None]
    for x in range(len(sampled)):
        for y in range(x + 1, len(sampled)):
            a, b = sampled[x], sampled[y]
            if leaf_of[a] == leaf_of[b]:
                continue
            pair = (a, b)

            def measure(own: list[str], m: tuple[Column, ...] = pair) -> float:
                return _class_selectivity(m, leaves, leaf_of, True, own)

            own: list[str] = []
            selectivity = _remembered(("class", pair, True), pair, leaves, leaf_of, measure, own)
            if EMPTY_NOTE in own:
                bound = selectivity * leaves[leaf_of[a]].estimate.rows * leaves[leaf_of[b]].estimate.rows
                found.append(bound * _fan_out(members, pair, leaves, leaf_of))
    return found


def _fan_out(members: Sequence[Column], pair: tuple[Column, Column], leaves: Sequence[Leaf],
             leaf_of: dict[Column, int]) -> float:
    """The tuples that the class's members outside the pair's leaves add to each tuple of the
    pair, as their distributions match (at least 1): a pair the samples find empty bounds its
    class only that far. The owner-editor pairs of favourite posts, near empty, each meet the
    owner's badges, many for the busy users that own and edit such posts."""
    covered = {leaf_of[pair[0]], leaf_of[pair[1]]}
    others = []
    for c in members:
        if leaf_of[c] not in covered:
            covered.add(leaf_of[c])
            others.append(c)
    if not others:
        return 1.0
    columns = [leaves[leaf_of[c]].estimate.column(c) for c in (*pair, *others)]
    alone = matching_tuples(columns[:2])
    if alone <= 0:
        return 1.0
    return max(matching_tuples(columns) / alone, 1.0)


def _alive(refs: tuple[weakref.ref, ...], estimates: Sequence[object]) -> bool:
    """Whether the remembered objects are these very objects (an id may be reused)."""
    for ref, estimate in zip(refs, estimates):
        if ref() is not estimate:
            return False
    return True


# Weak references to the leaf estimates: the cache must not keep every estimate it met alive
# (tens of thousands of them, each with its columns and sample masks, which every full garbage
# collection then walks).
_REMEMBERED: dict[tuple, tuple[tuple[weakref.ref, ...], float, list[str]]] = {}


def _remembered(what: tuple, columns: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int],
                compute: Callable[[list[str]], float], notes: list[str]) -> float:
    """A class's (or a leaf's) factor, computed once for the same columns of the same leaf
    estimates: the sets of one join tree, and the groups of one memo, share their leaves, and
    a class or leaf met again is not measured again (its notes are repeated)."""
    return _remembered_over(what, tuple([leaves[leaf_of[c]].estimate for c in columns]), compute, notes)


def _remembered_over(what: tuple, estimates: tuple[RelEstimate, ...], compute: Callable[[list[str]], float],
                     notes: list[str]) -> float:
    """``_remembered`` of the columns whose leaf estimates are ``estimates``, in their order."""
    key = (what, tuple([id(e) for e in estimates]))
    found = _REMEMBERED.get(key)
    if found is not None and _alive(found[0], estimates):
        notes.extend(found[2])
        return found[1]
    own: list[str] = []
    value = compute(own)
    notes.extend(own)
    if len(_REMEMBERED) > 20_000:
        _REMEMBERED.clear()
    _REMEMBERED[key] = (tuple([weakref.ref(e) for e in estimates]), value, own)
    return value


# Values computed from the estimates of some leaves (a class's joint distribution, a leaf's
# matched share), kept as ``_REMEMBERED`` keeps factors: the join sets of one memo share their
# leaves, and an aggregation above each order of a join reads the same grouping columns.
_KEPT: dict[tuple, tuple[tuple[weakref.ref, ...], Any]] = {}


def _kept(what: tuple, columns: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int],
          compute: Callable[[], T]) -> T:
    """``compute()``, computed once for the same columns of the same leaf estimates."""
    return _kept_over(what, tuple([leaves[leaf_of[c]].estimate for c in columns]), compute)


def _kept_over(what: tuple, estimates: tuple[RelEstimate, ...], compute: Callable[[], T]) -> T:
    """``_kept`` of the columns whose leaf estimates are ``estimates``, in their order."""
    key = (what, tuple([id(e) for e in estimates]))
    found = _KEPT.get(key)
    if found is not None and _alive(found[0], estimates):
        return found[1]
    value = compute()
    if len(_KEPT) > 20_000:
        _KEPT.clear()
    _KEPT[key] = (tuple([weakref.ref(e) for e in estimates]), value)
    return value


def _shared_match(index: int, classes: Sequence[tuple[Column, ...]], leaves: Sequence[Leaf],
                  leaf_of: dict[Column, int]) -> float:
    """``_matched_share``, kept for the same leaf in the same classes over the same estimates."""
    involved = tuple(m for m in classes if any(leaf_of[c] == index for c in m)
                     and any(leaf_of[c] != index for c in m))
    if not involved:
        return 1.0
    members = tuple(c for m in involved for c in m)
    return _kept(("share", leaves[index].key, involved), members, leaves, leaf_of,
                 lambda: _matched_share(index, classes, leaves, leaf_of))


def _matched_share(index: int, classes: Sequence[tuple[Column, ...]], leaves: Sequence[Leaf],
                   leaf_of: dict[Column, int]) -> float:
    """Share of a leaf's rows that match in every class it belongs to (independently)."""
    rows = leaves[index].estimate.rows
    share = 1.0
    for members in classes:
        own = [c for c in members if leaf_of[c] == index]
        others = [leaves[leaf_of[c]].estimate.column(c) for c in members if leaf_of[c] != index]
        if not own or not others:
            continue
        column = leaves[index].estimate.column(own[0])
        share *= min(matched_rows(column, joint(others)) / rows, 1.0) if rows > 0 else 0.0
    return share


_CLASSES: dict[frozenset[Expr], tuple[list[tuple[Column, ...]], list[Expr]]] = {}


def _classes(parts: frozenset[Expr], leaf_of: dict[Column, int]) -> tuple[list[tuple[Column, ...]], list[Expr]]:
    """Equivalence classes of leaf columns (members sorted by id), and the other conjuncts;
    remembered per set of conjuncts (the columns a join set's conditions name are its leaves')."""
    found = _CLASSES.get(parts)
    if found is not None:
        return found
    found = _find_classes(parts, leaf_of)
    if len(_CLASSES) > 10_000:
        _CLASSES.clear()
    _CLASSES[parts] = found
    return found


def _find_classes(parts: Iterable[Expr], leaf_of: dict[Column, int]) -> tuple[list[tuple[Column, ...]], list[Expr]]:
    # Each column points to the member list of its class (shared by its members); merging
    # moves the smaller list into the larger. Only the partition matters: members are sorted
    # by id, classes by their first member.
    owner: dict[Column, list[Column]] = {}
    residual = []
    for conjunct in parts:
        pair = equated_columns(conjunct)
        if pair is None or pair[0] not in leaf_of or pair[1] not in leaf_of or pair[0] == pair[1]:
            residual.append(conjunct)
            continue
        a, b = pair
        in_a, in_b = owner.get(a), owner.get(b)
        if in_a is None and in_b is None:
            owner[a] = owner[b] = [a, b]
        elif in_a is None:
            in_b.append(a)  # type: ignore[union-attr]
            owner[a] = in_b  # type: ignore[assignment]
        elif in_b is None:
            in_a.append(b)
            owner[b] = in_a
        elif in_a is not in_b:
            if len(in_a) < len(in_b):
                in_a, in_b = in_b, in_a
            in_a.extend(in_b)
            for c in in_b:
                owner[c] = in_a
    distinct = {id(members): members for members in owner.values()}
    classes = [tuple(sorted(m, key=lambda c: c.id)) for m in distinct.values()]
    classes.sort(key=lambda m: m[0].id)
    return classes, residual


def _class_selectivity(members: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int],
                       use_sample: bool, notes: list[str]) -> float:
    """Selectivity of the class's equalities over the product of its leaves' rows."""
    by_leaf: dict[int, list[Column]] = {}
    for c in members:
        by_leaf.setdefault(leaf_of[c], []).append(c)
    sampled = use_sample and len(by_leaf) == len(members) >= 2
    tuples = _counted(members, leaves, leaf_of) if sampled else None
    if tuples is None and sampled:
        tuples = _from_base(members, leaves, leaf_of, notes)
    if tuples is None:
        columns = [leaves[leaf_of[c]].estimate.column(c) for c in members]
        if any(c.kind is None for c in columns):
            notes.append("a join column without value statistics: join estimated as uniform over distinct values")
        tuples = matching_tuples(columns)
        if sampled:
            corrected = _sampled(members, leaves, leaf_of, tuples, notes)
            if corrected is not None:
                tuples = corrected
            tuples = min(tuples, _bound_without_key(members, leaves, leaf_of, notes))
    denominator = 1.0
    for index, own in by_leaf.items():
        # m members of one leaf: one row holds all m values, not m independent rows.
        denominator *= leaves[index].estimate.rows ** len(own)
    selectivity = tuples / denominator if denominator > 0 else 0.0
    for index, own in by_leaf.items():
        leaf = leaves[index]
        if len(by_leaf) > 1 and any(c in leaf.single_keys for c in own) and leaf.estimate.rows > 0:
            selectivity = min(selectivity, 1.0 / leaf.estimate.rows)
    return selectivity


def _busy_everywhere_floor(members: Sequence[Column], leaves: Sequence[Leaf],
                           leaf_of: dict[Column, int], found_empty: bool) -> float | None:
    """A lower bound on the selectivity of a class of foreign keys meeting at a unique key
    (``b.UserId = u.Id = p.OwnerUserId``), from its pairs with the key.

    The class holds ``sum over passing keys k of b(k) x p(k)`` tuples. Each pair with the key
    (``b ⋈ u``: ``sum b(k)``; ``p ⋈ u``: ``sum p(k)``) is estimated well on its own. By
    Chebyshev's sum inequality, when the foreign keys' counts per key are similarly ordered
    (a user busy in badges is busy in posts: activity is one trait), the sum of products is
    at least the product of the sums over the number of keys, ``(sum b)(sum p) / |keys|``
    (the selectivities of the pairs multiply):
    the tuples if every passing key were equally busy. The distributions and samples
    matched at once can miss that the few keys passing a filter on the key's table are
    the busy ones (users with many up-votes hold many badges and posts; the second STATS
    workload was 6x under on such sets). None unless one member is a unique key of its leaf
    and every member has a leaf of its own.

    Where the samples found the class empty (``found_empty``), that is evidence against the
    bound only if the bound expects sampled tuples: it stands where it expects fewer than
    ``FLOOR_SAMPLED`` (no sampled tuple then has a chance of 5 % or more), and is refused
    otherwise (excerpt posts are never linked, whatever the pairs say). Pairs of members
    that never meet in their samples still cap the set (``_empty_pairs``)."""
    by_leaf = {leaf_of[c]: c for c in members}
    if len(by_leaf) != len(members):
        return None
    key = next((c for c in members if c in leaves[leaf_of[c]].single_keys), None)
    if key is None:
        return None
    keys = leaves[leaf_of[key]].estimate.rows
    if keys < 1.0:
        return None
    floor = 1.0
    for other in members:
        if other is key:
            continue
        pair = (key, other)

        def measure(found: list[str], p: tuple[Column, Column] = pair) -> float:
            return _class_selectivity(p, leaves, leaf_of, True, found)

        # the pair's selectivity, as a two-leaf set of the same leaves measures it
        floor *= _remembered(("class", pair, True), pair, leaves, leaf_of, measure, [])
    # With m - 1 foreign keys the bound is (prod sum_i) / keys^(m-2) tuples; over the class's
    # rows (keys x prod rows_i) that is the product of the pairs' selectivities, each
    # sum_i / (keys x rows_i).
    # An upper bound is a fact where this is an assumption: the other members' samples may
    # show that they never meet (tags and post links never share a post), whatever the key.
    bound = _bound_without_key(members, leaves, leaf_of)
    if math.isfinite(bound):
        rows = 1.0
        for c in members:
            rows *= leaves[leaf_of[c]].estimate.rows
        floor = min(floor, bound / rows) if rows > 0 else floor
    if found_empty:
        expected = floor
        for c in members:
            leaf = leaves[leaf_of[c]].estimate
            origin = leaf.origins.get(c)
            if origin is None or origin.sample is None:
                return None
            sample = origin.view.sample
            expected *= leaf.rows * min(sample.size / max(sample.population, 1.0), 1.0)
        if expected >= FLOOR_SAMPLED:
            return None
    return floor


FLOOR_SAMPLED = 3.0   # Poisson: no sampled tuple where 3 are expected has a chance of 5 %
FLOOR_NOTE = "a join class of foreign keys meeting at a key: at least as if the passing keys were equally busy"


def _bound_without_key(members: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int],
                       notes: list[str] | None = None) -> float:
    """An upper bound on a class's matching tuples from its members other than a unique key:
    the key holds each value at most once, so the class never has more tuples than the others
    alone. The others are checked on their samples, which meet more often than with the key's
    sample among them (tags and post links that never share a post, whatever posts pass).
    Infinite when there is no such bound."""
    if len(members) < 3:
        return math.inf
    if sum(1 for c in members if leaves[leaf_of[c]].estimate.sample is None) >= 2:
        # every key would leave a member without a sample among the others, which
        # ``_sample_members`` refuses: no bound (a clique without samples asks thousands of times)
        return math.inf
    for key in members:
        if key not in leaves[leaf_of[key]].single_keys:
            continue
        others = [c for c in members if c is not key]
        if _sample_members(others, leaves, leaf_of) is None:
            continue   # ``_sampled`` could not tell: do not match the distributions for nothing
        tuples = matching_tuples([leaves[leaf_of[c]].estimate.column(c) for c in others])
        found: list[str] = []
        corrected = _sampled(others, leaves, leaf_of, tuples, found)
        if corrected is not None and corrected < tuples:
            if notes is not None:
                notes.extend(found)
            return corrected
    return math.inf


def _composite_pairs(classes: Sequence[tuple[Column, ...]], leaves: Sequence[Leaf],
                     leaf_of: dict[Column, int]) -> list[tuple[int, int, list[int]]]:
    """Pairs of leaves joined on two or more classes whose columns form a known column group
    on either side: (leaf i, leaf j, the classes)."""
    if not any(len(columns) >= 2 for leaf in leaves for columns in leaf.estimate.groups):
        return []   # no leaf knows a column group (each pair found names two or more columns)
    shared: dict[tuple[int, int], list[int]] = {}
    for k, members in enumerate(classes):
        present = sorted({leaf_of[c] for c in members})
        for x in range(len(present)):
            for y in range(x + 1, len(present)):
                shared.setdefault((present[x], present[y]), []).append(k)
    found = []
    for (i, j), ks in sorted(shared.items()):
        if len(ks) < 2:
            continue
        on_i = frozenset(_member_in(classes[k], i, leaf_of) for k in ks)
        on_j = frozenset(_member_in(classes[k], j, leaf_of) for k in ks)
        if on_i in leaves[i].estimate.groups or on_j in leaves[j].estimate.groups:
            found.append((i, j, ks))
    return found


def _pair_of(grouped: Sequence[tuple[int, int, list[int]]], ks: list[int]) -> tuple[int, int]:
    """The two leaves of the composite key whose classes are ``ks``."""
    return next((i, j) for i, j, found in grouped if found is ks)


def _member_in(members: Sequence[Column], leaf: int, leaf_of: dict[Column, int]) -> Column:
    return next(c for c in members if leaf_of[c] == leaf)


def _group_correction(i: int, j: int, classes: Sequence[Sequence[Column]], leaves: Sequence[Leaf],
                      leaf_of: dict[Column, int]) -> float:
    """Replace the independent product of two leaves' single-column matches on a composite key
    by one over the larger domain of the column group."""
    left, right = leaves[i].estimate, leaves[j].estimate
    if left.rows <= 0 or right.rows <= 0:
        return 1.0
    pairs = [(_member_in(c, i, leaf_of), _member_in(c, j, leaf_of)) for c in classes]
    product = 1.0
    non_null = 1.0
    for a, b in pairs:
        product *= matching_tuples([left.column(a), right.column(b)]) / (left.rows * right.rows)
        non_null *= (1.0 - left.column(a).null_fraction) * (1.0 - right.column(b).null_fraction)
    left_group = left.groups.get(frozenset(a for a, _ in pairs)) or 0.0
    right_group = right.groups.get(frozenset(b for _, b in pairs)) or 0.0
    if product <= 0:
        return 1.0
    return (non_null / max(left_group, right_group, 1.0)) / product


# -- sample correction ------------------------------------------------------------------------------


def _sample_is_current(leaf: RelEstimate, origin: Origin) -> bool:
    """Whether the column's sample view has seen everything that shaped its leaf: the leaf is
    a scan, filtered or projected, whose own sample view it is. A leaf that is an outer or
    semi-join, an aggregate, or a filter the sample could not evaluate has none, and the
    sample's rows would misstate it."""
    view = origin.sample
    return view is not None and leaf.sample is not None and leaf.sample.sample is view.sample \
        and leaf.sample.mask is view.mask


def _counted(members: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int]) -> float | None:
    """The class's matching tuples counted exactly, when every member's leaf holds its whole
    table as its sample and the sample has seen every filter of the leaf (its view is the
    leaf's own); None otherwise."""
    origins = []
    for c in members:
        leaf = leaves[leaf_of[c]].estimate
        origin = leaf.origins.get(c)
        if origin is None or origin.name is None or not _sample_is_current(leaf, origin) \
                or not origin.view.sample.is_whole_table:
            return None
        origins.append(origin)
    arrays = []
    for origin in origins:
        found = origin.view.sample.column(origin.name)  # type: ignore[arg-type]
        if found is None:
            return None
        arrays.append(found)
    if len({values.dtype for values, _ in arrays}) != 1 or not _shared_pairs(origins)[1]:
        return None
    return _class_index(origins, arrays).passing([o.view.mask for o in origins])


def _sample_members(members: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int]) \
        -> tuple[list[tuple[Column, Origin]], list[tuple[np.ndarray, np.ndarray]]] | None:
    """``_members_sampled``, kept for the same members over the same leaf estimates: a class is
    asked for its samples by ``_from_base``, ``_sampled``, ``_bound_without_key`` and each
    leaf's ``_leaf_correlation`` in turn (the lists returned are read, never changed). A
    member whose leaf has no sample at all answers None at once, as ``_members_sampled``
    would, without the cache (a memo of leaves without samples asks thousands of times)."""
    for c in members:
        if leaves[leaf_of[c]].estimate.sample is None:
            return None
    members = tuple(members)
    return _kept(("sample members", members), members, leaves, leaf_of,
                 lambda: _members_sampled(members, leaves, leaf_of))


def _members_sampled(members: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int]) \
        -> tuple[list[tuple[Column, Origin]], list[tuple[np.ndarray, np.ndarray]]] | None:
    """The members whose samples are counted, with their sampled values; None when one has no
    sample. A unique key of an unfiltered leaf is left out when two other members remain: each
    of its values occurs once, and sampling it only adds noise."""
    chosen: list[tuple[Column, Origin]] = []
    for c in members:
        leaf = leaves[leaf_of[c]].estimate
        origin = leaf.origins.get(c)
        if origin is None or origin.name is None or origin.base_rows <= 0 or not _sample_is_current(leaf, origin):
            return None
        chosen.append((c, origin))
    if len(chosen) > 2:
        dropped = [(c, o) for c, o in chosen
                   if o.sample is not None and o.sample.mask is None and frozenset([c]) in leaves[leaf_of[c]].unique]
        if dropped:
            chosen = [x for x in chosen if x is not dropped[0]]
    arrays = []
    for _, origin in chosen:
        assert origin.sample is not None and origin.name is not None
        values = origin.sample.sample.column(origin.name)
        if values is None:
            return None
        arrays.append(values)
    if len({values.dtype for values, _ in arrays}) != 1:
        return None
    if not _shared_pairs([o for _, o in chosen])[1]:
        return None    # one table's sample three times or more: its counts are not independent
    return chosen, arrays


def _from_base(members: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int],
               notes: list[str] | None = None) -> float | None:
    """The class's matching tuples from the members' unfiltered distributions, scaled by what
    the filters keep as the samples measure it: per leaf, the share of sampled tuples passing
    its filters alone where that departs from the share of its sampled rows passing them by
    more than two standard deviations (filters correlated with the key), else the latter
    (independence); and where all filters' sampled tuples depart from the product of those
    shares, their share of all sampled tuples. None when some member lacks a sample or
    unfiltered statistics, or when fewer than ``MIN_SAMPLE_TUPLES`` sampled tuples match
    without filters (the sample cannot tell). It reads no filtered distribution, which keeps
    it cheap."""
    found = _sample_members(members, leaves, leaf_of)   # (first: None at once without samples)
    if found is None:
        return None
    bases = []
    for c in members:
        origin = leaves[leaf_of[c]].estimate.origins.get(c)
        if origin is None or origin.base is None:
            return None
        bases.append(origin)
    chosen, arrays = found
    keyed = _against_whole_key(chosen, arrays, leaves, leaf_of)
    if keyed is not None:
        return _key_tuples(chosen, leaves, leaf_of) * keyed
    weighted = _over_filtered_key(chosen, arrays, leaves, leaf_of)
    if weighted is not None:
        return weighted
    index = _class_index([o for _, o in chosen], arrays)
    if index.all_tuples < MIN_SAMPLE_TUPLES:
        return None
    masks = [o.view.mask for _, o in chosen]
    passing = index.passing(masks)
    # Each leaf's filters first, alone: the sampled tuples passing them against the leaf's
    # share of passing rows (excerpt posts all score 0: among the 65 sampled tuples that
    # match a tag, none passes ``Score >= 1`` where 40 % of all posts do). One leaf's
    # evidence is far stronger than all filters' joint count, which expects little anyway.
    share = 1.0
    masked = sum(m is not None for m in masks)    # with one filtered leaf, its test is the joint count
    strongest: tuple[float, float, float] | None = None    # (z, independent share, measured share)
    for position, ((values, _), mask) in enumerate(zip(arrays, masks)):
        if mask is None or not len(values):
            continue
        # A leaf none of whose sampled rows passes its filters keeps half a sampled row (or
        # its own estimate, if smaller), not 0: the one user with 5,000 up-votes, who owns
        # 211 posts, is not in the sample. The class stays near empty (``EMPTY_NOTE``).
        column, origin = chosen[position]
        floor = min(0.5, leaves[leaf_of[column]].estimate.rows / max(origin.base_rows, 1.0) * len(values))
        independent = max(float(mask.sum()), floor) / len(values)
        share *= independent
        alone = passing if masked == 1 else \
            index.passing([m if k == position else None for k, m in enumerate(masks)])
        expected_alone = index.all_tuples * independent
        z = abs(alone - expected_alone) / math.sqrt(max(expected_alone, 1.0))
        if z > 2.0 and (strongest is None or z > strongest[0]):
            strongest = (z, independent, alone / index.all_tuples)
    if strongest is not None:
        # One leaf only, the one departing most: the sampled tuples are weighted by the
        # fan-out (busy users dominate them), and shares measured on them for several leaves
        # would multiply that bias; the other leaves keep their rows' shares.
        _, independent, measured = strongest
        share *= max(measured, 0.5 / index.all_tuples) / independent
    expected = index.all_tuples * share
    base = _base_tuples(bases)
    if sum(frozenset([c]) not in leaves[leaf_of[c]].unique for c, _ in chosen) >= 2:
        # Two foreign keys (posts' owners, badges' holders): the unfiltered distributions
        # match them as if independent across tables, missing that the same users are busy
        # in both (about half the truth on STATS); the samples' count, scaled by their
        # fractions, is unbiased, and with the busy values counted apart less noisy.
        fraction = 1.0
        for _, origin in chosen:
            sample = origin.view.sample
            fraction *= min(sample.size / max(sample.population, 1.0), 1.0)
        if fraction > 0:
            stratified = _foreign_keys_tuples(chosen, arrays) if len(chosen) == 2 else None
            base = stratified if stratified is not None else index.all_tuples / fraction
    if abs(passing - expected) <= 2.0 * math.sqrt(max(expected, 1.0)):
        if passing < 0.5 and notes is not None:
            notes.append(EMPTY_NOTE)
        return base * share
    if passing < 0.5 and notes is not None:
        notes.append(EMPTY_NOTE)
    return base * max(passing, 0.5) / index.all_tuples


def _foreign_keys_tuples(chosen: Sequence[tuple[Column, Origin]],
                         arrays: Sequence[tuple[np.ndarray, np.ndarray]]) -> float | None:
    """Matching tuples of two unfiltered foreign keys to one key (badges' holders and posts'
    owners), in two strata. The busy values (either column's most common values) pair their
    rows: known from the distributions where the value is most common there, else counted
    on that column's sample and scaled by its fraction, so one sample's noise, not two
    samples', reaches the users who dominate the sum. The other values: the pairs of sampled
    rows, scaled by both fractions. None where a column has no distribution or sample."""
    (_, a), (_, b) = chosen
    if a.base is None or b.base is None:
        return None
    # A function of the two columns' statistics and samples alone (no filter reaches it):
    # kept for them, since each set joining the two tables asks again and the sum runs over
    # every sampled value (about 0.3 ms for STATS' posts and badges); ``forget_plans`` keeps
    # it, as it keeps the sample indexes.
    # Held by weak references, as ``_KEPT`` holds its estimates: a statistics object and its
    # samples are not kept alive by the cache.
    parts = (a.base, b.base, a.view.sample, b.view.sample)
    key = (tuple([id(p) for p in parts]), a.name, b.name)
    found = _FOREIGN_KEYS.get(key)
    if found is not None and _alive(found[0], parts):
        return found[1]
    value = _foreign_keys_counted(a, b, arrays)
    if len(_FOREIGN_KEYS) > 20_000:
        _FOREIGN_KEYS.clear()
    _FOREIGN_KEYS[key] = (tuple(weakref.ref(p) for p in parts), value)
    return value


_FOREIGN_KEYS: dict[tuple, tuple[tuple[weakref.ref, ...], float | None]] = {}


def forget_plans() -> None:
    """Drop what was kept for the plans met so far: factors and values of classes and leaves
    (keyed by leaf estimates, which for an unfiltered scan live as long as the statistics) and
    the classes of conjuncts. What is derived from the statistics alone (sample indexes, base
    columns' matches, two foreign keys' stratified count ``_FOREIGN_KEYS``) stays: a fresh
    query with the same statistics reads it too."""
    for kept in (_REMEMBERED, _KEPT, _CLASSES):
        kept.clear()


def _foreign_keys_counted(a: Origin, b: Origin, arrays: Sequence[tuple[np.ndarray, np.ndarray]]) -> float | None:
    fractions = []
    counted = []
    for origin, (values, nulls) in zip((a, b), arrays):
        sample = origin.view.sample
        fractions.append(min(sample.size / max(sample.population, 1.0), 1.0))
        counted.append(_value_counts(origin, values, nulls))
    if min(fractions) <= 0:
        return None
    common = [{value: rows for value, rows in origin.base.live.mcv} for origin in (a, b)]  # type: ignore[union-attr]
    busy = set(common[0]) | set(common[1])
    total = 0.0
    for value in busy:
        product = 1.0
        for side in (0, 1):
            rows = common[side].get(value)
            product *= rows if rows is not None else counted[side].get(value, 0) / fractions[side]
        total += product
    smaller, larger = sorted(counted, key=len)
    pairs = sum(n * larger.get(v, 0) for v, n in smaller.items() if v not in busy)
    return total + pairs / (fractions[0] * fractions[1])


_COUNTS: dict[tuple[int, str], tuple[object, dict]] = {}


def _value_counts(origin: Origin, values: np.ndarray, nulls: np.ndarray) -> dict:
    """Per non-NULL value of a column's sample, its sampled rows (once per sample and column)."""
    sample = origin.view.sample
    key = (id(sample), origin.name or "")
    found = _COUNTS.get(key)
    if found is not None and found[0] is sample:
        return found[1]
    distinct, counts = np.unique(values[~nulls], return_counts=True)
    value = dict(zip(distinct.tolist(), counts.tolist()))
    if len(_COUNTS) > 1_000:
        _COUNTS.clear()
    _COUNTS[key] = (sample, value)
    return value


def _against_whole_key(chosen: Sequence[tuple[Column, Origin]], arrays: Sequence[tuple[np.ndarray, np.ndarray]],
                       leaves: Sequence[Leaf], leaf_of: dict[Column, int]) -> float | None:
    """A foreign key matched with the unique key of an unfiltered table (posts' owners with
    all users): each row of the filtered side matches at most once, and as often as without
    its filters, so its filters keep the share of its sampled rows (with a value) they pass.
    Counted on the sampled tuples instead, that share would rest on the rows of the key's
    sample only, clustered by the busy users that own most of them (about 0.86 of the truth
    on STATS' posts and users). None for other classes."""
    if len(chosen) != 2:
        return None
    for position, (column, origin) in enumerate(chosen):
        other_column, other = chosen[1 - position]
        if other.view.mask is None or origin.view.mask is not None \
                or frozenset([column]) not in leaves[leaf_of[column]].unique \
                or frozenset([other_column]) in leaves[leaf_of[other_column]].unique:
            continue
        _, nulls = arrays[1 - position]
        present = ~nulls
        rows = int(present.sum())
        if rows < MIN_SAMPLE_TUPLES:
            return None
        passing = int(other.view.mask.sum())
        base = other.base
        leaf_rows = leaves[leaf_of[other_column]].estimate.rows
        if passing >= MIN_SAMPLE_TUPLES and base is not None and base.non_null > 0 and other.base_rows > 0:
            # The leaf's own estimate of its passing rows (histograms where they answer
            # exactly), times the share of them with a value as the sample sees it: the
            # sample then only measures the NULLs, not the filter again.
            return leaf_rows * float((other.view.mask & present).sum()) / passing / base.non_null
        return float((other.view.mask & present).sum()) / rows
    return None


def _over_filtered_key(chosen: Sequence[tuple[Column, Origin]], arrays: Sequence[tuple[np.ndarray, np.ndarray]],
                       leaves: Sequence[Leaf], leaf_of: dict[Column, int]) -> float | None:
    """A foreign key matched with the unique key of a filtered table (posts' editors with the
    users created in 2013), in two strata by the foreign key's most common values.

    * **Busy keys** (the foreign key's most common values): their rows are known from the
      unfiltered distribution. Each the key's sample holds counts them if it passes the
      key's filters; the others pass as those do, weighted by their rows. A few busy editors
      hold a quarter of all edits; counted on pairs of sampled rows instead, one of them
      missing from (or present in) the key's sample moved every estimate through it the same
      way (most STATS posts-users joins came out about 0.8 of the truth).
    * **The other keys**: their unfiltered matching tuples times the share of their sampled
      pairs (a foreign-key sampled row, the key's sampled row of its value) whose two rows
      pass their filters. The pairs see which keys are referenced at all (excerpt posts are
      never answers); as a ratio, filters that keep nearly everything keep the exact total.

    Filters on the foreign-key side scale the busy stratum by the share of its sampled rows
    (with a value) they pass. None for other classes, where the samples meet fewer than
    ``MIN_SAMPLE_TUPLES`` times, or where no sampled pair of the other keys passes (near
    empty: the general count, with its floor and note, decides). The other keys' pairs give
    their share only where they depart from the filters' shares as if independent by more
    than two standard deviations (Poisson), upwards only on ``defaults.MIN_SAMPLE_HITS`` pairs
    or more; else those shares stand: a few dozen sampled pairs of TPC-H's orders and
    lineitems must not override them (Q08's two years of orders came out 0.69 of the truth),
    but do show that Q03's lineitems shipped after the date come from orders placed before it
    only rarely."""
    if len(chosen) != 2:
        return None
    for position, (column, origin) in enumerate(chosen):
        other_column, other = chosen[1 - position]
        if origin.view.mask is None or other.base is None \
                or frozenset([column]) not in leaves[leaf_of[column]].unique \
                or frozenset([other_column]) in leaves[leaf_of[other_column]].unique:
            continue
        (values, nulls), (other_values, other_nulls) = arrays[position], arrays[1 - position]
        sample, other_sample = origin.view.sample, other.view.sample
        fraction = min(sample.size / max(sample.population, 1.0), 1.0)
        other_fraction = min(other_sample.size / max(other_sample.population, 1.0), 1.0)
        pairing = _key_pairs(origin, values, nulls, other, other_values, other_nulls)
        present, present_rows = pairing.present, pairing.present_rows
        if len(values) < MIN_SAMPLE_TUPLES or present_rows < MIN_SAMPLE_TUPLES \
                or fraction <= 0 or other_fraction <= 0:
            return None
        common = pairing.common
        rows_hit, met, light_pairs, held = pairing.rows_hit, pairing.met, pairing.light, pairing.held
        mask = origin.view.mask & pairing.valid
        other_mask = present if other.view.mask is None else other.view.mask & present
        key_passed = met & mask[rows_hit]
        passed = key_passed & other_mask
        # Busy keys the key's sample lacks pass as the busy keys it holds do, weighted by
        # their rows (a stratum's sample stands for the stratum: high-reputation users hold
        # the most badges), with the sampled pairs' keys as one more busy key (referenced
        # keys are not typical keys: edits come from old users, links go to questions).
        pairs = pairing.pairs
        if pairs < MIN_SAMPLE_TUPLES:
            return None
        prior = float(key_passed.sum()) / pairs
        held_rows = pairing.held_rows
        held_passing = sum(common[v] for v, row in held.items() if mask[row])
        busy_rows = pairing.busy_rows
        one_key = busy_rows / max(len(common), 1)
        unsampled_share = (held_passing + prior * one_key) / (held_rows + one_key) if common else prior
        passing_rows = present_rows if other.view.mask is None else float(other_mask.sum())
        busy = (held_passing + (busy_rows - held_rows) * unsampled_share) \
            * float(passing_rows) / present_rows
        hits = int((passed & light_pairs).sum())
        light = pairing.light_pairs
        expected = light * float(mask.sum()) / max(pairing.valid_rows, 1) \
            * float(passing_rows) / present_rows
        if hits == 0:
            return None
        # The other keys' sampled pairs override independent filters where they depart from
        # them by more than two standard deviations (Poisson), and, upwards, rest on at least
        # ``MIN_SAMPLE_HITS`` pairs (as ``_sampled``).
        measured = abs(hits - expected) > 2.0 * math.sqrt(max(expected, 1.0)) \
            and (hits < expected or hits >= defaults.MIN_SAMPLE_HITS)
        light_rows = max(_key_tuples(chosen, leaves, leaf_of) - busy_rows, 0.0)
        return busy + light_rows * (hits if measured else expected) / max(light, 1)
    return None


def _key_tuples(chosen: Sequence[tuple[Column, Origin]], leaves: Sequence[Leaf], leaf_of: dict[Column, int]) -> float:
    """Matching tuples of a foreign key and a unique key, both unfiltered: the foreign key's
    non-NULL rows where it is declared to reference that key (each such row has its value
    there; the histograms, matched bucket by bucket, lose a little at the edges and
    under-estimated every whole-key join), else the two distributions matched."""
    (a, origin_a), (b, origin_b) = chosen
    for (column, origin), key_origin in (((a, origin_a), origin_b), ((b, origin_b), origin_a)):
        table = getattr(key_origin.scan, "table", None)
        if origin.base is None or table is None or key_origin.name is None:
            continue
        for ref in leaves[leaf_of[column]].foreign:
            if ref.columns == (column,) and ref.table == table \
                    and tuple(n.lower() for n in ref.referenced) == (key_origin.name.lower(),):
                return origin.base.non_null
    return _base_tuples([origin_a, origin_b])


class _KeyPairs(NamedTuple):
    """What ``_key_pairs`` finds of a key's and a foreign key's samples, whatever the filters,
    with the counts over them that each filter would otherwise take again (read-only)."""

    rows_hit: np.ndarray      # per foreign-key sampled row, the key's sampled row of its value
    met: np.ndarray           # where that row holds the value (and the foreign key is not NULL)
    light: np.ndarray         # met, with a value the foreign key does not list as most common
    held: dict                # the key's sampled row of each most common value it holds
    common: dict              # the foreign key's most common values and their rows
    present: np.ndarray       # the foreign key's sampled rows with a value
    present_rows: int
    valid: np.ndarray         # the key's sampled rows with a value
    valid_rows: int
    pairs: int                # met.sum()
    light_pairs: int          # light.sum()
    held_rows: float          # the rows of the most common values the key's sample holds
    busy_rows: float          # the rows of all the foreign key's most common values


_PAIRS: dict[tuple[int, str, int, str], tuple[object, object, object, _KeyPairs]] = {}


def _key_pairs(key: Origin, values: np.ndarray, nulls: np.ndarray, foreign: Origin, foreign_values: np.ndarray,
               foreign_nulls: np.ndarray) -> _KeyPairs:
    """The sampled pairs of a key and a foreign key, whatever the filters: per foreign-key
    sampled row, the key's sampled row of its value (``rows_hit``, meaningful where ``met``),
    which pairs hold a value the foreign key does not list as most common (``light``), and
    the key's sampled row of each most common value it holds (``held``). Built once per pair
    of samples, with the counts over them (``_KeyPairs``): each filter then only masks them."""
    assert key.sample is not None and foreign.sample is not None and foreign.base is not None
    sample, other = key.sample.sample, foreign.sample.sample
    cache_key = (id(sample), key.name or "", id(other), foreign.name or "")
    found = _PAIRS.get(cache_key)
    if found is not None and found[0] is sample and found[1] is other and found[2] is foreign.base:
        return found[3]
    mcv = foreign.base.live.mcv
    common = {value for value, _ in mcv}
    valid = np.flatnonzero(~nulls)
    order = valid[np.argsort(values[valid], kind="stable")]
    if len(order):
        sorted_values = values[order]
        where = np.clip(np.searchsorted(sorted_values, foreign_values), 0, len(order) - 1)
        rows_hit = order[where]
        met = (sorted_values[where] == foreign_values) & ~foreign_nulls
    else:
        rows_hit = np.zeros(len(foreign_values), dtype=np.int64)
        met = np.zeros(len(foreign_values), dtype=bool)
    listed = values.tolist()
    heavy = np.zeros(len(values), dtype=bool)
    held = {}
    for row in valid.tolist():
        if listed[row] in common:
            heavy[row] = True
            held[listed[row]] = row
    light = met & ~heavy[rows_hit]
    rows = {value: r for value, r in mcv}
    present, has_value = ~foreign_nulls, ~nulls
    for array in (rows_hit, met, light, present, has_value):
        array.flags.writeable = False
    value = _KeyPairs(rows_hit, met, light, held, rows, present, int(present.sum()), has_value,
                      int(has_value.sum()), int(met.sum()), int(light.sum()),
                      sum(rows[v] for v in held), sum(rows.values()))
    if len(_PAIRS) > 1_000:
        _PAIRS.clear()
    _PAIRS[cache_key] = (sample, other, foreign.base, value)
    return value


MIN_SAMPLE_TUPLES = 30
EMPTY_NOTE = ("a join class the row samples find empty: estimated as half a sampled tuple, "
              "not multiplied by the joins above")


def _sampled(members: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int],
             tuples: float, notes: list[str] | None = None) -> float | None:
    """The class's matching tuples as the leaves' samples count them, where they contradict
    ``tuples`` (the distributions' count); None where the samples cannot tell.

    Samples of different tables are drawn independently, so the product of per-value counts
    among sampled rows passing the filters, scaled by each sample's fraction of its table, is
    an unbiased count of matching tuples. It replaces the distributions' count when the two
    differ by more than two standard deviations (Poisson), and, where the sample finds more,
    when that rests on at least ``defaults.MIN_SAMPLE_HITS`` sampled tuples: a class whose
    unfiltered samples match too rarely for ``_from_base`` but whose filtered distributions
    promise many matches the sample does not find (excerpt posts are never linked) is near
    empty."""
    found = _sample_members(members, leaves, leaf_of)
    if found is None:
        return None
    chosen, arrays = found
    index = _class_index([o for _, o in chosen], arrays)
    passing = index.passing([o.view.mask for _, o in chosen])
    fraction = 1.0
    for _, origin in chosen:
        sample = origin.view.sample
        fraction *= min(sample.size / max(sample.population, 1.0), 1.0)
    if fraction <= 0:
        return None
    kept = tuples if len(chosen) == len(members) else \
        matching_tuples([leaves[leaf_of[c]].estimate.column(c) for c, _ in chosen])
    expected = kept * fraction
    if abs(passing - expected) <= 2.0 * math.sqrt(max(expected, 1.0)):
        return None
    if passing > expected and passing < defaults.MIN_SAMPLE_HITS:
        return None    # a few sampled tuples more than expected: too few to scale up from
    if expected <= 0 or tuples <= 0:
        return passing / fraction
    if passing < 0.5 and notes is not None:
        notes.append(EMPTY_NOTE)
    return tuples * max(passing, 0.5) / expected


def _extreme_of_same_rows(k: int, classes: Sequence[tuple[Column, ...]], selectivities: Sequence[float],
                          leaves: Sequence[Leaf], leaf_of: dict[Column, int]) -> float | None:
    """The selectivity of ``x = min(x)`` (or max) where the aggregate's leaf is also joined to
    ``x``'s leaf through other classes (its grouping key, decorrelated): each group keeps the
    one row (ties aside) of the ``f`` rows it pairs with that holds the extreme, so the class
    keeps one in ``f`` (TPC-H Q2: the cheapest supplier of each part). The two distributions
    matched as independent would find almost no equal values. None when the class is not
    of that shape."""
    members = classes[k]
    for x, m in _extreme_orientations(members, leaves, leaf_of):
        own, other = leaf_of[x], leaf_of[m]
        linking = [j for j, c in enumerate(classes) if j != k and {own, other} <= {leaf_of[y] for y in c}]
        if not linking:
            continue
        per_group = leaves[own].estimate.rows
        for j in linking:
            per_group *= selectivities[j]
        return 1.0 / max(per_group, 1.0)
    return None


def _extreme_orientations(members: Sequence[Column], leaves: Sequence[Leaf],
                          leaf_of: dict[Column, int]) -> list[tuple[Column, Column]]:
    """The (column, its extreme) orders of a class of two in which the second member is an
    extreme of the first's column of the same table (the shape ``_extreme_of_same_rows``
    looks for before it reads the set's other classes)."""
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


def _extreme_candidate(members: Sequence[Column], leaves: Sequence[Leaf], leaf_of: dict[Column, int]) -> bool:
    """Whether ``_extreme_of_same_rows`` may find the class an extreme joined back."""
    return bool(_extreme_orientations(members, leaves, leaf_of))


def _leaf_correlation(index: int, classes: Sequence[tuple[Column, ...]], leaves: Sequence[Leaf],
                      leaf_of: dict[Column, int]) -> float:
    """How far a leaf joined through two or more classes departs from independence between
    them, measured on the samples: 1 where they cannot tell.

    Each class is estimated on its own, as if the leaf's rows that match in one class were
    spread over the others' columns like all its rows. Tag excerpts are posts that nobody links
    and no badge holder owns: matched on ``posts.Id`` and on ``posts.OwnerUserId`` at once, no
    row is left. The leaf's sampled rows passing its filters each get, per class, the number of
    sampled tuples of the class's other members holding its value; the sum over rows of their
    product (``found``) against the product of their sums over ``n^(k-1)`` (``expected``, the
    same under independence) corrects the estimate where the two differ by more than two
    standard deviations, and, upwards, when at least ``defaults.MIN_SAMPLE_HITS`` tuples say so.
    """
    leaf = leaves[index].estimate
    involved = []
    for members in classes:
        own = [c for c in members if leaf_of[c] == index]
        if len(own) == 1 and len(members) > 1:
            involved.append((own[0], members))
    if len(involved) < 2 or leaf.sample is None:
        return 1.0
    mask = leaf.sample.mask
    passing = leaf.sample.passing
    if passing <= 0:
        return 1.0
    weights = []
    for column, members in involved:
        found = _sample_members(members, leaves, leaf_of)
        if found is None:
            return 1.0
        chosen, arrays = found
        position = next((k for k, (c, _) in enumerate(chosen) if c == column), None)
        if position is None or len(chosen) < 2:
            return 1.0
        class_index = _class_index([o for _, o in chosen], arrays)
        if not class_index.size or class_index.shared:
            return 1.0
        weight = class_index.weights(position, [o.view.mask for _, o in chosen])
        if mask is not None:
            weight = weight * mask
        weights.append(weight)
    product = weights[0]
    for weight in weights[1:]:
        product = product * weight
    found_tuples = float(product.sum())
    expected = 1.0
    for weight in weights:
        expected *= float(weight.sum())
    expected /= float(passing) ** (len(weights) - 1)
    if abs(found_tuples - expected) <= 2.0 * math.sqrt(max(expected, 1.0)):
        # Too few sampled tuples to tell; fewer than expected still leans the estimate down,
        # as a prior of ``PRIOR_TUPLES`` tuples at independence would (none of the 3.5
        # expected linked posts among the busy users' low-score posts: 0.36, not 1).
        return (found_tuples + PRIOR_TUPLES) / (expected + PRIOR_TUPLES)
    if found_tuples > expected and found_tuples < defaults.MIN_SAMPLE_HITS:
        return 1.0
    if expected <= 0:
        return 1.0
    return max(found_tuples, 0.5) / expected


# Sampled tuples that the independence assumption is worth where the samples find fewer.
PRIOR_TUPLES = 2.0


def _shared_pairs(origins: Sequence[Origin]) -> tuple[list[tuple[int, int, float]], bool]:
    """Members read from one table's sample (a self-join, ``p1.OwnerUserId = u.Id =
    p2.LastEditorUserId``): pairs of their positions with the sample's fraction of its table,
    and whether the class can be counted on the samples (no sample read three times or more)."""
    seen: dict[int, list[int]] = {}
    for position, origin in enumerate(origins):
        seen.setdefault(id(origin.view.sample), []).append(position)
    pairs = []
    for positions in seen.values():
        if len(positions) > 2:
            return [], False
        if len(positions) == 2:
            sample = origins[positions[0]].view.sample
            pairs.append((positions[0], positions[1], min(sample.size / max(sample.population, 1.0), 1.0)))
    return pairs, True


class _ClassIndex:
    """Sampled values of k columns mapped to one set of keys: then any masks (the sample rows
    passing each leaf's filters) count the matching tuples in O(n).

    Two members may read one table's sample (a self-join): a pair of distinct sampled rows is
    then in the sample with probability ``f^2``, like a pair from two independent samples, but
    a row paired with itself (its two columns equal) with probability ``f``. ``passing`` counts
    those diagonal tuples ``f`` times (``shared``: the pairs of members and ``f``), so that
    dividing by the product of the members' fractions stays unbiased."""

    def __init__(self, arrays: Sequence[tuple[np.ndarray, np.ndarray]],
                 shared: Sequence[tuple[int, int, float]] = ()):
        self.shared = tuple(shared)
        valid = [values[~nulls] for values, nulls in arrays]
        keys = np.unique(np.concatenate(valid)) if valid else np.zeros(0)
        self.size = len(keys)
        self.groups: list[np.ndarray] = []
        self._counts: dict[tuple[int, int], tuple[np.ndarray | None, np.ndarray]] = {}
        self._safe: list[tuple[np.ndarray, np.ndarray]] | None = None
        self._plain: dict[int, np.ndarray] = {}    # ``weights`` with no other member filtered
        for values, nulls in arrays:
            group = np.full(len(values), -1, dtype=np.int64)
            if self.size:
                group[~nulls] = np.searchsorted(keys, values[~nulls])
            self.groups.append(group)
        self.all_tuples = self.passing([None] * len(arrays))

    def counts(self, member: int, mask: np.ndarray | None) -> np.ndarray:
        """Per key, the sampled rows of one member passing ``mask``; remembered per mask (the
        sets of one tree, or of one memo, meet the same leaves again)."""
        key = (member, id(mask))
        found = self._counts.get(key)
        if found is not None and found[0] is mask:
            return found[1]
        group = self.groups[member]
        keep = group >= 0 if mask is None else (group >= 0) & mask
        counts = np.bincount(group[keep], minlength=self.size).astype(np.float64)
        if len(self._counts) > 64:
            self._counts.clear()
        self._counts[key] = (mask, counts)
        return counts

    def passing(self, masks: Sequence[np.ndarray | None]) -> float:
        if not self.size:
            return 0.0
        product = self.counts(0, masks[0])
        for member in range(1, len(masks)):
            product = product * self.counts(member, masks[member])
        total = float(product.sum())
        for a, b, fraction in self.shared:
            if fraction >= 1.0:
                continue
            same = (self.groups[a] >= 0) & (self.groups[a] == self.groups[b])
            for member in (a, b):
                if masks[member] is not None:
                    same = same & masks[member]
            diagonal = np.bincount(self.groups[a][same], minlength=self.size).astype(np.float64)
            for member in range(len(masks)):
                if member not in (a, b):
                    diagonal = diagonal * self.counts(member, masks[member])
            total -= (1.0 - fraction) * float(diagonal.sum())
        return total

    def weights(self, member: int, masks: Sequence[np.ndarray | None]) -> np.ndarray:
        """Per sampled row of ``member``, the matching tuples of the other members (read-only).
        Where no other member is filtered they are the samples' alone: kept on the index,
        which lives as long as the samples (a leaf joined through two classes asks for them
        in every set holding it)."""
        plain = all(masks[other] is None for other in range(len(masks)) if other != member)
        if plain:
            found = self._plain.get(member)
            if found is not None:
                return found
        product = np.ones(self.size)
        for other in range(len(masks)):
            if other != member:
                product = product * self.counts(other, masks[other])
        if self._safe is None:
            self._safe = [(np.maximum(g, 0), (g >= 0).astype(np.float64)) for g in self.groups]
        safe, valid = self._safe[member]
        weights = product[safe] * valid
        if plain:
            weights.flags.writeable = False
            self._plain[member] = weights
        return weights


_CLASS_INDEXES: dict[tuple, tuple[tuple, _ClassIndex]] = {}


def _class_index(origins: Sequence[Origin], arrays: Sequence[tuple[np.ndarray, np.ndarray]]) -> _ClassIndex:
    samples = tuple(o.view.sample for o in origins)
    key = tuple((id(s), o.name) for s, o in zip(samples, origins))
    found = _CLASS_INDEXES.get(key)
    if found is not None and all(a is b for a, b in zip(found[0], samples)):
        return found[1]
    index = _ClassIndex(arrays, _shared_pairs(origins)[0])
    if len(_CLASS_INDEXES) > 1_000:
        _CLASS_INDEXES.clear()
    _CLASS_INDEXES[key] = (samples, index)
    return index


_BASE: dict[tuple[int, ...], tuple[tuple[ColumnEstimate, ...], float]] = {}


def _base_tuples(origins: Sequence[Origin]) -> float:
    """Matching tuples of the unfiltered columns, remembered by their (long-lived) estimates."""
    bases = tuple(o.base for o in origins if o.base is not None)
    key = tuple(id(b) for b in bases)
    found = _BASE.get(key)
    if found is not None and all(a is b for a, b in zip(found[0], bases)):
        return found[1]
    value = matching_tuples(bases)
    if len(_BASE) > 10_000:
        _BASE.clear()
    _BASE[key] = (bases, value)
    return value
