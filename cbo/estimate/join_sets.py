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
  one row per group, or one per group of the rows that pass the same restrictions as the
  aggregate's input did (``cbo.estimate.extremes``).
* **Combinations bounded by rows.** Two leaves joined on several classes (``ss_item_sk =
  sr_item_sk AND ss_customer_sk = sr_customer_sk AND ss_ticket_number = sr_ticket_number``; a
  row and its neighbour by rank sharing every partition column) match on the combination of
  their columns. The classes multiplied as independent assume ``product of distinct values``
  combinations on each side; a leaf holds no more combinations than rows, and past that the
  product underestimates by orders of magnitude (TPC-DS's sales and returns were estimated at
  0 rows where every return finds its sale). The pair's independent denominator is brought
  down to the larger side's ``min(rows, product of distinct values)``, as a composite key's
  domain is matched (``_combination_correction``); pairs whose products fit in their rows
  keep the independent product. PostgreSQL clamps a product of distinct counts to the rows
  the same way when it counts groups (``estimate_num_groups``); DuckDB's join estimator counts
  one total domain per connection between two relation sets and none for a second equality
  between relations already joined (``CardinalityEstimator::GetDenominator``). A floor of one
  row on every set (PostgreSQL's ``clamp_row_est``) is not applied: it would hide such causes
  at 1 row rather than remove them, and estimates below a row stay meaningful (a near-empty
  class, the chance of a NULL under NOT IN).
* **Outer joins as leaves.** A left (or right) join is a leaf: its unmatched rows join the
  others as its matched ones do. Its matched rows, though, are the inner join of its sides on
  its condition, a subset of its rows whatever joins it: the set of those sides as leaves (the
  left join's condition among the conjuncts) is estimated too, and the set is never below it,
  in rows or in any column's values (``_matched_part``, ``at_least_matched``; the left join
  itself is never below its own matched rows, ``EstimationContext._outer_join``). So
  ``(A ⟕ B) ⋈ C`` is never below ``A ⋈ B ⋈ C``, however the leaf estimate of ``A ⟕ B`` and the
  class of all three keys differ. Where nearly every preserved row finds a match (a foreign key
  left-joined to its key), the matched part is the larger, and a conjunct restricting ``A`` or
  ``B`` (or turning the left join inner) moves the estimate as it moves that set, which it
  never raises; the leaf's estimate alone could rise (its per-row rates are ratios, and a ratio
  may grow as rows go).
  PostgreSQL clamps an outer join the same way from its preserved side
  (``calc_joinrel_size_estimate``: never below the outer rows).
* **Keys.** A class member that is a unique key of its leaf matches each tuple of the others at
  most once: the class's selectivity is at most one over that leaf's rows. Two leaves joined on
  several classes whose columns form a known column group (a composite key or foreign key) are
  matched on the group's domain, not as independent single columns.

The samples' counts are ``cbo.estimate.join_samples``; what the sets keep of the leaf
estimates they read (a class met again in another set is not measured again) is
``cbo.estimate.join_memory``.

