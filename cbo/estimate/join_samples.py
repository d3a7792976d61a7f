"""Join classes counted on the leaves' row samples (``cbo.estimate.join_sets``).

Filters correlated with a join (busy users pass a reputation filter and own many posts;
excerpt posts are never linked) are measured on the leaves' row samples, which are independent
across tables: the product of per-value counts among sampled rows passing the filters counts
matching tuples. Where every sample is its whole table that count is exact (``_counted``).
Otherwise the unfiltered distributions' count is scaled by the sample (``_from_base``), and
where the sample matches too rarely for that, the filtered distributions' count stands unless
the sample contradicts it by more than two standard deviations (``_sampled``). A leaf joined
through two classes is checked on its sample for correlation between them
(``_leaf_correlation``). What derives from the samples and statistics alone (sample indexes,
value counts, pairs of a key and a foreign key, unfiltered matches) is kept for them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from cbo.estimate import defaults
from cbo.estimate.join_memory import _kept
from cbo.estimate.matching import matching_tuples
from cbo.estimate.relation import Leaf, Origin, RelEstimate, SampleView
from cbo.ir.expressions import Column


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
        assert origin.name is not None   # (origins without a name were turned away above)
        found = origin.view.sample.column(origin.name)
        if found is None:
            return None
        arrays.append(found)
    if len({values.dtype for values, _ in arrays}) != 1 or not _shared_pairs(origins)[1]:
        return None
    return _class_index(origins, arrays).passing([o.view for o in origins])


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
    sample. Every member is counted, a unique key of an unfiltered leaf too. (Leaving such a
    key out of a class of three, whose values each occur once, was meant here but never ran:
    the test compared new tuples by identity. Made to run, it brought the STATS workloads'
    mean |log q| down, 0.2326 -> 0.2274 and 0.2778 -> 0.2734, but one second-workload query
    with three joins to a q-error of 12.8, over the p95 of 10 the estimator holds to.)"""
    chosen: list[tuple[Column, Origin]] = []
    for c in members:
        leaf = leaves[leaf_of[c]].estimate
        origin = leaf.origins.get(c)
        if origin is None or origin.name is None or origin.base_rows <= 0 or not _sample_is_current(leaf, origin):
            return None
        chosen.append((c, origin))
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
    views = [o.view for _, o in chosen]
    masks = [v.mask for v in views]
    passing = index.passing(views)
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
            index.passing([v if k == position else None for k, v in enumerate(views)])
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
    # A function of the two columns' statistics and samples alone (no filter reaches it): kept
    # on the samples, since each set joining the two tables asks again and the sum runs over
    # every sampled value.
    return a.view.sample.kept(("foreign keys", a.name, b.view.sample.table, b.name),
                              lambda: _foreign_keys_counted(a, b, arrays))


def _foreign_keys_counted(a: Origin, b: Origin, arrays: Sequence[tuple[np.ndarray, np.ndarray]]) -> float | None:
    fractions = []
    counted = []
    for origin, (values, nulls) in zip((a, b), arrays):
        sample = origin.view.sample
        fractions.append(min(sample.size / max(sample.population, 1.0), 1.0))
        counted.append(_value_counts(origin, values, nulls))
    if min(fractions) <= 0:
        return None
    assert a.base is not None and b.base is not None   # (the caller asks only when both have statistics)
    common = [{value: rows for value, rows in base.live.mcv} for base in (a.base, b.base)]
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
    light = pairs / (fractions[0] * fractions[1])
    if a.view.sample.table == b.view.sample.table:
        # Two columns of one sample (a self-join, ``d1.d_week_seq = d2.d_week_seq``): a
        # sampled row paired with itself is in the sample with probability f, not f^2.
        (values_a, nulls_a), (values_b, nulls_b) = arrays
        same = ~nulls_a & ~nulls_b & (values_a == values_b)
        itself = sum(1 for v in values_a[same].tolist() if v not in busy)
        light -= itself / fractions[0] * (1.0 / fractions[0] - 1.0)
    return total + light


