"""Join sets checked on the row samples: a table joined with itself through a key, classes the
samples find empty, filters correlated with the join key; and the pessimistic mode's bound."""

from __future__ import annotations

import random

from cbo.estimate import Estimator
from cbo.ir.expressions import ColumnFactory, compare
from cbo.ir.operators import Filter, Join
from stats.from_values import table_stats
from tests.quick.test_estimator import col, make_scan, num
from tests.quick.test_join_sets import _same_everywhere, _setup, _skewed_users, _trees, _truth_fk_fk


def _counts(values: list[int]) -> dict[int, int]:
    found: dict[int, int] = {}
    for v in values:
        found[v] = found.get(v, 0) + 1
    return found


def test_posts_owned_and_edited_by_the_same_heavy_users_are_counted_on_one_sample():
    # p1.OwnerUserId = u.Id = p2.LastEditorUserId with users filtered to the heavy ones: both
    # posts leaves read the one posts sample. Pairs of distinct sampled rows are in the sample
    # with probability f^2, a row paired with itself with probability f; counted so, the sample
    # finds the heavy users' posts x edits, which independent histograms miss.
    data = _skewed_users()
    factory = ColumnFactory()
    stats = {f"s.{t}": table_stats(f"s.{t}", cols, sample_size=2_000) for t, cols in data.items()}
    users = make_scan(factory, "s.users", list(data["users"]), ("Id",))
    owned = make_scan(factory, "s.posts", list(data["posts"]), ("Id",))
    edited = make_scan(factory, "s.posts", list(data["posts"]), ("Id",))
    heavy = Filter(users, compare("gt", col(users, "Reputation"), num(300)))
    on = [compare("eq", col(owned, "OwnerUserId"), col(users, "Id")),
          compare("eq", col(edited, "LastEditorUserId"), col(users, "Id"))]
    reputation = dict(zip(data["users"]["Id"], data["users"]["Reputation"]))
    owners, editors = _counts(data["posts"]["OwnerUserId"]), _counts(data["posts"]["LastEditorUserId"])
    truth = sum(n * editors.get(u, 0) for u, n in owners.items() if reputation[u] > 300)
    estimate = _same_everywhere(Estimator(stats), _trees([owned, heavy, edited], on))
    assert 1 / 2 <= estimate / truth <= 2, (estimate, truth)


def _excerpts(seed: int = 3):  # type: ignore[no-untyped-def]
    """Tags whose excerpt posts all score 0, as wiki excerpts do, while most posts score more;
    posts' owners hold badges."""
    rng = random.Random(seed)
    posts = 40_000
    excerpt_ids = rng.sample(range(1, posts + 1), 600)
    excerpts = set(excerpt_ids)
    score = [0 if i in excerpts else rng.randint(0, 5) for i in range(1, posts + 1)]
    data = {"posts": {"Id": list(range(1, posts + 1)), "Score": score,
                      "OwnerUserId": [rng.randint(1, 200) for _ in range(posts)]},
            "tags": {"Id": list(range(1, 601)), "ExcerptPostId": excerpt_ids},
            "badges": {"Id": list(range(1, 20_001)), "UserId": [rng.randint(1, 200) for _ in range(20_000)]}}
    factory = ColumnFactory()
    scans = {t: make_scan(factory, f"e.{t}", list(cols), ("Id",)) for t, cols in data.items()}
    stats = {f"e.{t}": table_stats(f"e.{t}", cols, sample_size=4_000 if t == "posts" else 100_000)
             for t, cols in data.items()}
    return scans, Estimator(stats)


def test_a_filter_no_matched_sampled_row_passes_makes_the_join_near_empty():
    # 600 tags x 10 % of posts sampled: about 60 sampled tuples match, none of which passes
    # Score >= 1 where 83 % of all posts do. The class is estimated at its floor, half a
    # sampled tuple, and the badges of the posts' owners (100 per owner) do not multiply it.
    s, estimator = _excerpts()
    posts, tags, badges = s["posts"], s["tags"], s["badges"]
    scored = Filter(posts, compare("gte", col(posts, "Score"), num(1)))
    on = [compare("eq", col(tags, "ExcerptPostId"), col(posts, "Id"))]
    pair = estimator.rows(Join("inner", tags, scored, on[0]))
    assert pair < 10, pair        # independence would say 600 x 83 % = 500
    on.append(compare("eq", col(badges, "UserId"), col(posts, "OwnerUserId")))
    three = _same_everywhere(estimator, _trees([tags, scored, badges], on))
    assert three <= pair * 1.0001, (three, pair)