Every output column in a class carries the class's joint distribution (per value, the product
of the members' rows), scaled to the output rows: after ``posts ⋈ users``, ``users.Id`` carries
the skew of ``posts.LastEditorUserId``. Other columns are their leaf's, scaled.
"""

from __future__ import annotations

import math
from collections import ChainMap
from collections.abc import Iterable, Mapping, Sequence

from cbo.estimate.column import ColumnEstimate
from cbo.estimate.dependence import origin_determines
from cbo.estimate.extremes import Restriction, extreme_candidate, extreme_selectivity, restriction
from cbo.estimate.filters import generic_selectivity
from cbo.estimate.join_memory import _kept, _kept_over, _remembered, _remembered_over
from cbo.estimate.join_samples import (
    EMPTY_NOTE,
    _combination_checked,
    _counted,
    _from_base,
    _leaf_correlation,
    _sample_members,
    _sampled,
)
from cbo.estimate.joins import matched_rows
from cbo.estimate.matching import joint, matching_tuples
from cbo.estimate.plan_facts import PlanFacts, leaf_facts
from cbo.estimate.relation import DerivedColumns, JoinSet, Leaf, Origin, RelEstimate, layered
from cbo.estimate.upper_bound import join_bound
from cbo.ir.expressions import Column, Expr, columns_of, conjuncts
from cbo.ir.operators import Join, Plan, equated_columns


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


def _leaf_positions(leaves: Sequence[Leaf]) -> dict[Column, int]:
    """Each leaf column's position among the set's leaves."""
    leaf_of: dict[Column, int] = {}
    for index, leaf in enumerate(leaves):
        leaf_of.update(dict.fromkeys(leaf.key, index))
    return leaf_of


def _read_by(conjuncts: Sequence[Expr]) -> frozenset[Column]:
    """The columns some of ``conjuncts`` read."""
    return frozenset(c for conjunct in conjuncts for c in columns_of(conjunct))


def of_set(join_set: JoinSet, upper: bool = False) -> RelEstimate:
    """``estimate_join_set``, kept for the same leaf estimates and conjuncts: a memo's groups
    and rules ask for one set in many orders."""
    return _kept_over(("set", join_set.conjuncts, upper), tuple([leaf.estimate for leaf in join_set.leaves]),
                      lambda: estimate_join_set(join_set, upper))


def estimate_join_set(join_set: JoinSet, upper: bool = False) -> RelEstimate:
    """The set's estimate; with ``upper``, its rows are the degree bound of ``upper_bound``
    (the pessimistic mode) rather than the estimate."""
    leaves = join_set.leaves
    leaf_of = _leaf_positions(leaves)
    classes, residual = _classes(leaves, join_set.conjuncts, leaf_of)
    notes: list[str] = []
    rows = 1.0
    for leaf in leaves:
        rows *= leaf.estimate.rows
    combined: ChainMap[Column, ColumnEstimate] = layered(*[leaf.estimate.columns for leaf in leaves])
    # each class member's class, filled when a column is first derived (a memo reads the
    # columns of few of its join sets)
    class_of: dict[Column, int] = {}
    empty_alone: list[float] = []
    # An outer join among the leaves: the set is never below its matched part (``_matched_part``)
    matched = None if rows <= 0 else _matched_part(join_set, upper)
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
        residual_columns = _read_by(residual) if extremes else frozenset()
        for k in range(len(classes)):
            found = extreme_selectivity(k, classes, selectivities, leaves, leaf_of, residual_columns) \
                if k in extremes else None
            rows *= found if found is not None else selectivities[k]
        for i, j, ks in grouped:
            rows *= _group_correction(i, j, [classes[k] for k in ks], leaves, leaf_of)
        bounded = []
        # (an extreme joined back is matched with its grouping key already: ``extremes``)
        for i, j, ks in _combined_pairs(classes, leaves, leaf_of, in_group | set(extremes)):
            correction = _combination_correction(i, j, [classes[k] for k in ks], leaves, leaf_of)
            if correction > 1.0:
                rows *= correction
                bounded.append((i, j, ks))
        # A composite key's classes are already matched jointly (``_group_correction``): for
        # each of its two leaves they count as one class, its first, so the dependence between
        # them (a lineitem's part and supplier are one partsupp row) is not corrected twice.
        # So are a pair's classes whose combinations ``_combination_correction`` bounded.
        merged = {(index, k) for _, _, ks in grouped for k in sorted(ks)[1:] for index in _pair_of(grouped, ks)}
        merged |= {(index, k) for i, j, ks in bounded for k in sorted(ks)[1:] for index in (i, j)}
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
    # An outer join among the leaves whose padded side the set does not read: the set is
    # never below the same set over its preserved side (``_preserved_part``).
    preserved = None if rows <= 0 or matched is None else _preserved_part(join_set, upper)
    if preserved is not None and preserved.rows > rows:
        rows = preserved.rows
    if matched is not None and matched.rows >= rows:
        return _repeated(join_set, matched)
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
            if index is None or own <= 0:
                return e.scaled(0.0)
            # First the leaf's rows that find a match (their values thin out), then the
            # repetition by the matches (no new values). A leaf whose every row meets at most
            # one row of each other leaf (``_at_most_once``) is not repeated: its rows thin out
            # to the set's, as a binary join through a unique key thins them.
            share = kept.get(index)
            if share is None:
                share = kept[index] = -1.0 if _at_most_once(index, classes, leaves, leaf_of) \
                    else _shared_match(index, classes, leaves, leaf_of)
            if share == 0:
                return e.scaled(0.0)
            kept_share = total / own if share < 0 else share
            if kept_share < 1.0 and _determines_joined(c, index, classes, leaves, leaf_of):
                # The leaf's rows are kept through columns ``c`` determines: its values go whole.
                whole = e.kept_whole(kept_share)
                return whole if share < 0 else whole.scaled(total / (own * share))
            if share < 0:
                return e.scaled(total / own)
            return e.scaled(share).scaled(total / (own * share))
        found = joints.get(k)
        if found is None:
            members = classes[k]
            distribution = _kept(("joint", members), members, leaves, leaf_of,
                                 lambda: joint([leaves[leaf_of[m]].estimate.column(m) for m in members]))
            mass = distribution.non_null
            found = joints[k] = distribution.scaled(total / mass) if mass > 0 else distribution.scaled(0.0)
        return found

    columns: Mapping[Column, ColumnEstimate] = DerivedColumns(combined, derive)
    if matched is not None and matched.rows > 0:
        columns = at_least_matched(columns, matched, rows / matched.rows)
    groups: dict[frozenset[Column], float] = {}
    origins: dict[Column, Origin] = {}
    all_notes = frozenset(notes)
    for leaf in leaves:
        groups.update(leaf.estimate.groups)
        origins.update(leaf.estimate.origins)
        all_notes |= leaf.estimate.notes
    return RelEstimate(rows, columns, groups, origins, None, all_notes, join_set)


def _repeated(join_set: JoinSet, matched: RelEstimate) -> RelEstimate:
    """The set's estimate where its matched part (``_matched_part``) is the larger: that part's
    rows and columns, the set's leaves' groups, origins and notes."""
    groups: dict[frozenset[Column], float] = {}
    origins: dict[Column, Origin] = {}
    notes = matched.notes
    for leaf in join_set.leaves:
        groups.update(leaf.estimate.groups)
        origins.update(leaf.estimate.origins)
        notes |= leaf.estimate.notes
    return RelEstimate(matched.rows, matched.columns, groups, origins, None, notes, join_set)


def at_least_matched(columns: Mapping[Column, ColumnEstimate], matched: RelEstimate, factor: float) \
        -> Mapping[Column, ColumnEstimate]:
    """The set's columns, each holding at least the values its matched part's holds (that
    part's rows are among the set's): where the matched part's column, repeated to the set's
    rows, has more distinct values, it stands."""
    def derive(c: Column, e: ColumnEstimate) -> ColumnEstimate:
        inner = matched.columns.get(c)
        if inner is None or inner.distinct <= e.distinct:
            return e
        return inner.scaled(factor)

    return DerivedColumns(columns, derive)


def _matched_part(join_set: JoinSet, upper: bool) -> RelEstimate | None:
    """The estimate of the set's rows whose outer-join leaves all found a match: each such leaf
    (a left or right join) replaced by its sides as leaves, its condition among the set's
    conjuncts (``RelEstimate.matched``). Those rows are a subset of the set's (the inner join
    of the same inputs on the same conjuncts), so the set is never estimated below them. None
    where no leaf is an outer join."""
    leaves: list[Leaf] = []
    parts = join_set.conjuncts
    found = False
    pending = list(join_set.leaves)
    while pending:
        leaf = pending.pop()
        inner = leaf.estimate.matched
        if inner is None:
            leaves.append(leaf)
        else:
            # (an outer join's side that is an outer join in turn: its matched part too, so
            # the rows where every outer join matched are one inner-join set)
            found = True
            pending.extend(inner.leaves)
            parts = parts | inner.conjuncts
    if not found:
        return None
    return of_set(JoinSet(tuple(sorted(leaves, key=_leaf_order)), parts), upper)


def _preserved_part(join_set: JoinSet, upper: bool) -> RelEstimate | None:
    """The estimate of the set with each outer-join leaf whose padded side's columns no
    conjunct of the set reads replaced by its preserved side (``RelEstimate.preserved``): every
    row of that side is among the outer join's rows at least once, with the same values in the
    columns read, so the set has at least as many rows. None where no leaf is replaced."""
    read = _read_by(list(join_set.conjuncts))
    leaves: list[Leaf] = []
    parts = join_set.conjuncts
    found = False
    # (one level: the preserved side's own estimate as a set holds the floors below it, and
    # replacing its outer joins in turn would only loosen the bound)
    for leaf in join_set.leaves:
        side = leaf.estimate.preserved
        kept = frozenset(c for inner in side.leaves for c in inner.key) if side is not None else frozenset()
        if side is None or (leaf.key - kept) & read:
            leaves.append(leaf)
            continue
        found = True
        leaves.extend(side.leaves)
        parts = parts | side.conjuncts
    if not found:
        return None
    return of_set(JoinSet(tuple(sorted(leaves, key=_leaf_order)), parts), upper)


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
    extreme joined back (``extremes.extreme_candidate``). Nothing here depends on the set's
    order of leaves (``leaf_of`` is read only to find each member's leaf)."""
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
    return selectivity, tuple(own), empty, caps, extreme_candidate(members, leaves, leaf_of)


