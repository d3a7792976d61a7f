"""A seeded workload of COUNT(*) queries over the STATS data, in the spirit of STATS-CEB.

Each query joins 1 to 5 of the five tables along their foreign keys (users - badges, users -
posts by owner or last editor, posts - postLinks by post or related post, posts - tags) and
puts 0 to 2 filters on each table: equality on small-domain columns, ranges (>=, <=, BETWEEN)
on counts and timestamps, with constants drawn from the data's own values. Queries whose
answer is empty are redrawn, as STATS-CEB keeps only non-empty ones, and so are queries
DuckDB cannot count within a time limit (a few many-to-many joins through the most active
users reach 10^10 rows). The same seed and data give the same queries.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from pathlib import Path

import duckdb

from cbo.workloads.counting import TimedOut, load_tables
from cbo.workloads.counting import count as count_rows

SEED = 20261122
ALIASES = {"users": "u", "posts": "p", "badges": "b", "postLinks": "pl", "tags": "t"}
# (table a, column of a, table b, column of b) for each edge; a table pair may have several.
EDGES = {
    frozenset({"users", "badges"}): [("badges", "UserId", "users", "Id")],
    frozenset({"users", "posts"}): [("posts", "OwnerUserId", "users", "Id"),
                                    ("posts", "LastEditorUserId", "users", "Id")],
    frozenset({"posts", "postLinks"}): [("postLinks", "PostId", "posts", "Id"),
                                        ("postLinks", "RelatedPostId", "posts", "Id")],
    frozenset({"posts", "tags"}): [("tags", "ExcerptPostId", "posts", "Id")],
}
# column -> kinds of filter it takes: "eq" (small domains) or "range"
FILTERS = {
    "users": {"Reputation": "range", "CreationDate": "range", "Views": "range", "UpVotes": "range",
              "DownVotes": "range"},
    "posts": {"PostTypeId": "eq", "CreationDate": "range", "Score": "range", "ViewCount": "range",
              "AnswerCount": "eq", "CommentCount": "range", "FavoriteCount": "range"},
    "badges": {"Date": "range"},
    "postLinks": {"CreationDate": "range", "LinkTypeId": "eq"},
    "tags": {"Count": "range"},
}


@dataclass(frozen=True)
class WorkloadQuery:
    name: str
    sql: str
    tables: int


def generate(parquet_dir: Path, count: int = 200, seed: int = SEED, time_limit: float = 10.0) -> list[WorkloadQuery]:
    """``count`` queries, evenly over 1..5 tables; a query whose count takes longer than
    ``time_limit`` seconds in DuckDB is redrawn, like an empty one."""
    connection = duckdb.connect()
    load_tables(connection, {t: parquet_dir / f"{t}.parquet" for t in ALIASES})
    values = {table: {column: [v for (v,) in connection.execute(
        f'select "{column}" from "{table}" where "{column}" is not null').fetchall()]
        for column in columns} for table, columns in FILTERS.items()}
    rng = random.Random(seed)
    queries: list[WorkloadQuery] = []
    per_size = {n: 0 for n in range(1, 6)}
    target = {n: count // 5 + (1 if n <= count % 5 else 0) for n in range(1, 6)}
    while len(queries) < count:
        size = rng.choice([n for n in per_size if per_size[n] < target[n]])
        sql = _query(rng, size, values)
        try:
            found = count_rows(connection, sql, time_limit)
        except TimedOut:
            continue
        if not found:
            continue
        per_size[size] += 1
        queries.append(WorkloadQuery(f"s{len(queries) + 1:03d}", sql, size))
    connection.close()
    return queries


def _query(rng: random.Random, size: int, values: dict[str, dict[str, list]]) -> str:
    tables = _connected_tables(rng, size)
    predicates = []
    for pair, choices in EDGES.items():
        if pair <= set(tables):
            a, ca, b, cb = rng.choice(choices)
            predicates.append(f'{ALIASES[a]}."{ca}" = {ALIASES[b]}."{cb}"')
    for table in tables:
        columns = sorted(FILTERS[table])
        for column in rng.sample(columns, k=min(len(columns), rng.choice([0, 1, 1, 2]))):
            predicates.append(_filter(rng, table, column, FILTERS[table][column], values[table][column]))
    sources = ", ".join(f'"{t}" AS {ALIASES[t]}' for t in tables)
    where = f" WHERE {' AND '.join(predicates)}" if predicates else ""
    return f"SELECT COUNT(*) FROM {sources}{where}"


def _connected_tables(rng: random.Random, size: int) -> list[str]:
    neighbours: dict[str, set[str]] = {t: set() for t in ALIASES}
    for pair in EDGES:
        a, b = tuple(pair)
        neighbours[a].add(b)
        neighbours[b].add(a)
    chosen = [rng.choice(sorted(ALIASES))]
    while len(chosen) < size:
        frontier = sorted({n for t in chosen for n in neighbours[t]} - set(chosen))
        chosen.append(rng.choice(frontier))
    return chosen


def _filter(rng: random.Random, table: str, column: str, kind: str, pool: list) -> str:
    return filter_on(rng, f'{ALIASES[table]}."{column}"', kind, pool)


def filter_on(rng: random.Random, ref: str, kind: str, pool: list) -> str:
    """A filter on ``ref`` with constants drawn from the column's values ``pool``: equality on
    small domains (``kind`` "eq"), else a one-sided range or a BETWEEN (both workloads)."""
    if kind == "eq":
        return f"{ref} = {literal(rng.choice(pool))}"
    shape = rng.choice([">=", "<=", "between"])
    if shape == "between":
        low, high = sorted((rng.choice(pool), rng.choice(pool)))
        return f"{ref} BETWEEN {literal(low)} AND {literal(high)}"
    return f"{ref} {shape} {literal(rng.choice(pool))}"


def literal(value) -> str:
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    return str(int(value)) if float(value).is_integer() else repr(float(value))