def test_the_pessimistic_mode_bounds_a_skewed_join_from_above_in_every_order():
    # posts.LastEditorUserId = users.Id = badges.UserId: the bound is posts x (the largest
    # number of badges one user holds), above the truth the estimate approaches.
    data, estimator, s = _setup(0)
    users, posts, badges = s["users"], s["posts"], s["badges"]
    on = [compare("eq", col(posts, "LastEditorUserId"), col(users, "Id")),
          compare("eq", col(badges, "UserId"), col(users, "Id"))]
    truth = _truth_fk_fk(data)
    upper = Estimator(estimator.stats, upper=True)
    bound = _same_everywhere(upper, _trees([posts, users, badges], on))
    estimate = estimator.rows(Join("inner", Join("inner", posts, users, on[0]), badges, on[1]))
    top_badges = max(_counts(data["badges"]["UserId"]).values())
    assert bound >= truth and bound >= estimate, (bound, truth, estimate)
    assert bound <= len(data["posts"]["Id"]) * top_badges * 1.5, bound


def test_two_foreign_keys_are_matched_from_the_samples_where_the_same_users_are_busy_in_both():
    # Posts and badges drawn with one activity per user (log-normal: many moderately busy users,
    # beyond what the most-common-value lists hold). Histograms match the two foreign keys as
    # if uniform within segments, about 30 % under; the samples' count, scaled by their
    # fractions, is unbiased.
    rng = random.Random(11)
    ids = list(range(1, 5_001))
    activity = [rng.lognormvariate(0, 1.5) for _ in ids]
    owners, holders = rng.choices(ids, weights=activity, k=30_000), rng.choices(ids, weights=activity, k=30_000)
    data = {"posts": {"Id": list(range(1, 30_001)), "OwnerUserId": owners},
            "badges": {"Id": list(range(1, 30_001)), "UserId": holders}}
    held = _counts(holders)
    truth = sum(held.get(u, 0) for u in owners)
    estimates = {}
    for size in (0, 5_000):
        factory = ColumnFactory()
        stats = {f"f.{t}": table_stats(f"f.{t}", cols, sample_size=size) for t, cols in data.items()}
        scans = {t: make_scan(factory, f"f.{t}", list(cols), ("Id",)) for t, cols in data.items()}
        on = compare("eq", col(scans["badges"], "UserId"), col(scans["posts"], "OwnerUserId"))
        estimates[size] = Estimator(stats).rows(Join("inner", scans["posts"], scans["badges"], on))
    assert estimates[0] < 0.8 * truth, (estimates, truth)      # the data is correlated enough to mean something
    assert 0.85 <= estimates[5_000] / truth <= 1.15, (estimates, truth)


def test_a_class_of_three_is_bounded_by_two_members_that_never_meet():
    # Badges come after their holder joined: users who joined late hold no early badge. In
    # posts.OwnerUserId = users.Id = badges.UserId the three-way sampled tuples under all
    # filters are too few to tell, but users and badges alone never meet in the samples, so
    # the class, and the set, keep at most that pair's floor times the posts each of its
    # tuples meets (7.5 per user).
    rng = random.Random(17)
    ids = list(range(1, 4_001))
    joined = [rng.randint(0, 1_000) for _ in ids]
    holders = [rng.choice(ids) for _ in range(30_000)]
    data = {"users": {"Id": ids, "Joined": joined},
            "badges": {"Id": list(range(1, 30_001)), "UserId": holders,
                       "Date": [joined[u - 1] + rng.randint(0, 300) for u in holders]},
            "posts": {"Id": list(range(1, 30_001)), "OwnerUserId": [rng.choice(ids) for _ in range(30_000)]}}
    factory = ColumnFactory()
    stats = {f"j.{t}": table_stats(f"j.{t}", cols, sample_size=5_000) for t, cols in data.items()}
    s = {t: make_scan(factory, f"j.{t}", list(cols), ("Id",)) for t, cols in data.items()}
    late = Filter(s["users"], compare("gte", col(s["users"], "Joined"), num(900)))
    early = Filter(s["badges"], compare("lt", col(s["badges"], "Date"), num(850)))
    on = [compare("eq", col(s["posts"], "OwnerUserId"), col(s["users"], "Id")),
          compare("eq", col(s["badges"], "UserId"), col(s["users"], "Id"))]
    estimator = Estimator(stats)
    pair = estimator.rows(Join("inner", late, early, on[1]))
    three = _same_everywhere(estimator, _trees([s["posts"], late, early], on))
    assert pair < 20, pair                     # independence: 400 late users x 7.5 badges x 85 %
    assert three <= pair * 7.5 * 1.5, (three, pair)   # independence: 7.5 times the above