def _residual_share(conjunct: Expr, combined: Mapping[Column, ColumnEstimate], scale: float,
                    leaves: Sequence[Leaf], leaf_of: dict[Column, int]) -> tuple[float, str | None]:
    """``generic_selectivity`` of a conjunct that is not an equality class, kept for the same
    estimates of the leaves it reads (and the same scale): every set holding the conjunct's
    leaves asks again, and a conjunct over an aggregate's output (``l_quantity < 0.2 * avg``)
    derives that output's distribution each time it is read."""
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


def _determines_joined(column: Column, index: int, classes: Sequence[tuple[Column, ...]], leaves: Sequence[Leaf],
                       leaf_of: dict[Column, int]) -> bool:
    """Whether ``column`` of the leaf at ``index`` determines (``dependence``) each of the
    leaf's columns that join it to other leaves: then the rows the joins keep are whole groups
    of its values."""
    origins = leaves[index].estimate.origins
    joined = [c for members in classes if any(leaf_of[m] != index for m in members)
              for c in members if leaf_of[c] == index]
    own = origins.get(column)
    return bool(joined) and all(origin_determines(own, origins.get(c)) for c in joined)


def _at_most_once(index: int, classes: Sequence[tuple[Column, ...]], leaves: Sequence[Leaf],
                  leaf_of: dict[Column, int]) -> bool:
    """Whether each row of the leaf at ``index`` appears at most once in the set: walking the
    classes out from it, every other leaf is first reached through a column that is a unique
    key of that leaf by itself (supplier ⋈ nation ⋈ region from supplier: each supplier has one
    nation, each nation one region). A class that meets an already reached leaf again only
    filters. A leaf reached through a non-key column (a customer of the supplier's nation), or
    not reached by classes at all (a cross product, a residual-only join), can repeat rows."""
    reached, frontier, used = {index}, [index], set()
    while frontier:
        current = frontier.pop()
        for k, members in enumerate(classes):
            if k in used or not any(leaf_of[c] == current for c in members):
                continue
            used.add(k)
            for member in members:
                other = leaf_of[member]
                if other in reached:
                    continue
                if member not in leaves[other].single_keys:
                    return False
                reached.add(other)
                frontier.append(other)
    return len(reached) == len(leaves)


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
        others = tuple(c for c in members if leaf_of[c] != index)
        if not own or not others:
            continue
        share *= _class_share(own[0], others, leaves, leaf_of) if rows > 0 else 0.0
    return share