def _value_counts(origin: Origin, values: np.ndarray, nulls: np.ndarray) -> dict:
    """Per non-NULL value of a column's sample, its sampled rows (once per sample and column)."""
    def counted() -> dict:
        distinct, counts = np.unique(values[~nulls], return_counts=True)
        return dict(zip(distinct.tolist(), counts.tolist()))

    return origin.view.sample.kept(("value counts", origin.name or ""), counted)


def _against_whole_key(chosen: Sequence[tuple[Column, Origin]], arrays: Sequence[tuple[np.ndarray, np.ndarray]],
                       leaves: Sequence[Leaf], leaf_of: dict[Column, int]) -> float | None:
    """A foreign key matched with the unique key of an unfiltered table (posts' owners with
    all users): each row of the foreign key's side matches at most once, and as often as
    without its filters, so its filters keep the share of its sampled rows (with a value)
    they pass, and all of them where it has none.
    Counted on the sampled tuples instead, that share would rest on the rows of the key's
    sample only, clustered by the busy users that own most of them (about 0.86 of the truth
    on STATS' posts and users). None for other classes."""
    if len(chosen) != 2:
        return None
    for position, (column, origin) in enumerate(chosen):
        other_column, other = chosen[1 - position]
        if origin.view.mask is not None \
                or frozenset([column]) not in leaves[leaf_of[column]].unique \
                or frozenset([other_column]) in leaves[leaf_of[other_column]].unique:
            continue
        if _declared_rows(chosen, leaves, leaf_of) is None \
                and _class_index([o for _, o in chosen], arrays).all_tuples < MIN_SAMPLE_TUPLES:
            # Not declared a foreign key and rarely met in the samples: the histograms'
            # overlap is no evidence that its rows find the key (two columns that never
            # meet are near empty); the general count, with the samples' say, decides.
            return None
        if other.view.mask is None:
            # Neither side filtered: every row of the foreign key with a value matches
            # (``_key_tuples``: exactly where it is declared to reference the key; the whole
            # tables' histograms matched lost a little, badges with all users 0.990).
            return 1.0
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

    Filters on the foreign-key side scale the busy stratum by the share they pass of the busy
    keys' own sampled rows (the held keys passing the key's filters apart from the keys not
    held), leaning on the share of all its sampled rows where few keys have any.

    None for other classes, where the samples meet fewer than ``MIN_SAMPLE_TUPLES`` times, or
    where no sampled pair of the other keys passes (near empty: the general count, with its
    floor and note, decides). The other keys' pairs give their share only where they depart
    from the filters' shares as if independent by more than two standard deviations
    (Poisson), upwards only on ``defaults.MIN_SAMPLE_HITS`` pairs or more; else those shares
    stand: a few dozen sampled pairs of orders and lineitems must not override independent
    filters (two years of orders), but do show that lineitems shipped after a date come from
    orders placed before it only rarely."""
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
        overall = float(passing_rows) / present_rows
        if other.view.mask is None:
            busy = (held_passing + (busy_rows - held_rows) * unsampled_share) * overall
        else:
            # The foreign key's filters keep of a busy key's rows what they keep of that key's
            # sampled rows, not what they keep of all rows: the users with the most views own
            # answers far more than questions (0.92 of their posts against 0.53 of all STATS
            # posts; the whole share made such a join 0.73 of the truth). The foreign key's
            # sample holds rows of every busy key, whether the key's sample holds the key or
            # not: pooled over the held keys that pass the key's filters, and over the keys
            # not held. The rows come in clusters, one per key, so the whole share stands in
            # as ``PRIOR_KEYS`` keys' worth of them: one busy key does not decide alone.
            status = np.full(len(pairing.busy_keys), 2, dtype=np.int64)   # 2: not held
            held_at = pairing.key_row >= 0
            status[held_at] = mask[pairing.key_row[held_at]].astype(np.int64)   # 1 passes, 0 not
            on_busy = pairing.busy_of >= 0
            row_status = np.full(len(on_busy), -1, dtype=np.int64)
            row_status[on_busy] = status[pairing.busy_of[on_busy]]
            shares = []
            for wanted in (1, 2):
                rows_of = row_status == wanted
                seen = float(rows_of.sum())
                if seen <= 0:
                    shares.append(overall)
                    continue
                kept = float((rows_of & other_mask).sum())
                weight = PRIOR_KEYS * seen / len(np.unique(pairing.busy_of[rows_of]))
                shares.append((kept + weight * overall) / (seen + weight))
            busy = held_passing * shares[0] + (busy_rows - held_rows) * unsampled_share * shares[1]
        hits = int((passed & light_pairs).sum())
        light = pairing.light_pairs
        expected = light * float(mask.sum()) / max(pairing.valid_rows, 1) \
            * float(passing_rows) / present_rows
        if hits == 0:
            return None
        # The other keys' sampled pairs override independent filters where they depart from
        # them by more than two standard deviations (Poisson), and, upwards, rest on at least
        # ``MIN_SAMPLE_HITS`` pairs (as ``_sampled``).
        departs = abs(hits - expected) > 2.0 * math.sqrt(max(expected, 1.0))
        measured = departs and (hits < expected or hits >= defaults.MIN_SAMPLE_HITS)
        light_rows = max(_key_tuples(chosen, leaves, leaf_of) - busy_rows, 0.0)
        if departs and not measured:
            # More pairs than independence expects, but too few to scale up from: counted in
            # keys, the unit the pairs come in (``_few_keys_share``).
            key_share = leaves[leaf_of[column]].estimate.rows / max(origin.base_rows, 1.0)
            passing_held = sum(1 for row in held.values() if mask[row])
            share = _few_keys_share(hits, float(mask.sum()) - passing_held, light, pairing.valid_rows - len(held),
                                    key_share, float(passing_rows) / present_rows)
            return busy + light_rows * share
        return busy + light_rows * (hits if measured else expected) / max(light, 1)
    return None


def _few_keys_share(hits: int, keys: float, pairs: float, all_keys: float, key_share: float,
                    other_share: float) -> float:
    """The share of a foreign key's (light) rows that pass its own filters (``other_share`` of
    them, taken as independent) and whose key passes the key's, where the sampled pairs say
    more than independence expects but on fewer than ``defaults.MIN_SAMPLE_HITS`` pairs (a
    month of dates, four of them in the key's sample, the one sampled a date with sales, and
    nine sampled sales of it).

    Pairs come in clusters, one per sampled key: nine pairs of one sampled date are one
    observation of how often a passing key is referenced, not nine. Measured per key, the
    ``keys`` passing sampled keys hold ``hits`` passing pairs, where keys of the sample at
    large would hold ``pairs / all_keys`` each, ``other_share`` of them passing; the ratio,
    shrunk toward 1 by ``PRIOR_KEYS`` keys' worth (as the busy stratum's shares are),
    multiplies the share of keys passing, the key leaf's own estimate (``key_share``: its
    histograms count the passing keys better than the few in its sample). Falling back to
    independence instead, a foreign key into a calendar of 200 years, its rows on five, kept a
    200th of the sales of a filtered month."""
    expected_per_key = pairs / max(all_keys, 1.0) * other_share
    if keys <= 0 or expected_per_key <= 0:
        return min(key_share * other_share, 1.0)
    ratio = (hits + PRIOR_KEYS * expected_per_key) / ((keys + PRIOR_KEYS) * expected_per_key)
    return min(key_share * ratio * other_share, 1.0)


def _key_tuples(chosen: Sequence[tuple[Column, Origin]], leaves: Sequence[Leaf], leaf_of: dict[Column, int]) -> float:
    """Matching tuples of a foreign key and a unique key, both unfiltered: the foreign key's
    non-NULL rows where it is declared to reference that key (each such row has its value
    there; the histograms, matched bucket by bucket, lose a little at the edges and
    under-estimated every whole-key join), else the two distributions matched."""
    declared = _declared_rows(chosen, leaves, leaf_of)
    return declared if declared is not None else _base_tuples([o for _, o in chosen])


def _declared_rows(chosen: Sequence[tuple[Column, Origin]], leaves: Sequence[Leaf],
                   leaf_of: dict[Column, int]) -> float | None:
    """The non-NULL rows of the member declared a foreign key to the other's table and column
    (unfiltered), or None where neither is."""
    (a, origin_a), (b, origin_b) = chosen
    for (column, origin), key_origin in (((a, origin_a), origin_b), ((b, origin_b), origin_a)):
        table = getattr(key_origin.scan, "table", None)
        if origin.base is None or table is None or key_origin.name is None:
            continue
        for ref in leaves[leaf_of[column]].foreign:
            if ref.columns == (column,) and ref.table == table \
                    and tuple(n.lower() for n in ref.referenced) == (key_origin.name.lower(),):
                return origin.base.non_null
    return None


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
    busy_of: np.ndarray       # per foreign-key sampled row, its most common value's position, or -1
    busy_keys: tuple          # the most common values, by position
    key_row: np.ndarray       # per position, the key's sampled row of the value, or -1


def _key_pairs(key: Origin, values: np.ndarray, nulls: np.ndarray, foreign: Origin, foreign_values: np.ndarray,
               foreign_nulls: np.ndarray) -> _KeyPairs:
    """The sampled pairs of a key and a foreign key, whatever the filters: per foreign-key
    sampled row, the key's sampled row of its value (``rows_hit``, meaningful where ``met``),
    which pairs hold a value the foreign key does not list as most common (``light``), and
    the key's sampled row of each most common value it holds (``held``). Built once per pair
    of samples, with the counts over them (``_KeyPairs``): each filter then only masks them."""
    assert key.sample is not None and foreign.sample is not None and foreign.base is not None
    return key.view.sample.kept(("key pairs", key.name or "", foreign.view.sample.table, foreign.name or ""),
                                lambda: _pairs_of(foreign, values, nulls, foreign_values, foreign_nulls))


def _pairs_of(foreign: Origin, values: np.ndarray, nulls: np.ndarray, foreign_values: np.ndarray,
              foreign_nulls: np.ndarray) -> _KeyPairs:
    assert foreign.base is not None
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
    busy_keys = tuple(rows)
    busy_of = _positions(foreign_values, foreign_nulls, busy_keys)
    key_row = np.array([held.get(v, -1) for v in busy_keys], dtype=np.int64)
    for array in (rows_hit, met, light, present, has_value, busy_of, key_row):
        array.flags.writeable = False
    return _KeyPairs(rows_hit, met, light, held, rows, present, int(present.sum()), has_value,
                     int(has_value.sum()), int(met.sum()), int(light.sum()),
                     sum(rows[v] for v in held), sum(rows.values()), busy_of, busy_keys, key_row)


def _positions(values: np.ndarray, nulls: np.ndarray, keys: Sequence) -> np.ndarray:
    """Per sampled row, the position of its value among ``keys``, or -1 (NULL or not a key)."""
    found = np.full(len(values), -1, dtype=np.int64)
    if not keys or not len(values):
        return found
    try:    # (values of one kind; a value that does not compare with the sample's finds nothing)
        wanted = np.array(keys, dtype=values.dtype)
        order = np.argsort(wanted, kind="stable")
        ordered = wanted[order]
        at = np.clip(np.searchsorted(ordered, values), 0, len(ordered) - 1)
        hit = (ordered[at] == values) & ~nulls
    except (TypeError, ValueError, OverflowError):
        return found
    found[hit] = order[at[hit]]
    return found


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
    passing = index.passing([o.view for _, o in chosen])
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
        if not class_index.size:
            return 1.0
        weight = class_index.weights(position, [o.view for _, o in chosen])
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
# Keys (each with its sampled rows) that the share of all sampled rows is worth against the
# busy keys' own rows (``_over_filtered_key``).
PRIOR_KEYS = 2.0


def _shared_pairs(origins: Sequence[Origin]) -> tuple[list[tuple[int, int, float]], bool]:
    """Members read from one table's sample (a self-join, ``p1.OwnerUserId = u.Id =
    p2.LastEditorUserId``): pairs of their positions with the sample's fraction of its table,
    and whether the class can be counted on the samples (no sample read three times or more)."""
    seen: dict[str, list[int]] = {}
    for position, origin in enumerate(origins):
        seen.setdefault(origin.view.sample.table, []).append(position)
    pairs = []
    for positions in seen.values():
        if len(positions) > 2:
            return [], False
        if len(positions) == 2:
            sample = origins[positions[0]].view.sample
            pairs.append((positions[0], positions[1], min(sample.size / max(sample.population, 1.0), 1.0)))
    return pairs, True


class _ClassIndex:
    """Sampled values of k columns mapped to one set of keys: then any filters (the sample rows
    passing each leaf's filters, a member's ``SampleView``) count the matching tuples in O(n).

    Two members may read one table's sample (a self-join): a pair of distinct sampled rows is
    then in the sample with probability ``f^2``, like a pair from two independent samples, but
    a row paired with itself (its two columns equal) with probability ``f``. ``passing`` counts
    those diagonal tuples ``f`` times (``shared``: the pairs of members and ``f``), so that
    dividing by the product of the members' fractions stays unbiased.

    What derives from the samples alone (each member's counts unfiltered, its weights where no
    other member is filtered) is kept on the index, which lives as long as the samples; what
    derives from a filtered member's rows, on that member's view."""

    def __init__(self, arrays: Sequence[tuple[np.ndarray, np.ndarray]],
                 shared: Sequence[tuple[int, int, float]] = ()):
        self.shared = tuple(shared)
        valid = [values[~nulls] for values, nulls in arrays]
        keys = np.unique(np.concatenate(valid)) if valid else np.zeros(0)
        self.size = len(keys)
        self.groups: list[np.ndarray] = []
        self._unfiltered: dict[int, np.ndarray] = {}   # ``counts`` of a member without filters
        self._safe: list[tuple[np.ndarray, np.ndarray]] | None = None
        self._plain: dict[int, np.ndarray] = {}    # ``weights`` with no other member filtered
        for values, nulls in arrays:
            group = np.full(len(values), -1, dtype=np.int64)
            if self.size:
                group[~nulls] = np.searchsorted(keys, values[~nulls])
            self.groups.append(group)
        self.all_tuples = self.passing([None] * len(arrays))

    def counts(self, member: int, view: SampleView | None) -> np.ndarray:
        """Per key, the sampled rows of one member passing the view's filters (all its rows
        without a filtered view); kept, since the sets of one tree, or of one memo, meet the
        same leaves again."""
        mask = None if view is None else view.mask
        if mask is None:
            found = self._unfiltered.get(member)
            if found is None:
                found = self._unfiltered[member] = self._count(member, None)
            return found
        assert view is not None
        kept = view.derived
        found = kept.get((self, member))
        if found is None:
            found = kept[(self, member)] = self._count(member, mask)
        return found

    def _count(self, member: int, mask: np.ndarray | None) -> np.ndarray:
        group = self.groups[member]
        keep = group >= 0 if mask is None else (group >= 0) & mask
        return np.bincount(group[keep], minlength=self.size).astype(np.float64)

    def _diagonal(self, a: int, b: int, views: Sequence[SampleView | None]) -> np.ndarray:
        """Per key, the sampled rows of one sample read by members ``a`` and ``b`` whose two
        columns both hold it, passing both members' filters: the tuples pairing a row with
        itself."""
        same = (self.groups[a] >= 0) & (self.groups[a] == self.groups[b])
        for member in (a, b):
            view = views[member]
            if view is not None and view.mask is not None:
                same = same & view.mask
        return np.bincount(self.groups[a][same], minlength=self.size).astype(np.float64)

    def passing(self, views: Sequence[SampleView | None]) -> float:
        if not self.size:
            return 0.0
        product = self.counts(0, views[0])
        for member in range(1, len(views)):
            product = product * self.counts(member, views[member])
        total = float(product.sum())
        for a, b, fraction in self.shared:
            if fraction >= 1.0:
                continue
            diagonal = self._diagonal(a, b, views)
            for member in range(len(views)):
                if member not in (a, b):
                    diagonal = diagonal * self.counts(member, views[member])
            total -= (1.0 - fraction) * float(diagonal.sum())
        return total

    def _product(self, members: Sequence[int], views: Sequence[SampleView | None]) -> np.ndarray:
        """The product of ``members``' counts per sampled row, in their order (ones for none)."""
        if not members:
            return np.ones(self.size)
        product = self.counts(members[0], views[members[0]])
        for other in members[1:]:
            product = product * self.counts(other, views[other])
        return product

    def weights(self, member: int, views: Sequence[SampleView | None]) -> np.ndarray:
        """Per sampled row of ``member``, the matching tuples of the other members (read-only).
        Where no other member is filtered they are the samples' alone: kept on the index (a
        leaf joined through two classes asks for them in every set holding it).

        A member reading ``member``'s own sample (``d2.d_week_seq = d1.d_week_seq``, both of
        the calendar) counts the row itself, its diagonal tuple, ``f`` times, as ``passing``
        does; so does a pair of other members reading one sample."""
        plain = all(_unfiltered(views[other]) for other in range(len(views)) if other != member)
        if plain:
            found = self._plain.get(member)
            if found is not None:
                return found
        own = {b if a == member else a: fraction for a, b, fraction in self.shared
               if member in (a, b) and fraction < 1.0}
        # (each product starts from its first factor, not from an array of ones: the same
        # doubles, one multiplication and one sample-sized array fewer)
        product = self._product([other for other in range(len(views)) if other != member and other not in own],
                                views)
        for a, b, fraction in self.shared:
            if member in (a, b) or fraction >= 1.0:
                continue
            # (the two others' product counts their diagonal tuples once each: f times instead)
            rest = self._product([other for other in range(len(views))
                                  if other not in (member, a, b) and other not in own], views)
            product = product - (1.0 - fraction) * self._diagonal(a, b, views) * rest
        if self._safe is None:
            self._safe = [(np.maximum(g, 0), (g >= 0).astype(np.float64)) for g in self.groups]
        safe, valid = self._safe[member]
        weights = product[safe] * valid
        for other, fraction in own.items():
            counted = self.counts(other, views[other])[safe]
            # the row itself among the other member's rows of its value: counted f times
            itself = (self.groups[other] >= 0) & (self.groups[other] == self.groups[member])
            view = views[other]
            if view is not None and view.mask is not None:
                itself = itself & view.mask
            weights = weights * (counted - (1.0 - fraction) * itself)
        if plain:
            weights.flags.writeable = False
            self._plain[member] = weights
        return weights


