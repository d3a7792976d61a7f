"""A second seeded STATS workload, built to check estimates tuned on the first (``stats_queries``).

Where the first joins random connected table sets along one foreign key per table pair, this one
draws from templates of 0 to 3 joins whose foreign keys meet at a shared key, the shape that
defeats pairwise estimation:

* posts and badges through users (``p.OwnerUserId = u.Id AND b.UserId = u.Id``, or the last
  editor), and the two foreign keys joined directly (``b.UserId = p.OwnerUserId``);
* postLinks through posts twice (``pl.PostId = p1.Id AND pl.RelatedPostId = p2.Id``);
* posts owned and posts last edited by the same users; tags' excerpt posts with their owners.

Constants come from heavy and light users alike: a user-side filter takes its constant from one
of the 50 users who own most posts half of the time, from any user otherwise, so that filters
keep either the few very active users or the long tail. Other filters are drawn as in the first
workload (data values, equality on small domains, ranges elsewhere). Empty queries and queries
DuckDB cannot count within the time limit are redrawn. The same seed and data give the same
queries.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import duckdb

from cbo.workloads.counting import TimedOut, load_tables
from cbo.workloads.counting import count as count_rows
from cbo.workloads.stats_queries import FILTERS, WorkloadQuery, filter_on, literal

SEED = 20261123
TABLES = ("users", "posts", "badges", "postLinks", "tags")
HEAVY_USERS = 50
USER_COLUMNS = ("Reputation", "Views", "UpVotes", "DownVotes", "CreationDate")

# A template: aliases -> table, and its join conditions (alternatives drawn per query).
Template = tuple[dict[str, str], list[list[str]]]
TEMPLATES: dict[int, list[Template]] = {
    0: [({"u": "users"}, []), ({"p": "posts"}, []), ({"b": "badges"}, [])],
    1: [({"p": "posts", "u": "users"}, [['p."OwnerUserId" = u."Id"', 'p."LastEditorUserId" = u."Id"']]),
        ({"b": "badges", "u": "users"}, [['b."UserId" = u."Id"']]),
        ({"b": "badges", "p": "posts"}, [['b."UserId" = p."OwnerUserId"', 'b."UserId" = p."LastEditorUserId"']]),
        ({"pl": "postLinks", "p1": "posts"}, [['pl."PostId" = p1."Id"', 'pl."RelatedPostId" = p1."Id"']])],
    2: [({"p": "posts", "u": "users", "b": "badges"},
         [['p."OwnerUserId" = u."Id"', 'p."LastEditorUserId" = u."Id"'], ['b."UserId" = u."Id"']]),
        ({"pl": "postLinks", "p1": "posts", "p2": "posts"},
         [['pl."PostId" = p1."Id"'], ['pl."RelatedPostId" = p2."Id"']]),
        ({"p1": "posts", "u": "users", "p2": "posts"},
         [['p1."OwnerUserId" = u."Id"'], ['p2."LastEditorUserId" = u."Id"']]),
        ({"t": "tags", "p": "posts", "u": "users"}, [['t."ExcerptPostId" = p."Id"'], ['p."OwnerUserId" = u."Id"']]),
        ({"pl": "postLinks", "p1": "posts", "u": "users"},
         [['pl."PostId" = p1."Id"', 'pl."RelatedPostId" = p1."Id"'], ['p1."OwnerUserId" = u."Id"']])],
    3: [({"pl": "postLinks", "p1": "posts", "u": "users", "b": "badges"},
         [['pl."PostId" = p1."Id"', 'pl."RelatedPostId" = p1."Id"'], ['p1."OwnerUserId" = u."Id"'],
          ['b."UserId" = u."Id"']]),
        ({"pl": "postLinks", "p1": "posts", "p2": "posts", "u": "users"},
         [['pl."PostId" = p1."Id"'], ['pl."RelatedPostId" = p2."Id"'],
          ['p1."OwnerUserId" = u."Id"', 'p2."OwnerUserId" = u."Id"']]),
        ({"t": "tags", "p": "posts", "u": "users", "b": "badges"},
         [['t."ExcerptPostId" = p."Id"'], ['p."OwnerUserId" = u."Id"'], ['b."UserId" = u."Id"']]),
        ({"p1": "posts", "u": "users", "p2": "posts", "b": "badges"},
         [['p1."OwnerUserId" = u."Id"'], ['p2."LastEditorUserId" = u."Id"'], ['b."UserId" = u."Id"']])],
}


def generate(parquet_dir: Path, count: int = 200, seed: int = SEED, time_limit: float = 10.0) -> list[WorkloadQuery]:
    """``count`` queries, evenly over 0..3 joins; empty or too slow queries are redrawn."""
    connection = duckdb.connect()
    load_tables(connection, {t: parquet_dir / f"{t}.parquet" for t in TABLES})
    values = {table: {column: [v for (v,) in connection.execute(
        f'select "{column}" from "{table}" where "{column}" is not null').fetchall()]
        for column in columns} for table, columns in FILTERS.items()}
    heavy = [row for row in connection.execute(
        f'select u.* from users u join (select "OwnerUserId" as id, count(*) as n from posts '
        f'where "OwnerUserId" is not null group by 1 order by n desc, id limit {HEAVY_USERS}) h on u."Id" = h.id '
        f'order by u."Id"').fetchall()]
    everyone = connection.execute('select * from users order by "Id"').fetchall()
    names = [d[0] for d in connection.execute("select * from users limit 0").description]
    rng = random.Random(seed)
    queries: list[WorkloadQuery] = []
    per_size = {n: 0 for n in TEMPLATES}
    target = {n: count // len(TEMPLATES) + (1 if n < count % len(TEMPLATES) else 0) for n in TEMPLATES}

    def user_value(column: str) -> object:
        pool = heavy if rng.random() < 0.5 else everyone
        position = names.index(column)
        choices = [row[position] for row in pool if row[position] is not None]
        return rng.choice(choices)

    while len(queries) < count:
        joins = rng.choice([n for n in per_size if per_size[n] < target[n]])
        sql = _query(rng, rng.choice(TEMPLATES[joins]), values, user_value)
        try:
            found = count_rows(connection, sql, time_limit)
        except TimedOut:
            continue
        if not found:
            continue
        per_size[joins] += 1
        queries.append(WorkloadQuery(f"t{len(queries) + 1:03d}", sql, joins + 1))
    connection.close()
    return queries


def _query(rng: random.Random, template: Template, values: dict[str, dict[str, list]],
           user_value: Callable[[str], object]) -> str:
    aliases, conditions = template
    predicates = [rng.choice(choices) for choices in conditions]
    for alias, table in aliases.items():
        wanted = rng.choice([0, 1, 1, 2]) if len(aliases) > 1 else rng.choice([1, 2])
        if table == "users":
            for column in rng.sample(USER_COLUMNS, k=wanted):
                predicates.append(_range(rng, f'{alias}."{column}"', user_value(column)))
            continue
        columns = sorted(FILTERS[table])
        for column in rng.sample(columns, k=min(len(columns), wanted)):
            predicates.append(filter_on(rng, f'{alias}."{column}"', FILTERS[table][column], values[table][column]))
    sources = ", ".join(f'"{table}" AS {alias}' for alias, table in aliases.items())
    where = f" WHERE {' AND '.join(predicates)}" if predicates else ""
    return f"SELECT COUNT(*) FROM {sources}{where}"


def _range(rng: random.Random, ref: str, value: object) -> str:
    """A user's value as a bound: at least it (the user and the busier), or at most it."""
    return f"{ref} {rng.choice(['>=', '>=', '<='])} {literal(value)}"
