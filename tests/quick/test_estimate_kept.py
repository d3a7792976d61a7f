"""What the estimator keeps changes no estimate: a join tree estimated whole (the sets below it
found without estimating them) equals the same tree estimated node by node, one context that
has seen many plans estimates each as a fresh estimator does, and each kept computation (a
column's atoms, arrays and thinning, a class index's weights, a range's bisection, a string
column's codes) equals it computed afresh."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np

from cbo.estimate import Estimator, arithmetic, atoms, join_samples, matching
from cbo.estimate.column import ColumnEstimate, Segment
from cbo.estimate.relation import SampleView
from cbo.ir.expressions import ColumnFactory, compare
from cbo.ir.operators import Filter, Join, Plan, walk
from stats.from_values import table_stats
from tests.quick.test_estimator import col, make_scan, num
from tests.quick.test_join_sets import _skewed_users, _trees


def _schema(seed: int, sample_size: int):  # type: ignore[no-untyped-def]
    data = _skewed_users(seed)
    return {f"s.{t}": table_stats(f"s.{t}", cols, sample_size=sample_size) for t, cols in data.items()}


def _plans():  # type: ignore[no-untyped-def]
    """Join trees over filtered and unfiltered leaves; the foreign keys of posts and badges meet
    at users.Id (their unfiltered samples are counted against each other)."""
    data = _skewed_users(7)
    factory = ColumnFactory()
    s = {t: make_scan(factory, f"s.{t}", list(cols), ("Id",)) for t, cols in data.items()}
    users, posts, badges, links = s["users"], s["posts"], s["badges"], s["postLinks"]
    heavy = Filter(users, compare("gt", col(users, "Reputation"), num(300)))
    scored = Filter(posts, compare("gte", col(posts, "Score"), num(12)))
    owners = [compare("eq", col(posts, "OwnerUserId"), col(users, "Id")),
              compare("eq", col(badges, "UserId"), col(users, "Id"))]
    linked = owners + [compare("eq", col(links, "PostId"), col(posts, "Id"))]
    direct = compare("eq", col(posts, "OwnerUserId"), col(badges, "UserId"))
    return ([Join("inner", posts, badges, direct), Join("inner", badges, scored, direct)]
            + _trees([users, posts, badges], owners) + _trees([heavy, scored, badges], owners)
            + _trees([users, scored, badges, links], linked)[::7])


def _summary(estimator, plan: Plan) -> tuple:  # type: ignore[no-untyped-def]
    found = estimator.estimate(plan)
    return (found.rows, tuple((c.id, found.column(c).distinct, found.column(c).nulls) for c in plan.output),
            tuple(sorted(found.notes)))


def test_a_join_tree_estimated_whole_equals_it_estimated_node_by_node():
    stats = _schema(7, 2_000)
    plans = _plans()
    assert any(isinstance(p, Join) and isinstance(p.left, Join) for p in plans)
    estimator = Estimator(stats)
    whole = estimator.context()
    by_node = estimator.context()
    for plan in plans:
        first = _summary(whole, plan)     # the inner joins below are not estimated
        for node in reversed(list(walk(plan))):   # children before parents
            by_node.estimate(node)
        assert _summary(by_node, plan) == first
        for node in walk(plan):           # and the nodes below, asked afterwards, agree
            assert _summary(whole, node) == _summary(by_node, node)


def test_estimators_over_two_statistics_of_the_same_tables_do_not_share_values():
    """Estimators over two statistics of the same tables, made and dropped in turn (so object
    ids are reused), each estimate as the first estimator of their statistics did."""
    both = {seed: _schema(seed, 1_500) for seed in (7, 8)}
    plans = _plans()
    fresh = {seed: [_summary(Estimator(stats), p) for p in plans] for seed, stats in both.items()}
    assert fresh[7] != fresh[8]            # the two statistics differ where it shows
    for _ in range(3):
        for seed, stats in both.items():   # one estimator, then the other, then new ones
            estimator = Estimator(stats)
            assert [_summary(estimator, p) for p in plans] == fresh[seed]
            context = estimator.context()
            assert [_summary(context, p) for p in plans] == fresh[seed]


def test_a_class_met_again_in_a_set_of_other_leaves_is_what_it_is_alone():
    """A class's outcome (selectivity, floor, notes, empty pairs) is kept by its members' leaf
    estimates and read again by every set holding it, whatever the set's other leaves and
    their order: every node of every plan, estimated by one context that has seen all the
    plans' nodes (children first, as a memo builds them), equals a fresh estimator's estimate
    of that node alone, in rows, distinct counts, nulls and notes. Small samples find classes
    empty (100 rows) or floored (300 rows)."""
    plans = _plans()
    for sample_size, note in ((100, "the row samples find empty"), (300, "at least as if the passing keys")):
        stats = _schema(7, sample_size)
        shared = Estimator(stats).context()
        for plan in plans:
            for node in reversed(list(walk(plan))):
                shared.estimate(node)
        noted = False
        for plan in plans:
            for node in walk(plan):
                alone = _summary(Estimator(stats), node)
                assert _summary(shared, node) == alone
                noted = noted or any(note in n for n in alone[2])
        assert noted


def test_a_columns_atoms_are_kept_read_only_and_equal_to_them_computed_again():
    """``atoms`` keeps its points on the estimate: the same arrays for the same estimate, equal
    to a fresh computation, not writable (a caller changing them would change every later
    comparison of the column), and a scaled estimate of the column gets its own weights."""
    from cbo.estimate.atoms import _placed, atoms

    stats = _schema(7, 500)
    scan = make_scan(ColumnFactory(), "s.posts", ["Id", "Score"], ("Id",))
    score = Estimator(stats).estimate(scan).column(scan.output[1])
    first = atoms(score)
    assert first is not None and atoms(score) is first
    again = _placed(score.live)
    assert again is not None and all((a == b).all() for a, b in zip(first, again))
    for array in first:
        assert not array.flags.writeable
    halved = atoms(score.scaled(0.5))
    assert halved is not None and (halved[1] * 2 == first[1]).all() and (halved[0] == first[0]).all()


def _column(rng: random.Random, segments: int, mcv: int = 0) -> ColumnEstimate:
    """A column over whole numbers: ``segments`` buckets with random bounds, rows and domains."""
    bounds = sorted(rng.sample(range(0, 5_000), segments * 2))
    found = []
    for lower, upper in zip(bounds[::2], bounds[1::2]):
        domain = float(upper - lower + 1)
        found.append(Segment(lower, upper, rng.uniform(1, 1e5), domain * rng.uniform(0.1, 1.0), domain))
    common = tuple((rng.randint(0, 5_000), rng.uniform(1, 1e4)) for _ in range(mcv))
    return ColumnEstimate("number", 0.0, common, tuple(found))


def _same_estimate(a: ColumnEstimate, b: ColumnEstimate) -> bool:
    return a.mcv == b.mcv and a.segments == b.segments and a.nulls == b.nulls


def test_matching_reads_scaled_columns_as_their_live_estimates_whatever_the_members_order():
    """``matching_tuples`` and ``joint`` read a scaled column's unscaled segments (their arrays
    kept with the column's values) and apply the pending factor and thinning themselves: the
    same numbers, to the last bit, as the live estimates and as copies that keep nothing, for
    two and three members in every order and with the members' scales swapped."""
    rng = random.Random(3)
    for sizes in ((20, 30), (3, 4), (40, 15, 25)):
        bases = [_column(rng, n, mcv=2) for n in sizes]
        for scales in ((1.0, 0.3), (2.5, 1.0), (0.4, 1.7)):
            scaled = [c.scaled(scales[i % 2]).scaled(scales[(i + 1) % 2]) for i, c in enumerate(bases)]
            for order in (scaled, scaled[::-1], scaled[1:] + scaled[:1]):
                live = [c.live for c in order]
                assert matching.matching_tuples(order) == matching.matching_tuples(live)
                assert _same_estimate(matching.joint(order), matching.joint(live))
                copies = [replace(c) for c in order]   # (nothing kept with them)
                assert matching.matching_tuples(copies) == matching.matching_tuples(live)


