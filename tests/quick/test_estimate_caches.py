"""The estimator's caches change no estimate: a join tree estimated whole (the sets below it
found without estimating them) equals the same tree estimated node by node, and estimators over
two statistics of the same tables, made and dropped in turn (so object ids are reused), each
give what a fresh computation with every cache emptied gives."""

from __future__ import annotations

import gc

from cbo.estimate import Estimator, join_sets, matching
from cbo.ir.expressions import ColumnFactory, compare
from cbo.ir.operators import Filter, Join, Plan, walk
from stats.from_values import table_stats
from tests.quick.test_estimator import col, make_scan, num
from tests.quick.test_join_sets import _skewed_users, _trees


def _forget_everything() -> None:
    """Empty the caches kept across estimators (by the identity of the objects they read)."""
    for cache in (join_sets._REMEMBERED, join_sets._KEPT, join_sets._FOREIGN_KEYS, join_sets._COUNTS,
                  matching._ARRAYS, matching._LISTS):
        cache.clear()


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


def _summary(estimator: Estimator, plan: Plan) -> tuple:
    found = estimator.estimate(plan)
    return (found.rows, tuple((c.id, found.column(c).distinct, found.column(c).nulls) for c in plan.output),
            tuple(sorted(found.notes)))


def test_a_join_tree_estimated_whole_equals_it_estimated_node_by_node():
    stats = _schema(7, 2_000)
    plans = _plans()
    assert any(isinstance(p, Join) and isinstance(p.left, Join) for p in plans)
    whole = Estimator(stats)
    by_node = Estimator(stats)
    for plan in plans:
        first = _summary(whole, plan)     # the inner joins below are not estimated
        for node in reversed(list(walk(plan))):   # children before parents
            by_node.estimate(node)
        assert _summary(by_node, plan) == first
        for node in walk(plan):           # and the nodes below, asked afterwards, agree
            assert _summary(whole, node) == _summary(by_node, node)


def test_estimators_over_two_statistics_of_the_same_tables_do_not_share_cached_values(monkeypatch):
    counted = []
    original = join_sets._foreign_keys_counted

    def counting(*args):  # type: ignore[no-untyped-def]
        counted.append(1)
        return original(*args)

    monkeypatch.setattr(join_sets, "_foreign_keys_counted", counting)
    both = {seed: _schema(seed, 1_500) for seed in (7, 8)}
    plans = _plans()
    fresh = {}
    for seed, stats in both.items():
        _forget_everything()
        fresh[seed] = [_summary(Estimator(stats), p) for p in plans]
    assert fresh[7] != fresh[8]            # the two statistics differ where it shows
    assert counted                         # the two foreign keys' samples were counted
    for _ in range(3):
        for seed, stats in both.items():   # one estimator, then the other, then new ones
            estimator = Estimator(stats)
            assert [_summary(estimator, p) for p in plans] == fresh[seed]
            estimator.forget_plans()
            assert [_summary(estimator, p) for p in plans] == fresh[seed]
            del estimator
            gc.collect()


def test_a_class_met_again_in_a_set_of_other_leaves_is_what_it_is_alone():
    """A class's outcome (selectivity, floor, notes, empty pairs) is kept by its members' leaf
    estimates and read again by every set holding it, whatever the set's other leaves and
    their order: every node of every plan, estimated by one estimator that has seen all the
    plans' nodes (children first, as a memo builds them), equals a fresh estimate of that node
    alone with every cache emptied, in rows, distinct counts, nulls and notes. Small samples
    find classes empty (100 rows) or floored (300 rows)."""
    plans = _plans()
    for sample_size, note in ((100, "the row samples find empty"), (300, "at least as if the passing keys")):
        stats = _schema(7, sample_size)
        shared = Estimator(stats)
        for plan in plans:
            for node in reversed(list(walk(plan))):
                shared.estimate(node)
        noted = False
        for plan in plans:
            for node in walk(plan):
                _forget_everything()
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