def _both_orders(estimator: Estimator, a, b, on) -> float:  # type: ignore[no-untyped-def]
    first, second = estimator.rows(Join("inner", a, b, on)), estimator.rows(Join("inner", b, a, on))
    assert first == second, (first, second)
    return first


def test_a_rare_user_missing_from_the_sample_does_not_empty_the_join():
    # One user of 4,000 passes UpVotes >= 1,000 (STATS' community user, who owns 211 posts)
    # and the users sample does not hold them. The class must not be counted as 0 sampled
    # rows x the posts: the leaf keeps half a sampled row, the join stays near but above 0.
    from stats.sample import choose_rows

    rng = random.Random(5)
    users, sample = 4_000, 1_000
    rare = next(i for i in range(users) if i not in set(choose_rows(users, sample)))
    up_votes = [rng.randint(0, 100) for _ in range(users)]
    up_votes[rare] = 5_000
    owners = [rare + 1] * 200 + [rng.randint(1, users) for _ in range(20_000)]
    data = {"users": {"Id": list(range(1, users + 1)), "UpVotes": up_votes},
            "posts": {"Id": list(range(1, len(owners) + 1)), "OwnerUserId": owners}}
    factory = ColumnFactory()
    stats = {f"r.{t}": table_stats(f"r.{t}", cols, sample_size=sample) for t, cols in data.items()}
    s = {t: make_scan(factory, f"r.{t}", list(cols), ("Id",)) for t, cols in data.items()}
    voters = Filter(s["users"], compare("gte", col(s["users"], "UpVotes"), num(1_000)))
    on = [compare("eq", col(s["posts"], "OwnerUserId"), col(s["users"], "Id"))]
    estimate = _both_orders(Estimator(stats), s["posts"], voters, on[0])
    truth = 200 + sum(1 for u in owners[200:] if u == rare + 1)
    assert truth / 100 <= estimate <= truth, (estimate, truth)


def test_an_empty_pair_bounds_its_class_times_the_fan_out_of_the_other_members():
    # p1.OwnerUserId = u.Id = p2.LastEditorUserId = b.UserId with p1 filtered to a few posts:
    # the samples find no owner-editor pair, so the class is bounded by that pair's floor, but
    # times the badges each such pair meets (50 per user here), not by the floor alone.
    rng = random.Random(23)
    ids = list(range(1, 2_001))
    posts = 20_000
    favourite = [0] * posts
    for i in rng.sample(range(posts), 10):
        favourite[i] = 100
    data = {"users": {"Id": ids},
            "posts": {"Id": list(range(1, posts + 1)), "OwnerUserId": [rng.choice(ids) for _ in range(posts)],
                      "LastEditorUserId": [rng.choice(ids) for _ in range(posts)], "FavoriteCount": favourite},
            "badges": {"Id": list(range(1, 100_001)), "UserId": [rng.choice(ids) for _ in range(100_000)]}}
    factory = ColumnFactory()
    stats = {f"b.{t}": table_stats(f"b.{t}", cols, sample_size=2_000) for t, cols in data.items()}
    owned = make_scan(factory, "b.posts", list(data["posts"]), ("Id",))
    edited = make_scan(factory, "b.posts", list(data["posts"]), ("Id",))
    badges = make_scan(factory, "b.badges", list(data["badges"]), ("Id",))
    favourites = Filter(owned, compare("gte", col(owned, "FavoriteCount"), num(50)))
    on = [compare("eq", col(owned, "OwnerUserId"), col(edited, "LastEditorUserId")),
          compare("eq", col(badges, "UserId"), col(edited, "LastEditorUserId"))]
    estimator = Estimator(stats)
    pair = estimator.rows(Join("inner", favourites, edited, on[0]))
    three = _same_everywhere(estimator, _trees([favourites, edited, badges], on))
    editors = _counts(data["posts"]["LastEditorUserId"])
    holders = _counts(data["badges"]["UserId"])
    truth = sum(editors.get(u, 0) * holders.get(u, 0)
                for u, f in zip(data["posts"]["OwnerUserId"], favourite) if f >= 50)
    assert three >= 20 * pair, (three, pair)
    assert truth / 10 <= three <= truth * 10, (three, truth)


