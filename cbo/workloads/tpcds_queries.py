"""The 99 TPC-DS queries, as DuckDB's ``tpcds`` extension (DuckDB 1.4.4) gives them.

They are written in DuckDB's dialect (``DIALECT``): cbo reads them with ``dialect="duckdb"``
(``cbo query --dialect duckdb``). The files in ``tpcds_sql/`` are the extension's text,
unchanged; ``tpcds_sql/README.md`` says how to regenerate them. The API is TPC-H's
(``cbo.workloads.tpch_queries``): ``all_queries`` and ``select``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from cbo.workloads.tpch_queries import Query

QUERY_DIR = Path(__file__).with_name("tpcds_sql")
DIALECT = "duckdb"


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
            raise ValueError(f"unknown TPC-DS query {name!r} (expected q1 .. q99)")
        chosen.append(by_number[int(digits)])
    return tuple(chosen)
