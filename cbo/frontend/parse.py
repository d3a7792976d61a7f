"""Parsing SQL with sqlglot; syntax errors name the line and column."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from cbo.frontend.errors import SqlError

DEFAULT_DIALECT = "trino"
DIALECTS = ("trino", "presto", "spark", "duckdb", "postgres")


def parse(sql: str, dialect: str = DEFAULT_DIALECT) -> exp.Expression:
    """Parse exactly one SELECT statement."""
    if dialect not in DIALECTS:
        raise SqlError(f"unknown SQL dialect {dialect!r} (expected one of: {', '.join(DIALECTS)})")
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        highlight = first.get("highlight") or ""
        # sqlglot reports the column where the offending token ends; show where it starts.
        column = (first.get("col") or 0) - max(len(highlight) - 1, 0)
        where = f"line {first.get('line')}, column {column}: " if first.get("line") else ""
        description = first.get("description") or str(exc)
        description = description.split("<Token")[0].split(" but got")[0].strip().rstrip(".")
        near = f" near {highlight!r}" if highlight else ""
        raise SqlError(f"syntax error: {where}{description}{near}") from None
    except TokenError as exc:
        raise SqlError(f"syntax error: {exc}") from None
    if not statements:
        raise SqlError("no SQL statement given")
    if len(statements) > 1:
        raise SqlError(f"expected one statement, got {len(statements)}")
    statement = statements[0]
    if not isinstance(statement, exp.Query):
        raise SqlError(f"only queries (SELECT ...) are supported, got {statement.key.upper()}")
    return statement