def _class_share(own: Column, others: tuple[Column, ...], leaves: Sequence[Leaf], leaf_of: dict[Column, int]) -> float:
    """Share of ``own``'s leaf's rows whose value meets the joint distribution of ``others``
    (the class's members in other leaves); kept for the same columns of the same leaf estimates:
    the sets of a memo put one leaf in many combinations of classes (``_shared_match``), whose
    classes recur."""
    def measure() -> float:
        leaf = leaves[leaf_of[own]].estimate
        other = joint([leaves[leaf_of[c]].estimate.column(c) for c in others])
        return min(matched_rows(leaf.column(own), other) / leaf.rows, 1.0)

    return _kept(("class share", own, others), (own, *others), leaves, leaf_of, measure)


def _classes(leaves: Sequence[Leaf], parts: frozenset[Expr],
             leaf_of: dict[Column, int]) -> tuple[list[tuple[Column, ...]], list[Expr]]:
    """Equivalence classes of leaf columns (members sorted by id), and the other conjuncts;
    kept per set of conjuncts (the columns a join set's conditions name are its leaves')."""
    return _kept_over(("classes", parts), (leaves[0].estimate,), lambda: _find_classes(parts, leaf_of))


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
            assert in_b is not None
            in_b.append(a)
            owner[a] = in_b
        elif in_b is None:
            in_a.append(b)
            owner[b] = in_a
        elif in_a is not in_b:
            if len(in_a) < len(in_b):
                in_a, in_b = in_b, in_a
            in_a.extend(in_b)
            for c in in_b:
                owner[c] = in_a
    # (each class once: by the column it begins with, the very object its key is: a column
    # enters a list as it enters the dictionary)
    classes = [tuple(sorted(m, key=lambda c: c.id)) for first, m in owner.items() if m[0] is first]
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


