"""State has an owner: what an estimator, an estimation or a search keeps lives exactly as long
as it does.

* Two estimators over the same statistics share nothing they derive: each converts the
  statistics and indexes the samples for itself.
* What an estimation context or a search derived is dropped with it: nothing else holds the
  estimates it made.
"""

from __future__ import annotations

import gc
import weakref

from cbo.estimate import Estimator
from cbo.ir.expressions import ColumnFactory, compare
from cbo.ir.operators import Filter, Join, walk
from stats.from_values import table_stats
from tests.quick.test_estimator import col, make_scan, num
from tests.quick.test_join_sets import _skewed_users


def _stats(seed: int = 7):  # type: ignore[no-untyped-def]
    data = _skewed_users(seed)
    return {f"s.{t}": table_stats(f"s.{t}", cols, sample_size=2_000) for t, cols in data.items()}


def _plans():  # type: ignore[no-untyped-def]
    """Joins of filtered and unfiltered leaves, some foreign keys meeting at users.Id."""
    data = _skewed_users(7)
    factory = ColumnFactory()
    s = {t: make_scan(factory, f"s.{t}", list(cols), ("Id",)) for t, cols in data.items()}
    users, posts, badges = s["users"], s["posts"], s["badges"]
    heavy = Filter(users, compare("gt", col(users, "Reputation"), num(300)))
    scored = Filter(posts, compare("gte", col(posts, "Score"), num(12)))
    owners = compare("eq", col(posts, "OwnerUserId"), col(users, "Id"))
    holders = compare("eq", col(badges, "UserId"), col(users, "Id"))
    return [Join("inner", Join("inner", scored, heavy, owners), badges, holders),
            Join("inner", posts, badges, compare("eq", col(posts, "OwnerUserId"), col(badges, "UserId")))]


def _summary(found) -> tuple:  # type: ignore[no-untyped-def]
    return found.rows, tuple(sorted(found.notes))


def test_two_estimators_over_the_same_statistics_share_nothing_they_derive():
    stats = _stats()
    first, second = Estimator(stats), Estimator(stats)
    for plan in _plans():
        assert _summary(first.estimate(plan)) == _summary(second.estimate(plan))
    assert first._base and first._samples
    assert first._base.keys() == second._base.keys() and first._samples.keys() == second._samples.keys()
    for key, column in first._base.items():
        other = second._base[key]
        assert column is not other and column.derived is not other.derived
    for table, sample in first._samples.items():
        other = second._samples[table]
        assert sample is not other and sample.rows is other.rows   # (the statistics' own sample, read)
        kept, other_kept = sample._kept, other._kept
        assert kept.keys() == other_kept.keys()
        assert all(kept[k] is not other_kept[k] for k in kept if not isinstance(kept[k], (int, float, type(None))))


def test_what_an_estimation_derived_goes_with_it():
    estimator = Estimator(_stats())
    context = estimator.context()
    plan = _plans()[0]
    found = context.estimate(plan)
    estimates = [weakref.ref(context.estimate(node)) for node in walk(plan)]
    assert found.join_set is not None
    del found, context
    gc.collect()
    assert all(ref() is None for ref in estimates)
    assert _summary(estimator.estimate(plan)) == _summary(Estimator(_stats()).estimate(plan))


def test_what_a_search_derived_goes_with_it():
    from cbo.memo.search import Optimizer

    estimator = Estimator(_stats())
    result = Optimizer(estimator).optimize(_plans()[0])
    groups = [weakref.ref(g) for g in result.memo]
    estimates = [weakref.ref(g.estimate) for g in result.memo]
    memo = weakref.ref(result.memo)
    del result
    gc.collect()
    assert memo() is None and all(ref() is None for ref in groups + estimates)