def _unfiltered(view: SampleView | None) -> bool:
    return view is None or view.mask is None


def _class_index(origins: Sequence[Origin], arrays: Sequence[tuple[np.ndarray, np.ndarray]]) -> _ClassIndex:
    """The index of the members' samples, kept on the first member's sample by the members'
    tables and columns."""
    members = tuple((o.view.sample.table, o.name) for o in origins)
    return origins[0].view.sample.kept(("class index", members),
                                       lambda: _ClassIndex(arrays, _shared_pairs(origins)[0]))


def _base_tuples(origins: Sequence[Origin]) -> float:
    """Matching tuples of the unfiltered columns (the origins' statistics): kept on the first
    origin's sample by the columns' tables and names."""
    with_base = [o for o in origins if o.base is not None]
    bases = [o.base for o in origins if o.base is not None]
    members = tuple((o.view.sample.table, o.name) for o in with_base)
    return origins[0].view.sample.kept(("base tuples", members), lambda: matching_tuples(bases))


def _combination_pairs(pairs: Sequence[tuple[Column, Column]], left: RelEstimate, right: RelEstimate) \
        -> tuple[float, float] | None:
    """Two leaves' sampled rows passing their filters, paired where they agree on every column
    pair (left leaf's column, right leaf's): (the pairs counted, the number of sampled pairs
    the two samples hold). None where a side has no current sample of its columns, where the
    columns' kinds differ, or where both read one table's sample (a self-join's sampled pairs
    are not independent draws)."""
    sides = []
    for leaf, columns in ((left, [a for a, _ in pairs]), (right, [b for _, b in pairs])):
        if leaf.sample is None:
            return None
        arrays = []
        for c in columns:
            origin = leaf.origins.get(c)
            if origin is None or origin.name is None or not _sample_is_current(leaf, origin):
                return None
            found = origin.view.sample.column(origin.name)
            if found is None:
                return None
            arrays.append(found)
        sides.append((leaf.sample, arrays))
    (left_view, left_arrays), (right_view, right_arrays) = sides
    if left_view.sample.table == right_view.sample.table:
        return None
    codes = []
    kept = []
    for view, arrays in sides:
        keep = np.ones(len(arrays[0][0]), dtype=bool) if view.mask is None else view.mask.astype(bool).copy()
        for _, nulls in arrays:
            keep &= ~nulls
        kept.append(keep)
    for (a_values, _), (b_values, _) in zip(left_arrays, right_arrays):
        if a_values.dtype != b_values.dtype:
            return None
        both = np.concatenate([a_values[kept[0]], b_values[kept[1]]])
        codes.append(np.unique(both, return_inverse=True)[1].reshape(-1))
    n_left = int(kept[0].sum())
    n_right = int(kept[1].sum())
    if n_left == 0 or n_right == 0:
        return 0.0, float(n_left) * float(n_right)
    combined = row_groups(codes)
    width = int(combined.max()) + 1
    on_left = np.bincount(combined[:n_left], minlength=width).astype(np.float64)
    on_right = np.bincount(combined[n_left:], minlength=width).astype(np.float64)
    return float(on_left @ on_right), float(n_left) * float(n_right)


