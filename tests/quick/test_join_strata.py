"""Joins through a key with skew, estimated in two strata (issue 19): the busy key values (the
foreign keys' most common values) apart from the rest; and declared foreign keys."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from cbo.estimate import Estimator
from cbo.ir.expressions import ColumnFactory, compare
from cbo.ir.operators import Filter, ForeignKeyRef, Join
from stats.from_values import table_stats
from stats.sample import RowSample
from tests.quick.test_estimator import col, make_scan, num


def _busy_editors(seed: int = 5):  # type: ignore[no-untyped-def]
    """20,000 users, 20 of them busy (500 edits each, half of them joined in 2013), the others
    editing 10,000 posts at random and joined in 2010 to 2014 alike."""
    rng = random.Random(seed)
    users = 20_000
    year = [2013 if u <= 10 else 2010 if u <= 20 else rng.randint(2010, 2014) for u in range(1, users + 1)]
    editors = [u for u in range(1, 21) for _ in range(500)] + [rng.randint(21, users) for _ in range(10_000)]
    rng.shuffle(editors)
    return {"users": {"Id": list(range(1, users + 1)), "Year": year},
            "posts": {"Id": list(range(1, len(editors) + 1)), "LastEditorUserId": editors}}


def _redrawn(stats, data, table: str, name: str, rows: list[int]):  # type: ignore[no-untyped-def]
    """``stats`` with the row sample of ``table`` (statistics ``name``) replaced by ``rows``."""
    picked = {column: [values[i] for i in rows] for column, values in data[table].items()}
    sample = RowSample(picked, {column: "number" for column in picked}, population=len(data[table]["Id"]))
    return {**stats, name: replace(stats[name], sample=sample)}


def test_busy_keys_count_their_known_rows_whatever_the_foreign_key_sample_draws():
    # posts.LastEditorUserId = users.Id, users who joined in 2013: the truth is half the busy
    # editors' 10,000 edits plus a fifth of the others'. The users sample holds every busy
    # user; the posts sample is 5 % of the posts. Their edits are known from the most common
    # values, so only the other users' share is sampled; counted on sampled pairs instead,
    # the busy users (1 % of the sampled users, half the sampled edits) weigh as if sampled
    # at the sample's rate (about 40 % over on every draw).
    data = _busy_editors()
    year = dict(zip(data["users"]["Id"], data["users"]["Year"]))
    truth = sum(1 for u in data["posts"]["LastEditorUserId"] if year[u] == 2013)
    base = {f"b.{t}": table_stats(f"b.{t}", cols, sample_size=1_000) for t, cols in data.items()}
    ratios = []
    for seed in range(6):
        rng = random.Random(seed)
        stats = _redrawn(base, data, "users", "b.users", list(range(20)) + rng.sample(range(20, 20_000), 1_980))
        stats = _redrawn(stats, data, "posts", "b.posts", rng.sample(range(20_000), 1_000))
        factory = ColumnFactory()
        users = make_scan(factory, "b.users", list(data["users"]), ("Id",))
        posts = make_scan(factory, "b.posts", list(data["posts"]), ("Id",))
        joined = Filter(users, compare("eq", col(users, "Year"), num(2013)))
        on = compare("eq", col(posts, "LastEditorUserId"), col(users, "Id"))
        ratios.append(Estimator(stats).rows(Join("inner", posts, joined, on)) / truth)
    assert all(0.85 <= r <= 1.2 for r in ratios), (ratios, truth)


def _with_answers(answers: Callable[[int], float]) -> dict:
    """The busy editors' data, each post an answer (PostTypeId 2) with its editor's chance."""
    data = _busy_editors()
    rng = random.Random(8)
    data["posts"]["PostTypeId"] = [2 if rng.random() < answers(u) else 1 for u in data["posts"]["LastEditorUserId"]]
    return data


def _answer_ratios(data: dict, truth: int, users_drawn: Callable[[random.Random], list[int]],
                   year: tuple[str, int]) -> list[float]:
    """Estimate over truth of ``posts.PostTypeId = 2`` joined on its editor with the users
    whose ``Year`` compares as ``year`` says (``("eq", 2013)``), on six draws of the samples:
    users as ``users_drawn`` picks them, a quarter of the posts."""
    base = {f"a.{t}": table_stats(f"a.{t}", cols, sample_size=1_000) for t, cols in data.items()}
    ratios = []
    for seed in range(6):
        draw = random.Random(seed)
        stats = _redrawn(base, data, "users", "a.users", users_drawn(draw))
        stats = _redrawn(stats, data, "posts", "a.posts", draw.sample(range(20_000), 5_000))
        factory = ColumnFactory()
        users = make_scan(factory, "a.users", list(data["users"]), ("Id",))
        posts = make_scan(factory, "a.posts", list(data["posts"]), ("Id",))
        passing = Filter(users, compare(year[0], col(users, "Year"), num(year[1])))
        answers = Filter(posts, compare("eq", col(posts, "PostTypeId"), num(2)))
        on = compare("eq", col(posts, "LastEditorUserId"), col(users, "Id"))
        ratios.append(Estimator(stats).rows(Join("inner", answers, passing, on)) / truth)
    return ratios


def test_the_foreign_keys_filters_keep_of_the_busy_keys_rows_what_they_keep_of_their_sampled_rows():
    # The same busy editors, each post now a question or an answer: the posts of the busy
    # editors who joined in 2013 are 90 % answers, all others' 30 %. posts.PostTypeId = 2
    # joined with the users who joined in 2013: about 4,500 busy answers and 600 others. The
    # users sample holds every busy user, as above. Scaled by the share of all sampled posts
    # that are answers (0.45), the busy stratum came out half its rows (about 0.56 of the
    # truth); the sampled posts of the busy users who pass the users' filter give their own
    # share (pooled with those who do not pass, 0.6, about 0.7).
    data = _with_answers(lambda u: 0.9 if u <= 10 else 0.3)
    year = dict(zip(data["users"]["Id"], data["users"]["Year"]))
    truth = sum(1 for u, kind in zip(data["posts"]["LastEditorUserId"], data["posts"]["PostTypeId"])
                if year[u] == 2013 and kind == 2)
    ratios = _answer_ratios(data, truth, lambda draw: list(range(20)) + draw.sample(range(20, 20_000), 3_980),
                            ("eq", 2013))
    assert all(0.85 <= r <= 1.2 for r in ratios), (ratios, truth)


def test_busy_keys_the_key_sample_lacks_keep_the_share_of_their_own_sampled_rows():
    # As above, with a users sample that holds none of the busy users and a filter every user
    # passes (Year >= 2010): the busy editors' answers are still known from the posts sample,
    # which holds about 500 of their posts. About 12,000 answers in all; scaled by the share
    # of all sampled posts (0.6), the busy stratum came out 0.75 of the truth.
    data = _with_answers(lambda u: 0.9 if u <= 20 else 0.3)
    truth = sum(1 for kind in data["posts"]["PostTypeId"] if kind == 2)
    ratios = _answer_ratios(data, truth, lambda draw: draw.sample(range(20, 20_000), 4_000),
                            ("gte", 2010))
    assert all(0.9 <= r <= 1.1 for r in ratios), (ratios, truth)


def test_a_column_not_declared_a_foreign_key_that_never_meets_the_key_is_near_empty():
    # users.Id holds the even numbers, posts.X odd ones: no post finds a user. Without a
    # declared foreign key the histograms' overlap (about 19,800 rows) is no evidence; the
    # samples never meet, and the join is near empty, filtered or not.
    rng = random.Random(4)
    data = {"users": {"Id": list(range(2, 10_001, 2))},
            "posts": {"Id": list(range(1, 20_001)), "X": [rng.randrange(1, 10_001, 2) for _ in range(20_000)]}}
    stats = {f"m.{t}": table_stats(f"m.{t}", cols, sample_size=2_000) for t, cols in data.items()}
    factory = ColumnFactory()
    users = make_scan(factory, "m.users", ["Id"], ("Id",))
    posts = make_scan(factory, "m.posts", ["Id", "X"], ("Id",))
    on = compare("eq", col(posts, "X"), col(users, "Id"))
    kept = Filter(posts, compare("gte", col(posts, "Id"), num(0)))
    for left in (posts, kept):
        assert Estimator(stats).rows(Join("inner", left, users, on)) < 100


def test_two_foreign_keys_count_the_busy_users_from_their_most_common_values():
    # posts.OwnerUserId = badges.UserId: 20 busy users own 400 posts and hold 400 badges each
    # (3.2 of the 3.23 million tuples); 400-row samples of the 20,000-row tables hold
    # about 160 of their 8,000 posts. Counted on pairs of sampled rows the estimate swings
    # with the draw; with the busy users' rows known it is within a few per cent.
    rng = random.Random(9)
    busy = [u for u in range(1, 21) for _ in range(400)]
    owners = busy + [rng.randint(21, 5_000) for _ in range(12_000)]
    holders = busy + [rng.randint(21, 5_000) for _ in range(12_000)]
    rng.shuffle(owners)
    rng.shuffle(holders)
    data = {"posts": {"Id": list(range(1, 20_001)), "OwnerUserId": owners},
            "badges": {"Id": list(range(1, 20_001)), "UserId": holders}}
    held: dict[int, int] = {}
    for u in holders:
        held[u] = held.get(u, 0) + 1
    truth = sum(held.get(u, 0) for u in owners)
    base = {f"k.{t}": table_stats(f"k.{t}", cols, sample_size=400) for t, cols in data.items()}
    ratios = []
    for seed in range(6):
        draw = random.Random(seed)
        stats = _redrawn(base, data, "posts", "k.posts", draw.sample(range(20_000), 400))
        stats = _redrawn(stats, data, "badges", "k.badges", draw.sample(range(20_000), 400))
        factory = ColumnFactory()
        scans = {t: make_scan(factory, f"k.{t}", list(cols), ("Id",)) for t, cols in data.items()}
        on = compare("eq", col(scans["badges"], "UserId"), col(scans["posts"], "OwnerUserId"))
        ratios.append(Estimator(stats).rows(Join("inner", scans["posts"], scans["badges"], on)) / truth)
    assert all(0.95 <= r <= 1.05 for r in ratios), (ratios, truth)


def test_a_declared_foreign_key_to_a_whole_table_matches_every_non_null_row():
    # posts.LastEditorUserId references users.Id, whose ids are spread thinly over a wide
    # range: a filter on posts that keeps every row keeps every edit in the join with all
    # users, exactly. The histograms, matched bucket by bucket over their domains, cannot
    # know that every edit finds its user.
    rng = random.Random(4)
    ids = sorted(rng.sample(range(1, 1_000_000), 5_000))
    data = {"users": {"Id": ids}, "posts": {"Id": list(range(1, 20_001)),
                                            "LastEditorUserId": [rng.choice(ids) for _ in range(20_000)]}}
    factory = ColumnFactory()
    stats = {f"d.{t}": table_stats(f"d.{t}", cols, sample_size=2_000) for t, cols in data.items()}
    users = make_scan(factory, "d.users", list(data["users"]), ("Id",))
    posts = make_scan(factory, "d.posts", list(data["posts"]), ("Id",))
    editor = posts.columns[posts.column_names.index("LastEditorUserId")]
    declared = replace(posts, references=(ForeignKeyRef((editor,), "d.users", ("Id",)),))
    kept = Filter(declared, compare("gte", col(declared, "Id"), num(0)))
    on = compare("eq", col(declared, "LastEditorUserId"), col(users, "Id"))
    rows = Estimator(stats).rows(Join("inner", kept, users, on))
    assert abs(rows - 20_000) < 1e-6, rows


def test_a_declared_foreign_key_matches_every_non_null_row_of_a_whole_table_unfiltered():
    # The same tables with no filter on either side: the join with all users also keeps every
    # edit. Without a filter the class was matched on the histograms alone (about 0.99 of the
    # truth, as STATS' badges with all users were).
    rng = random.Random(4)
    ids = sorted(rng.sample(range(1, 1_000_000), 5_000))
    data = {"users": {"Id": ids}, "posts": {"Id": list(range(1, 20_001)),
                                            "LastEditorUserId": [rng.choice(ids) for _ in range(20_000)]}}
    factory = ColumnFactory()
    stats = {f"d.{t}": table_stats(f"d.{t}", cols, sample_size=2_000) for t, cols in data.items()}
    users = make_scan(factory, "d.users", list(data["users"]), ("Id",))
    posts = make_scan(factory, "d.posts", list(data["posts"]), ("Id",))
    editor = posts.columns[posts.column_names.index("LastEditorUserId")]
    declared = replace(posts, references=(ForeignKeyRef((editor,), "d.users", ("Id",)),))
    on = compare("eq", col(declared, "LastEditorUserId"), col(users, "Id"))
    assert abs(Estimator(stats).rows(Join("inner", declared, users, on)) - 20_000) < 1e-6