def test_atoms_kept_per_mcvs_and_segments_equal_them_computed_from_the_live_estimate():
    """A column's atoms come from positions kept with its MCVs and segments: an estimate sharing
    the segments but not the MCVs (or the reverse) gets its own, and a scaled copy its own
    rows; each equals the points and rows computed afresh from the live estimate."""
    rng = random.Random(5)
    base = _column(rng, 30, mcv=3)
    other_mcv = ColumnEstimate("number", 0.0, ((7, 11.0), (4_999, 2.0)), base.segments)
    other_segments = ColumnEstimate("number", 0.0, base.mcv, _column(rng, 30).segments)
    for estimate in (base, other_mcv, other_segments, base.scaled(0.37), base.scaled(0.5).scaled(3.0)):
        found, fresh = atoms.atoms(estimate), atoms._placed(estimate.live)
        assert found is not None and fresh is not None
        assert all(np.array_equal(a, b) for a, b in zip(found, fresh))


def _thin_afresh(points: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``arithmetic._thin`` as it was before its sort and groups were kept."""
    limit = int(arithmetic.MAX_PAIRS ** 0.5)
    if len(points) <= limit:
        return points, weights
    order = np.argsort(points)
    points, weights = points[order], weights[order]
    groups = np.array_split(np.arange(len(points)), limit)
    merged_w = np.array([weights[g].sum() for g in groups])
    merged_p = np.array([(points[g] * weights[g]).sum() / w if w > 0 else points[g].mean()
                         for g, w in zip(groups, merged_w)])
    return merged_p, merged_w


def test_thinning_kept_with_the_columns_values_equals_it_computed_afresh():
    """``_thin`` keeps its sort and groups with the column's values (``derived``): two columns
    with as many points in other places, and scaled copies' weights on the same points (read
    after the column's own, and before), each thin to what a fresh sort and split gives."""
    rng = random.Random(9)
    first, second = _column(rng, 30, mcv=1), _column(rng, 30, mcv=1)
    early = second.scaled(2.0)
    for estimate in (early, first, second, first.scaled(0.3), early.scaled(0.5)):
        found = atoms.atoms(estimate)
        assert found is not None and not found[0].flags.writeable
        thinned = arithmetic._thin(*found, estimate.derived)
        expected = _thin_afresh(*found)
        assert all(np.array_equal(a, b) for a, b in zip(thinned, expected))
    assert first.derived is first.scaled(0.3).derived and "thinning" in first.derived


def test_thinning_sums_each_group_as_numpy_sums_it():
    """``_thin`` sums all groups at once (``_row_sums``), as numpy sums each: groups of fewer
    than eight points, of eight to 128 and of more, weights with zeros and all zero (the plain
    mean), to the last bit."""
    rng = np.random.default_rng(1)
    for n in (65, 100, 511, 512, 600, 4_000, 8_192, 9_000):
        for zeros in (0.0, 0.5, 1.0):
            points = rng.normal(size=n) * 1e3
            weights = rng.random(n) * 1e4
            weights[rng.random(n) < zeros] = 0.0
            thinned = arithmetic._thin(points, weights)
            expected = _thin_afresh(points, weights)
            assert all(a.tobytes() == b.tobytes() for a, b in zip(thinned, expected))


def _one_segment(rng: random.Random) -> tuple[Segment, ...]:
    lower = rng.randint(-20, 200)
    upper = lower + rng.randint(0, 300)
    domain = float(upper - lower + 1)
    return (Segment(lower, upper, rng.uniform(1, 1e5), rng.choice([domain, 1.0 + domain * rng.random()]), domain),)


def test_the_small_sweep_with_factors_equals_the_numpy_sweep_in_every_order():
    """The plain sweep of a few segments (keys of one segment each, a clique's keys without
    histograms, and of several), in every member order, with the members' rows scaled or not,
    matches as the numpy sweep does, to the last bit."""
    rng = random.Random(17)
    for round_ in range(300):
        kinds = [_one_segment if round_ % 3 else (lambda r: _column(r, r.randint(1, 3)).segments)
                 for _ in range(rng.randint(2, 4))]
        arrays = [matching._arrays_of(kind(rng)) for kind in kinds]
        for order in (arrays, arrays[::-1], arrays[1:] + arrays[:1]):
            for factors in (None, [rng.choice([1.0, 0.3, 2.5]) for _ in order]):
                found = matching._histogram_tuples(order, factors)  # type: ignore[arg-type]
                scaled = order if factors is None else [(a[0], a[1], a[2] * f, *a[3:]) for a, f in zip(order, factors)]  # type: ignore[index]
                fresh = matching._pieces_numpy(scaled)  # type: ignore[arg-type]
                assert found == (0.0 if fresh is None else float(fresh[2].sum()))


def _class_index_arrays(rng: np.random.Generator, sizes: tuple[int, ...]) -> list[tuple[np.ndarray, np.ndarray]]:
    arrays = []
    for size in sizes:
        values = rng.integers(0, 40, size).astype(np.float64)
        arrays.append((values, rng.random(size) < 0.1))
    return arrays


def test_class_index_weights_kept_without_filters_equal_them_computed_afresh():
    """``_ClassIndex.weights`` keeps a member's weights where no other member is filtered (they
    derive from the samples alone): read in any order of calls, with other members filtered or
    not (a filter must not be served the unfiltered weights), each equals what a fresh index
    computes, and the kept arrays are read-only."""
    rng = np.random.default_rng(3)
    arrays = _class_index_arrays(rng, (300, 200, 250))
    masks = [None if rng.random() < 0.5 else rng.random(len(v)) < 0.6 for v, _ in arrays]
    kept = join_samples._ClassIndex(arrays)

    def views(masks):  # type: ignore[no-untyped-def]
        return [None if m is None else SampleView(None, {}, m) for m in masks]  # type: ignore[arg-type]

    calls = [(member, views([m if k != member and use else None for k, m in enumerate(masks)]))
             for member in range(3) for use in (False, True, False)]
    filtered = [(member, views([rng.random(len(v)) < 0.5 for v, _ in arrays])) for member in range(3)]
    for member, these in calls + filtered + calls[::-1]:
        found = kept.weights(member, these)
        fresh = join_samples._ClassIndex(arrays).weights(member, these)
        assert found.tobytes() == fresh.tobytes()
        if all(m is None for k, m in enumerate(these) if k != member):
            assert not found.flags.writeable and kept.weights(member, these) is found


def test_a_foreign_keys_count_kept_across_plans_is_that_pairs_own():
    """Two foreign keys' strata are kept on the samples for the estimator's lifetime: one
    column counted against two others, and another against the first's partner, in either
    order of plans, each give what a fresh estimator gives (a count kept by one of its two
    columns would be read for the other pair)."""
    stats = _schema(7, 2_000)
    data = _skewed_users(7)
    factory = ColumnFactory()
    s = {t: make_scan(factory, f"s.{t}", list(cols), ("Id",)) for t, cols in data.items()}
    posts, badges, links = s["posts"], s["badges"], s["postLinks"]
    plans = [Join("inner", posts, badges, compare("eq", col(posts, "OwnerUserId"), col(badges, "UserId"))),
             Join("inner", posts, links, compare("eq", col(posts, "OwnerUserId"), col(links, "PostId"))),
             Join("inner", posts, badges, compare("eq", col(posts, "LastEditorUserId"), col(badges, "UserId")))]
    fresh = [_summary(Estimator(stats), plan) for plan in plans]
    assert len(set(fresh)) == 3
    estimator = Estimator(stats)
    for order in (list(range(3)), [2, 1, 0, 1]):
        for k in order:
            assert _summary(estimator, plans[k]) == fresh[k]
    assert sum(key[0] == "foreign keys" for sample in estimator._samples.values() for key in sample._kept) == 3


def _ranged_column(rng: random.Random, kind: str) -> ColumnEstimate:
    """Twenty ordered segments over whole numbers (as ints, floats, dates or strings), some
    touching (a bound shared by two segments), some single values, with a few MCVs."""
    import datetime as dt

    bounds, at = [], 0
    for _ in range(20):
        at += rng.choice([0, 1, 3])
        lower = at
        at += rng.choice([0, 2, 5])
        bounds.append((lower, at))

    def convert(v: int):  # type: ignore[no-untyped-def]
        return {"int": v, "float": float(v), "date": dt.date(2000, 1, 1) + dt.timedelta(days=v),
                "str": f"{v:04d}"}[kind]

    segments = tuple(Segment(convert(a), convert(b), rng.uniform(1, 100), 1.0 + (b - a) * rng.random(), 1.0 + b - a)
                     for a, b in bounds)
    mcv = tuple((convert(rng.randint(0, at)), rng.uniform(1, 50)) for _ in range(3))
    return ColumnEstimate(kind, 5.0, mcv, segments)


def test_a_range_skips_by_bisection_the_segments_the_loop_skips():
    """``in_range`` finds the segments wholly outside a range by bisection (``_outside``, its
    bounds kept per estimate): on ordered segments of ints, floats, dates and strings, with
    range bounds on, inside and outside the segments' bounds, inclusive or not, one-sided, of
    another type (the loop decides) or empty, the estimate is the loop's over every segment,
    to the last bit (a bisection on the wrong side of a shared bound drops or keeps one)."""
    rng = random.Random(23)
    loop = ColumnEstimate._outside
    for kind in ("int", "float", "date", "str"):
        for _ in range(40):
            column = _ranged_column(rng, kind)
            values = [b for s in column.segments for b in (s.lower, s.upper)]
            for _ in range(30):
                low, high = rng.choice(values + [None]), rng.choice(values + [None])
                if kind == "int" and rng.random() < 0.2:
                    low = None if low is None else float(low)    # another type: every segment tested
                flags = (rng.random() < 0.5, rng.random() < 0.5)
                found = column.in_range(low, high, *flags)
                try:
                    ColumnEstimate._outside = lambda self, *a: (0, len(self.segments))  # type: ignore[method-assign]
                    expected = column.in_range(low, high, *flags)
                finally:
                    ColumnEstimate._outside = loop  # type: ignore[method-assign]
                assert found == expected, (kind, low, high, flags)
    assert "_ordered" in column.__dict__ and column.__dict__["_ordered"] is not None


def test_a_range_that_does_not_compare_with_the_segments_cannot_be_placed():
    """A one-sided range whose value has the bounds' type but does not compare with them (an
    aware timestamp against naive bounds) cannot be placed: ``in_range`` says None, as the loop
    over every segment does, instead of raising from the bisection."""
    import datetime as dt

    start = dt.datetime(2000, 1, 1)
    segments = tuple(Segment(start + dt.timedelta(days=2 * i), start + dt.timedelta(days=2 * i + 1), 10.0, 2.0, 2.0)
                     for i in range(20))
    column = ColumnEstimate("timestamp", 0.0, (), segments)
    aware = dt.datetime(2000, 1, 5, tzinfo=dt.timezone.utc)
    for low, high in ((aware, None), (None, aware)):
        assert column.in_range(low, high, True, True) is None
    assert column.in_range(start, None, True, True) is not None


def test_string_comparisons_through_kept_codes_equal_comparing_each_row():
    """``sample_eval`` compares a sample's string column with ``=``, ``<>`` and ``IN`` through
    codes kept per column array: two columns of the same length (NULLs, numbers, NumPy
    strings among the strings), read in turn, give for strings present and absent the masks
    comparing each row gives (codes kept by the column's length would answer for the other)."""
    from cbo.estimate import sample_eval
    from cbo.ir.expressions import Column, ColumnRef, Constant, SpecialForm
    from cbo.ir.types import BOOLEAN, VARCHAR

    rng = random.Random(5)
    words = ["MAIL", "SHIP", "AIR", "RAIL", ""]

    def column() -> tuple[np.ndarray, np.ndarray]:
        values = np.array([rng.choice([*words, None, float("nan"), 3.0, np.str_("AIR")]) for _ in range(500)],
                          dtype=object)
        return values, np.array([v is None for v in values])

    data = {Column(1, "a", VARCHAR): column(), Column(2, "b", VARCHAR): column()}

    def plain_eval(e):  # type: ignore[no-untyped-def]
        saved = sample_eval._compare
        try:
            sample_eval._compare = lambda name, left, right, coded=None: saved(name, left, right)  # type: ignore[assignment]
            return sample_eval._boolean(e, sample_eval._Columns(data.get, None), 500)
        finally:
            sample_eval._compare = saved

    codes: dict = {}

    def kept(column, what, make):  # type: ignore[no-untyped-def]
        key = (column, what)
        if key not in codes:
            codes[key] = make(data[column][0])
        return codes[key]

    for _ in range(6):
        for c in data:
            ref = ColumnRef(c)
            for word in [*words, "TRUCK"]:
                for e in (compare("eq", ref, Constant(word, VARCHAR)), compare("neq", ref, Constant(word, VARCHAR)),
                          SpecialForm("IN", (ref, Constant(word, VARCHAR), Constant("AIR", VARCHAR)), BOOLEAN)):
                    found = sample_eval._boolean(e, sample_eval._Columns(data.get, kept), 500)
                    expected = plain_eval(e)
                    assert all(a.tobytes() == b.tobytes() for a, b in zip(found, expected)), (c, word, e)
    assert len(codes) >= 2
