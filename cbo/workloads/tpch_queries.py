"""The 22 TPC-H queries with the specification's validation parameters.

They are written in one dialect that Spark SQL, DuckDB and PostgreSQL all run: the view of
Q15 is a CTE, substrings use ``substring(s, start, length)``, and ORDER BY ... LIMIT queries
whose ordering has ties carry a tie-breaker so every engine returns the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from cbo.errors import CboError

QUERY_DIR = Path(__file__).with_name("tpch_sql")
DIALECT = "trino"   # how cbo reads them (its default), as tpcds_queries.DIALECT says for TPC-DS


@dataclass(frozen=True)
class Query:
    name: str   # "q01"
    sql: str

    @property
    def number(self) -> int:
        return int(self.name[1:])


@cache
def all_queries() -> tuple[Query, ...]:
    return tuple(Query(path.stem, path.read_text()) for path in sorted(QUERY_DIR.glob("q*.sql")))


def select(names: list[str] | None) -> tuple[Query, ...]:
    """Queries by name ('q1', 'q01', '1'); all when ``names`` is empty."""
    queries = all_queries()
    if not names:
        return queries
    by_number = {q.number: q for q in queries}
    chosen = []
    for name in names:
        digits = name.lower().lstrip("q")
        if not digits.isdigit() or int(digits) not in by_number:
            raise CboError(f"unknown TPC-H query {name!r} (expected q1 .. q22)")
        chosen.append(by_number[int(digits)])
    return tuple(chosen)