def row_groups(codes: Sequence[np.ndarray]) -> np.ndarray:
    """Dense group numbers of the rows of columns of non-negative integer codes (equal rows,
    equal numbers), as ``np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)``
    gives them.

    The codes fold into one int64 key in mixed radix, re-coded densely before a fold could
    overflow: sorting one integer column is several times faster than sorting rows."""
    key = codes[0].astype(np.int64)
    for code in codes[1:]:
        radix = int(code.max()) + 1 if len(code) else 1
        if int(key.max(initial=0)) + 1 > np.iinfo(np.int64).max // radix:
            key = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
        key = key * radix + code
    return np.unique(key, return_inverse=True)[1].reshape(-1)


def _combination_checked(pairs: Sequence[tuple[Column, Column]], left: RelEstimate, right: RelEstimate,
                         independent: float, correction: float) -> float:
    """``correction`` (the factor ``join_sets._combination_correction`` raises the independent
    selectivity ``1 / independent`` by, assuming the smaller side's combinations are contained
    in the larger's) as the two leaves' samples bear it out. Containment holds where one side's
    combinations are drawn from the other's (a return repeats its sale's item, customer and
    ticket); two tables that merely share the columns' domains (a customer's store and catalog
    purchases of one item) hold combinations drawn independently from the product of the
    domains, and match as the independent product says. Where the samples find fewer matching
    pairs than the corrected selectivity expects, by more than two standard deviations
    (Poisson), the correction shrinks by their ratio, never below 1."""
    found = _combination_pairs(pairs, left, right)
    if found is None:
        return correction
    hits, sampled = found
    expected = sampled * correction / max(independent, 1.0)
    if expected - hits <= 2.0 * math.sqrt(max(expected, 1.0)):
        return correction
    return max(correction * max(hits, 0.5) / expected, 1.0)