def _combined_pairs(classes: Sequence[tuple[Column, ...]], leaves: Sequence[Leaf], leaf_of: dict[Column, int],
                    excluded: set[int]) -> list[tuple[int, int, list[int]]]:
    """Pairs of leaves joined on two or more classes that no known column group matches, none
    of ``excluded`` (matched jointly elsewhere): (leaf i, leaf j, the classes). A class of m
    leaves stands for m - 1 joins, so it is given to at most m - 1 pairs (those sharing the
    most classes first): the three sales tables of one customer and item meet in two pairs,
    not three."""
    shared: dict[tuple[int, int], list[int]] = {}
    budget = []
    for k, members in enumerate(classes):
        present = sorted({leaf_of[c] for c in members})
        budget.append(len(present) - 1)
        if k in excluded:
            continue
        for x in range(len(present)):
            for y in range(x + 1, len(present)):
                shared.setdefault((present[x], present[y]), []).append(k)
    if not any(len(ks) >= 2 for ks in shared.values()):
        return []
    found = []
    for (i, j), ks in sorted(shared.items(), key=lambda item: (-len(item[1]), item[0])):
        usable = [k for k in ks if budget[k] > 0]
        if len(usable) < 2:
            continue
        for k in usable:
            budget[k] -= 1
        found.append((i, j, usable))
    return found