def test_a_foreign_key_with_all_of_an_unfiltered_key_keeps_its_own_filter_share():
    # posts (filtered to the ten busiest owners' posts) with every user: each post
    # matches its owner once, so the join keeps the filtered posts that have an owner. The
    # share measured on the posts sample alone is that; measured on the sampled tuples (posts
    # of sampled users), it swings with the few busy users the users sample holds.
    data = _skewed_users(seed=9)
    rng = random.Random(9)
    data["posts"]["Score"] = [20 if u <= 10 else rng.randint(0, 14) for u in data["posts"]["OwnerUserId"]]
    factory = ColumnFactory()
    stats = {f"k.{t}": table_stats(f"k.{t}", cols, sample_size=1_000) for t, cols in data.items()}
    users = make_scan(factory, "k.users", list(data["users"]), ("Id",))
    posts = make_scan(factory, "k.posts", list(data["posts"]), ("Id",))
    scored = Filter(posts, compare("gte", col(posts, "Score"), num(15)))
    on = [compare("eq", col(posts, "OwnerUserId"), col(users, "Id"))]
    estimate = _both_orders(Estimator(stats), scored, users, on[0])
    truth = sum(1 for s in data["posts"]["Score"] if s >= 15)
    assert 0.95 <= estimate / truth <= 1.05, (estimate, truth)


def test_pairs_found_empty_among_sampled_members_are_those_of_every_pair():
    # ``_pairs_found_empty`` measures only the pairs whose two leaves have samples (only samples
    # find a pair empty): with an empty owner-editor pair and a leaf without a sample in the
    # class, it must find what measuring every pair finds, bound for bound.
    from cbo.estimate import join_sets
    from cbo.estimate.relation import Leaf

    rng = random.Random(23)   # the data of the test above, and comments
    ids = list(range(1, 2_001))
    posts = 20_000
    favourite = [0] * posts
    for i in rng.sample(range(posts), 10):
        favourite[i] = 100
    data = {"posts": {"Id": list(range(1, posts + 1)), "OwnerUserId": [rng.choice(ids) for _ in range(posts)],
                      "LastEditorUserId": [rng.choice(ids) for _ in range(posts)], "FavoriteCount": favourite},
            "badges": {"Id": list(range(1, 100_001)), "UserId": [rng.choice(ids) for _ in range(100_000)]}}
    data["comments"] = {"Id": list(range(1, 30_001)), "UserId": [rng.choice(ids) for _ in range(30_000)]}
    factory = ColumnFactory()
    stats = {f"q.{t}": table_stats(f"q.{t}", cols, sample_size=0 if t == "comments" else 2_000)
             for t, cols in data.items()}
    owned = make_scan(factory, "q.posts", list(data["posts"]), ("Id",))
    edited = make_scan(factory, "q.posts", list(data["posts"]), ("Id",))
    badges = make_scan(factory, "q.badges", list(data["badges"]), ("Id",))
    comments = make_scan(factory, "q.comments", list(data["comments"]), ("Id",))
    favourites = Filter(owned, compare("gte", col(owned, "FavoriteCount"), num(50)))
    on = [compare("eq", col(owned, "OwnerUserId"), col(edited, "LastEditorUserId")),
          compare("eq", col(badges, "UserId"), col(edited, "LastEditorUserId")),
          compare("eq", col(comments, "UserId"), col(badges, "UserId"))]
    plan = Join("inner", Join("inner", Join("inner", favourites, edited, on[0]), badges, on[1]), comments, on[2])
    found = Estimator(stats).estimate(plan).join_set
    assert found is not None
    leaves = found.leaves
    leaf_of = {c: i for i, leaf in enumerate(leaves) for c in leaf.key}
    [members] = [m for m in join_sets._classes(leaves, found.conjuncts, leaf_of)[0] if len(m) == 4]
    assert sum(leaves[leaf_of[c]].estimate.sample is None for c in members) == 1

    def every_pair(leaves: tuple[Leaf, ...]) -> list[float]:   # the loop before the fast path
        bounds = []
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                a, b = members[x], members[y]
                if leaf_of[a] == leaf_of[b]:
                    continue
                own: list[str] = []
                selectivity = join_sets._class_selectivity((a, b), leaves, leaf_of, True, own)
                if join_sets.EMPTY_NOTE in own:
                    bound = selectivity * leaves[leaf_of[a]].estimate.rows * leaves[leaf_of[b]].estimate.rows
                    bounds.append(bound * join_sets._fan_out(members, (a, b), leaves, leaf_of))
        return bounds

    expected = every_pair(leaves)
    assert expected   # the owner-editor pair is found empty
    assert join_sets._pairs_found_empty(members, leaves, leaf_of) == expected