def _combination_correction(i: int, j: int, classes: Sequence[Sequence[Column]], leaves: Sequence[Leaf],
                            leaf_of: dict[Column, int]) -> float:
    """Two leaves joined on several classes match on the combination of their columns, and a
    leaf holds no more combinations than rows: the classes' selectivities multiplied as if
    independent assume ``product of distinct values`` combinations on each side, which past
    the rows is more than there are (a return's item, customer and ticket are one sale's; a
    row and its neighbour by rank share every partition column). The factor that brings the
    independent denominator (``product over classes of the larger distinct count``) down to
    the larger side's combinations, ``min(rows, product of distinct values)``, matched under
    containment as a composite key is (``_group_correction``); at most the factor by which a
    side's product of distinct values exceeds its rows, and at least 1. Where no side's
    product exceeds its rows, 1: the classes stay independent."""
    left, right = leaves[i].estimate, leaves[j].estimate
    if left.rows <= 0 or right.rows <= 0:
        return 1.0
    independent = on_left = on_right = 1.0
    for members in classes:
        a = max(left.column(_member_in(members, i, leaf_of)).distinct, 1.0)
        b = max(right.column(_member_in(members, j, leaf_of)).distinct, 1.0)
        independent *= max(a, b)
        on_left *= a
        on_right *= b
    combinations = max(min(left.rows, on_left), min(right.rows, on_right), 1.0)
    excess = max(on_left / max(min(left.rows, on_left), 1.0), on_right / max(min(right.rows, on_right), 1.0))
    correction = max(min(independent / combinations, excess), 1.0)
    if correction <= 1.0:
        return correction
    pairs = tuple((_member_in(m, i, leaf_of), _member_in(m, j, leaf_of)) for m in classes)
    return _kept_over(("combination checked", pairs), (left, right),
                      lambda: _combination_checked(pairs, left, right, independent, correction))


def _pair_of(grouped: Sequence[tuple[int, int, list[int]]], ks: list[int]) -> tuple[int, int]:
    """The two leaves of the composite key whose classes are ``ks``."""
    return next((i, j) for i, j, found in grouped if found is ks)


def _member_in(members: Sequence[Column], leaf: int, leaf_of: dict[Column, int]) -> Column:
    return next(c for c in members if leaf_of[c] == leaf)


def _group_correction(i: int, j: int, classes: Sequence[Sequence[Column]], leaves: Sequence[Leaf],
                      leaf_of: dict[Column, int]) -> float:
    """Replace the independent product of two leaves' single-column matches on a composite key
    by one over the larger domain of the column group; kept for the same columns of the same
    two leaf estimates (every set of a memo holding both leaves asks again)."""
    left, right = leaves[i].estimate, leaves[j].estimate
    if left.rows <= 0 or right.rows <= 0:
        return 1.0
    pairs = tuple([(_member_in(c, i, leaf_of), _member_in(c, j, leaf_of)) for c in classes])
    return _kept_over(("group correction", pairs), (left, right), lambda: _group_factor(pairs, left, right))


def _group_factor(pairs: Sequence[tuple[Column, Column]], left: RelEstimate, right: RelEstimate) -> float:
    """``_group_correction`` of the key's column pairs (left leaf's column, right leaf's)."""
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


def extreme_restriction(join_set: JoinSet, source: Column, group_by: Sequence[Column]) -> Restriction | None:
    """What restricts the rows of ``source``'s leaf in an aggregate's input join set, apart from
    the grouping key (``extremes.restriction``): carried by a ``min(source)`` grouped over it."""
    leaves = join_set.leaves
    leaf_of = _leaf_positions(leaves)
    if source not in leaf_of:
        return None
    classes, residual = _classes(leaves, join_set.conjuncts, leaf_of)
    keys = set(group_by)
    grouping = frozenset(k for k, members in enumerate(classes) if keys.intersection(members))
    found = restriction(leaves, classes, leaf_of, leaf_of[source], frozenset(), grouping, _read_by(residual))
    return found[0] if found is not None and found[2] else None