def _calendar(seed: int = 5):  # type: ignore[no-untyped-def]
    """A calendar of 200 years of days (a year, a month per day) and sales on five of its
    years, sampled as the collectors sample: a tenth of the calendar, a few thousand sales."""
    rng = random.Random(seed)
    days = 73_000
    first = 100 * 365    # the sales' years: 100 to 104
    calendar = {"Id": list(range(days)), "Year": [d // 365 for d in range(days)],
                "Month": [min((d % 365) // 30, 11) + 1 for d in range(days)]}
    sales = {"Id": list(range(100_000)), "DayId": [first + rng.randrange(5 * 365) for _ in range(100_000)]}
    factory = ColumnFactory()
    dates = make_scan(factory, "c.calendar", list(calendar), ("Id",))
    sold = make_scan(factory, "c.sales", list(sales), ("Id",))
    stats = {"c.calendar": table_stats("c.calendar", calendar, sample_size=7_300),
             "c.sales": table_stats("c.sales", sales, sample_size=2_000)}
    return dates, sold, sales, calendar, Estimator(stats)


def test_a_filtered_key_whose_few_sampled_keys_are_all_referenced_is_measured_in_keys():
    # One month of a 200-year calendar joined with sales of five years: the calendar's sample
    # holds three or four of the month's days, and the sales' sample one or two sales of
    # each, fewer pairs than ``MIN_SAMPLE_HITS``: the estimate fell back to independence, as
    # if the month's days were sold on as rarely as the calendar's at large (a fortieth of
    # the truth). The pairs, counted per sampled day, say the month's days are sold on.
    dates, sold, sales, calendar, estimator = _calendar()
    month = Filter(dates, compare("eq", col(dates, "Year"), num(102)))
    month = Filter(month, compare("eq", col(dates, "Month"), num(5)))
    passing = {d for d, y, m in zip(calendar["Id"], calendar["Year"], calendar["Month"]) if y == 102 and m == 5}
    truth = sum(1 for d in sales["DayId"] if d in passing)
    estimate = estimator.rows(Join("inner", sold, month, compare("eq", col(sold, "DayId"), col(dates, "Id"))))
    assert truth / 4 <= estimate <= truth * 2, (estimate, truth)
    # a month the sales do not reach keeps its independent estimate, near empty
    early = Filter(Filter(dates, compare("eq", col(dates, "Year"), num(50))),
                   compare("eq", col(dates, "Month"), num(5)))
    assert estimator.rows(Join("inner", sold, early, compare("eq", col(sold, "DayId"), col(dates, "Id")))) < 100


def test_a_leaf_joined_through_two_classes_is_checked_for_correlation_on_a_self_joined_sample():
    # Stock counted on Sundays of five years (inventory's weekly dates), d2 its day, d1 the
    # days of one year in d2's week: ``inv.DayId = d2.Id AND d2.Week = d1.Week``. d2's day and
    # week are one thing; its rows matching the stock's days are the ones whose weeks meet the
    # year's. Independence took the two classes apart (a twentieth of the truth). d2's sample
    # was not checked for that correlation because d1 reads the same sample (a row meets
    # itself with probability f, not f^2): counted so, it is.
    rng = random.Random(7)
    days = 73_000
    calendar = {"Id": list(range(days)), "Year": [d // 365 for d in range(days)], "Week": [d // 7 for d in range(days)]}
    sundays = [d for d in range(100 * 365, 105 * 365) if d % 7 == 0]
    stock = {"Id": list(range(60_000)), "DayId": [rng.choice(sundays) for _ in range(60_000)]}
    factory = ColumnFactory()
    d1 = make_scan(factory, "w.calendar", list(calendar), ("Id",))
    d2 = make_scan(factory, "w.calendar", list(calendar), ("Id",))
    inv = make_scan(factory, "w.stock", list(stock), ("Id",))
    stats = {"w.calendar": table_stats("w.calendar", calendar, sample_size=7_300),
             "w.stock": table_stats("w.stock", stock, sample_size=5_000)}
    year = Filter(d1, compare("eq", col(d1, "Year"), num(102)))
    on = [compare("eq", col(inv, "DayId"), col(d2, "Id")), compare("eq", col(d2, "Week"), col(d1, "Week"))]
    in_year = {}
    for d in range(days):
        if d // 365 == 102:
            in_year[d // 7] = in_year.get(d // 7, 0) + 1
    truth = sum(in_year.get(d // 7, 0) for d in stock["DayId"])
    estimate = _same_everywhere(Estimator(stats), _trees([inv, d2, year], on))
    assert truth / 2 <= estimate <= truth * 2, (estimate, truth)
    # The pair alone: counted on the one sample, each sampled day of the year pairs with
    # itself with probability f, not f^2 (as two foreign keys' strata counted it: 2.3 times
    # the truth).
    pair = Estimator(stats).rows(Join("inner", d2, year, on[1]))
    week_truth = sum(7 * n for n in in_year.values())
    assert week_truth / 1.2 <= pair <= week_truth * 1.2, (pair, week_truth)


def test_a_date_range_written_with_a_string_is_evaluated_on_the_sample():
    # ``d_date BETWEEN '1999-02-01' AND DATE '1999-04-02'``: the string is the date it
    # spells. Evaluated on the calendar's sample it raised (a string against dates), the leaf
    # lost its sample, and the join with five years of sales fell back to independence
    # across 200 years of days (a fiftieth of the truth).
    import datetime as dt

    from cbo.ir import types as T
    from cbo.ir.expressions import ColumnRef, Constant, SpecialForm
    from cbo.ir.operators import Scan

    rng = random.Random(11)
    start = dt.date(1900, 1, 1)
    days = 73_000
    calendar = {"Id": list(range(days)), "Day": [start + dt.timedelta(days=d) for d in range(days)]}
    first = (dt.date(1999, 1, 1) - start).days
    sales = {"Id": list(range(50_000)), "DayId": [first + rng.randrange(5 * 365) for _ in range(50_000)]}
    factory = ColumnFactory()
    key, day = factory.new("Id", T.INTEGER), factory.new("Day", T.DATE)
    dates = Scan("d.calendar", (key, day), ("Id", "Day"), ((key,),))
    sold = make_scan(factory, "d.sales", list(sales), ("Id",))
    stats = {"d.calendar": table_stats("d.calendar", calendar, sample_size=7_300),
             "d.sales": table_stats("d.sales", sales, sample_size=5_000)}
    low, high = dt.date(1999, 2, 1), dt.date(1999, 4, 2)
    between = SpecialForm("BETWEEN", (ColumnRef(day), Constant("1999-02-01", T.VARCHAR), Constant(high, T.DATE)),
                          T.BOOLEAN)
    on = compare("eq", col(sold, "DayId"), ColumnRef(key))
    truth = sum(1 for d in sales["DayId"] if low <= start + dt.timedelta(days=d) <= high)
    estimate = Estimator(stats).rows(Join("inner", sold, Filter(dates, between), on))
    assert truth / 2 <= estimate <= truth * 2, (estimate, truth)


def test_row_groups_number_rows_as_numpys_unique_rows_does():
    # Equal rows get equal numbers, in the rows' sorted order, as np.unique over rows gives
    # them; wide codes force the key's dense re-coding before a fold would overflow int64.
    import numpy as np

    from cbo.estimate.join_samples import row_groups

    rng = np.random.default_rng(7)
    for trial in range(60):
        rows = int(rng.integers(1, 400))
        width = int(rng.integers(1, 6))
        top = [int(rng.choice([2, 50, 10**6, 2**40])) for _ in range(width)]
        codes = [rng.integers(0, t, rows).astype(np.int64) for t in top]
        expected = np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)[1].reshape(-1)
        assert np.array_equal(row_groups(codes), expected), (trial, top)
